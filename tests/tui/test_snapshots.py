"""SVG snapshots of every screen at 120×36 (pytest-textual-snapshot); update with `--snapshot-update`.

Everything shown is deterministic: fixture timestamps in UTC, generated cassettes with fixed times, no
toasts, no blinking cursors.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from tests.conftest import FIXTURES
from tests.tui.conftest import CHILD, HYPOTHESIS, INCIDENT, PARENT, SIZE, make_app, settle

REPO = FIXTURES.parent.parent


def steady(*keys: str) -> Callable[[Pilot[object]], Awaitable[None]]:
    """Wait for the workers, press `keys`, wait again, and stop every cursor from blinking."""

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        if keys:
            await pilot.press(*keys)
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        for widget in pilot.app.screen.query("TextArea, Input"):
            if isinstance(widget, TextArea | Input):
                widget.cursor_blink = False
            if isinstance(widget, TextArea):
                # A TextArea's line cache keys the cursor only while it blinks: a cursor line drawn in a blink's
                # dark phase (under load the first one comes before the snapshot) would be reused without the
                # cursor. Dropping the cache redraws it as it stands now, cursor on.
                widget.notify_style_update()
                widget.refresh()
        await pilot.pause()

    return run_before


@pytest.fixture(autouse=True)
def repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths are shown relative to the working directory: make it the same everywhere."""
    monkeypatch.chdir(REPO)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
def test_browse(snap_compare, theme: str) -> None:
    app = make_app(INCIDENT, theme=theme)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("j", "j", "j", "j", "j"))


def test_browse_conversation(snap_compare) -> None:
    app = make_app(INCIDENT)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("G", "k", "k", "2"))


def test_browse_tampered(snap_compare, tampered: Path) -> None:
    app = make_app(tampered)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("j", "j", "j", "j", "j", "3"))


def test_browse_large(snap_compare, large_cassette: Path) -> None:
    app = make_app(large_cassette)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("G", "pageup", "e"))


def test_browse_filtered_search(snap_compare) -> None:
    app = make_app(INCIDENT)

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        pilot.app.screen.apply_filter("type:tool_result")
        pilot.app.screen.search("VAN-14")
        await steady()(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_diff_fork(snap_compare) -> None:
    app = make_app(PARENT, CHILD, diff=True)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady())


def test_diff_recordings(snap_compare) -> None:
    app = make_app(INCIDENT, HYPOTHESIS, diff=True, theme="textual-light")
    assert snap_compare(app, terminal_size=SIZE, run_before=steady())


def test_fork_screen(snap_compare) -> None:
    app = make_app(INCIDENT)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("j", "j", "j", "j", "j", "f"))


def test_help(snap_compare) -> None:
    app = make_app(PARENT)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("question_mark"))


# -- the second pass: escape sequences, small terminals, the what-if fork --------------------------------------


@pytest.fixture
def escapes(tmp_path: Path) -> Path:
    from blackbox.format.cassette import save
    from tests.tui.synthetic import escape_cassette

    path = tmp_path / "escapes.json"
    save(escape_cassette(), path)
    return path


def test_escape_sequences_render_inert(snap_compare, escapes: Path) -> None:
    app = make_app(escapes)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("2"))


def test_search_highlights_only_the_match(snap_compare) -> None:
    app = make_app(INCIDENT, theme="textual-light")

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        pilot.app.screen.search("VAN-14")
        await steady()(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
def test_fork_screen_small(snap_compare, size: tuple[int, int]) -> None:
    app = make_app(INCIDENT)
    assert snap_compare(app, terminal_size=size, run_before=steady("j", "j", "j", "j", "j", "f"))


def test_browse_80x24(snap_compare) -> None:
    app = make_app(INCIDENT)
    assert snap_compare(app, terminal_size=(80, 24), run_before=steady("j", "j", "j", "j", "j"))


def test_diff_80x24(snap_compare) -> None:
    app = make_app(PARENT, CHILD, diff=True)
    assert snap_compare(app, terminal_size=(80, 24), run_before=steady())


# -- every screen at 80×24: outcome lines, whole footers, the fork's output path, JSON wrapped under itself ----

SMALL = (80, 24)


def test_diff_recordings_80x24(snap_compare) -> None:
    app = make_app(INCIDENT, HYPOTHESIS, diff=True)
    assert snap_compare(app, terminal_size=SMALL, run_before=steady())


def test_both_values_80x24(snap_compare) -> None:
    app = make_app(INCIDENT, HYPOTHESIS, diff=True)
    assert snap_compare(app, terminal_size=SMALL, run_before=steady("v"))


def test_help_80x24(snap_compare) -> None:
    app = make_app(INCIDENT)
    assert snap_compare(app, terminal_size=SMALL, run_before=steady("question_mark"))


def test_diff_tampered_80x24(snap_compare, tampered: Path) -> None:
    app = make_app(INCIDENT, tampered, diff=True)
    assert snap_compare(app, terminal_size=SMALL, run_before=steady())


def test_browse_tampered_80x24(snap_compare, tampered: Path) -> None:
    app = make_app(tampered)
    assert snap_compare(app, terminal_size=SMALL, run_before=steady("j", "j", "j", "j", "j"))


def test_tool_question_80x24(snap_compare) -> None:
    from blackbox_tui.screens.tool_answer import ToolResultPrompt

    app = make_app(INCIDENT)

    async def run_before(pilot: Pilot[object]) -> None:
        await steady()(pilot)
        await pilot.app.push_screen(ToolResultPrompt("get_service_history",
                                                     {"vehicle_id": "VAN-99", "since": "2026-01-01"}))
        await steady()(pilot)

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
