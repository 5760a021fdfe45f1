"""A large cassette opens with its first steps and is read in the background (Pilot, the real app and index).

The size threshold and the chunk sizes are lowered so a few-MB synthetic run takes the large-file path in many
batches; a gate holds the background reading where a test needs to look at the state in between.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.widgets import Static

import blackbox_tui.run as run_module
from blackbox.format.lazy import load_lazy
from blackbox_tui.app import BlackboxApp
from blackbox_tui.run import Run
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.screens.diff import DiffScreen
from blackbox_tui.widgets.run_header import RunHeader
from tests.tui.conftest import SIZE, settle
from tests.tui.synthetic import synthetic_cassette, write_synthetic

pytestmark = pytest.mark.anyio

SIZE_IN_STEPS = 2_000
STEPS = len(synthetic_cassette(SIZE_IN_STEPS, trace_id="big").steps)  # the generator rounds to whole rounds


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_module, "PROGRESSIVE_FROM", 1)
    monkeypatch.setattr(run_module, "FIRST_CHUNK", 16 << 10)  # a few steps before the first paint
    monkeypatch.setattr(run_module, "CHUNK", 256 << 10)  # then about a dozen batches


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_synthetic(tmp_path_factory.mktemp("big") / "big.json", SIZE_IN_STEPS, trace_id="big")


class Gate:
    """Holds every run's background reading until `open()` (or for good, with a timeout, if never opened)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.event = threading.Event()
        original = Run.read_rest

        def held(run: Run, deliver: Callable[..., bool], cancelled: Callable[[], bool]) -> None:
            while not self.event.wait(0.05):
                if cancelled() or run.closed.is_set():
                    return
            original(run, deliver, cancelled)

        monkeypatch.setattr(Run, "read_rest", held)

    def open(self) -> None:
        self.event.set()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate(monkeypatch)
    yield held
    held.open()


def text(screen: BrowseScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def browse(app: BlackboxApp) -> BrowseScreen:
    screen = app.screen
    assert isinstance(screen, BrowseScreen)
    return screen


async def test_the_first_steps_are_shown_at_once_and_the_rest_arrive(big: Path, gate: Gate) -> None:
    run = Run.open(big)
    first = len(run)
    assert 0 < first < STEPS and run.loading is not None
    app = BlackboxApp([run])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = browse(app)
        header = str(screen.query_one(RunHeader).render())
        assert f"{first} steps so far  ·  reading… " in header
        assert "outcome known once the whole file is read" in header
        assert "reading the file: " in text(screen, "#status")
        assert screen.table.row_count == first
        gate.open()
        await settle(pilot)
        assert len(run) == STEPS == screen.table.row_count
        header = str(screen.query_one(RunHeader).render())
        assert f"{STEPS:,} steps  ·  chain intact" in header
        assert "outcome success" in header
        assert "reading" not in text(screen, "#status")
    whole = load_lazy(big)
    assert [s.hash for s in run.steps.lazy] == [s.hash for s in whole.steps]
    assert run.steps[STEPS - 1] == whole.steps[-1].decoded()


async def test_G_while_reading_follows_the_end_until_the_last_step(big: Path, gate: Gate) -> None:
    app = BlackboxApp([Run.open(big)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = browse(app)
        await pilot.press("G")
        assert screen.table.step_index == len(screen.run) - 1 < STEPS - 1
        gate.open()
        await settle(pilot)
        assert screen.table.step_index == STEPS - 1
        assert f"step {STEPS - 1} ({STEPS} of {STEPS})" in text(screen, "#status")


async def test_moving_off_the_end_stops_following_it(big: Path, gate: Gate) -> None:
    app = BlackboxApp([Run.open(big)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = browse(app)
        await pilot.press("G", "up")
        stay = screen.table.step_index
        gate.open()
        await settle(pilot)
        assert screen.table.step_index == stay


async def test_a_search_started_while_reading_finds_the_steps_read_later(big: Path, gate: Gate) -> None:
    app = BlackboxApp([Run.open(big)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = browse(app)
        screen.search("Summarised")  # only the final answer says so, at the very end
        await pilot.pause(0.2)
        assert screen.matches == []
        assert "(searching…)" in text(screen, "#status")
        gate.open()
        await settle(pilot)
        assert screen.matches and min(screen.matches) >= STEPS - 2  # the answer and the run's end
        assert screen.table.step_index == screen.matches[0]
        assert "(searching…)" not in text(screen, "#status")


async def test_a_filter_set_while_reading_takes_in_the_steps_read_later(big: Path, gate: Gate) -> None:
    app = BlackboxApp([Run.open(big)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = browse(app)
        screen.apply_filter("errors")
        shown_early = screen.table.row_count
        gate.open()
        await settle(pilot)
        errors = screen.run.indices("errors")
        assert len(errors) > shown_early
        assert list(screen.table.indices) == errors
        screen.apply_filter("type:tool_result")
        assert list(screen.table.indices) == screen.run.indices("type", "tool_result")


async def test_a_file_cut_short_keeps_what_was_read_and_says_why(tmp_path: Path, big: Path) -> None:
    cut = tmp_path / "cut.json"
    data = big.read_bytes()
    cut.write_bytes(data[: len(data) * 3 // 4])
    run = Run.open(cut)
    app = BlackboxApp([run])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = browse(app)
        assert run.problem.startswith(f"{cut}: not JSON: the file ends early")
        assert 0 < len(run) < STEPS and screen.table.row_count == len(run)
        banner = text(screen, "#chain-banner")
        assert screen.has_class("-broken") and f"The file cannot be read from step {len(run)} on: " in banner
        assert "The steps before it are shown." in banner and "changed after it was recorded" not in banner
        assert f"unreadable from step {len(run)}" in str(screen.query_one(RunHeader).render())
        whole = big.read_bytes()
        complete = whole[: len(whole) * 3 // 4].count(b'\n    }')  # every step whole before the cut is kept
        assert len(run) == complete
        await pilot.press("G")
        assert screen.table.step_index == len(run) - 1


async def test_a_file_the_index_leaves_to_the_whole_file_loader_is_shown_whole(tmp_path: Path, big: Path) -> None:
    odd = tmp_path / "odd.json"
    data = big.read_bytes()
    late = data.rindex(b'"index": 1500,')
    odd.write_bytes(data[:late] + b'"index": 1500.0,' + data[late + len(b'"index": 1500,'):])  # load converts it
    run = Run.open(odd)
    assert run.loading is not None  # the first steps are ordinary
    app = BlackboxApp([run])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = browse(app)
        assert len(run) == STEPS == screen.table.row_count and run.generation == 1
        assert run.problem == ""
        assert "chain intact" in str(screen.query_one(RunHeader).render())


async def test_the_diff_of_two_large_files_waits_for_both(tmp_path: Path, big: Path, gate: Gate) -> None:
    at = next(i for i, s in enumerate(load_lazy(big).steps) if i > STEPS // 2 and s.type == "tool_result")
    fork = write_synthetic(tmp_path / "fork.json", SIZE_IN_STEPS, trace_id="big", change_at=at)
    a, b = Run.open(big), Run.open(fork)
    app = BlackboxApp([a, b], diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen) and app.screen.comparison is None
        gate.open()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        assert screen.comparison is not None
        assert screen.comparison.first_divergence == at
        assert screen.table.row_count == STEPS


async def test_quitting_while_reading_stops_the_background_work(big: Path, gate: Gate) -> None:
    run = Run.open(big)
    app = BlackboxApp([run])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("q")
    assert run.closed.is_set()
    assert run.loading is not None and len(run) < STEPS  # never read further
    assert run.check_chain() is None and not run.chain_checked  # a closed run checks nothing


def test_a_closed_run_stops_its_chain_check_part_way(big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = Run.open(big)
    run.read_rest(lambda change: change() is None, lambda: False)
    assert len(run) == STEPS
    seen: list[int] = []
    original = run_module.chain_break

    def watched(steps: object, on_step: Callable[..., None]) -> object:
        def step(s: object, data: bytes) -> None:
            seen.append(1)
            if len(seen) == 10:
                run.close()
            on_step(s, data)
        return original(steps, on_step=step)  # type: ignore[arg-type]

    monkeypatch.setattr(run_module, "chain_break", watched)
    assert run.check_chain() is None
    assert len(seen) == 10 and not run.chain_checked


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=["120x36", "80x24"])
def test_snapshot_while_reading(snap_compare: Callable[..., bool], big: Path, gate: Gate,
                                size: tuple[int, int]) -> None:
    """The header and status line while the rest of the file is still being read."""
    async def run_before(pilot: object) -> None:
        await pilot.pause()  # type: ignore[attr-defined]

    assert snap_compare(BlackboxApp([Run.open(big)]), terminal_size=size, run_before=run_before)
