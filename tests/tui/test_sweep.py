"""`blackbox tui SWEEP-FOLDER/`: the pass-rate table, the branches by verdict (failures first), the filter, a
branch opened beside the parent in the diff at its first divergence, a running sweep's manifest read again as it
changes, and every file that cannot be read said in one line on the screen."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from textual.widgets import OptionList, Static

from blackbox.many.folder import MANIFEST, read_sweep, write_sweep
from blackbox_tui.app import BlackboxApp
from blackbox_tui.screens.diff import DiffScreen
from blackbox_tui.screens.sweep import SweepScreen
from blackbox_tui.widgets.branch_list import BranchList
from blackbox_tui.widgets.pass_rates import PassRates
from tests.tui.conftest import SIZE, settle
from tests.waiting import pilot_until

pytestmark = pytest.mark.anyio

SMALL = (80, 24)


@pytest.fixture
def sweep(sweep_made: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sweep_made, tmp_path / "coolant"))


def shown(widget: Any) -> str:
    """A widget's lines as drawn on the screen (what a person reads)."""
    return "\n".join(strip.text for strip in widget.render_lines(widget.region.reset_offset))


def status(screen: SweepScreen) -> str:
    return str(screen.query_one("#sweep-status", Static).render())


def listed(screen: SweepScreen) -> list[tuple[str | None, str, int]]:
    return [(b.verdict, b.variant, b.repeat) for b in screen.table.branches]


async def test_the_pass_rate_table_and_the_branches_failures_first(sweep: Path) -> None:
    app = BlackboxApp([], sweep=sweep)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        table = shown(screen.query_one(PassRates))
        # 2 of 3 recorded runs passed: 67%, Wilson 95% 21%–94%; 1 of 3 with no hotels; 0 of the 2 finished timeouts
        rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()[1:]}
        assert rows["baseline"][:5] == ["3", "2", "67%", "21%–94%", "5"]
        assert rows["no-hotels"][:4] == ["3", "1", "33%", "6%–79%"]
        assert rows["search-timeout"][:4] == ["2", "0", "0%", "0%–66%"]
        assert "$0.0299" in rows["baseline"] and "8.4k→315" in rows["baseline"]
        assert "the run's own variance" in table and "within the run's own" in table  # the report's labels
        for header in ("runs", "passed", "rate", "95% interval", "1st div", "outc.≠", "tokens", "time", "cost"):
            assert header in table.splitlines()[0]
        assert listed(screen) == [
            ("fail", "baseline", 2), ("fail", "no-hotels", 0), ("fail", "no-hotels", 2), ("fail", "search-timeout", 1),
            ("error", "search-timeout", 0),
            ("pass", "baseline", 0), ("pass", "baseline", 1), ("pass", "no-hotels", 1),
            (None, "search-timeout", 2)]
        lines = shown(screen.table).splitlines()
        assert lines[0].startswith(" ✗ fail  baseline #3") and "tools: expected search,calendar,booking" in lines[0]
        assert lines[4].startswith(" ! error search-timeout #1") and "429 three times" in lines[4]
        assert lines[8].startswith(" … todo  search-timeout #3") and "not finished" in lines[8]
        # the status line says what the cursor's variant's rate means against the baseline (the report's words)
        assert status(screen) == "baseline: the run's own variance: flap rate 33%"
        screen.table.move_to(1)
        await settle(pilot)
        assert status(screen) == "no-hotels: within the run's own variance (nondeterminism)"
        header = str(screen.query_one("#sweep-header", Static).render())
        assert "8 of 9 branches done: 4 fail, 1 error, 3 pass  ·  1 not finished (running, or stopped)" in header
        assert "3 variants × 3 at step 3 of runs/example-trace.json (script)" in header


async def test_enter_opens_the_branch_beside_the_parent_at_its_first_divergence(sweep: Path) -> None:
    manifest = read_sweep(sweep)
    app = BlackboxApp([], sweep=sweep)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        sweep_screen = app.screen
        await pilot.press("j", "enter")  # the second failure: no hotels, repeat 1
        await pilot_until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff")
        await settle(pilot)
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        branch = next(b for b in manifest.branches if (b.variant, b.repeat) == ("no-hotels", 0))
        assert diff.a.path == sweep / "parent.json" and diff.b.path == sweep / branch.file
        assert branch.divergence is not None
        assert diff.table.cursor == branch.divergence == diff.first_behavioural
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is sweep_screen and listed(sweep_screen)[sweep_screen.table.cursor][1:] == ("no-hotels", 0)


async def test_the_filter_shows_one_verdict_and_escape_all_again(sweep: Path) -> None:
    app = BlackboxApp([], sweep=sweep)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("t")
        await settle(pilot)
        options = app.screen.query_one(OptionList)
        choices = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert choices == ["All branches (9)", "Failed a check (4)", "Could not run (1)", "Passed (3)",
                           "Not finished yet (1)"]
        await pilot.press("down", "down", "down", "enter")
        await settle(pilot)
        assert app.screen is screen
        assert listed(screen) == [("pass", "baseline", 0), ("pass", "baseline", 1), ("pass", "no-hotels", 1)]
        assert "showing: passed" in status(screen)
        await pilot.press("escape")
        await settle(pilot)
        assert len(listed(screen)) == 9


async def test_a_branch_with_no_file_or_a_missing_or_broken_one_is_one_line(sweep: Path) -> None:
    (sweep / "branches" / "no-hotels-0.json").unlink()
    (sweep / "branches" / "no-hotels-2.json").write_text('{"version": 2, "id": "x", "steps": [', encoding="utf-8")
    app = BlackboxApp([], sweep=sweep)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.screen
        said = {}
        for row in (1, 2, 4, 8):  # missing, not JSON, could not run, not finished
            screen.table.move_to(row)
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen is screen
            said[row] = status(screen)
            assert screen.query_one("#sweep-status", Static).has_class("-problem")
            assert "\n" not in said[row] and "Traceback" not in said[row]
        assert said[1] == f"no-hotels #1: {sweep / 'branches' / 'no-hotels-0.json'} is missing (moved or deleted?); " \
                          "the other branches still open"
        assert said[2].startswith("no-hotels #3: ") and "no-hotels-2.json" in said[2]
        assert said[4].startswith("search-timeout #1 could not run, so it has no cassette: the provider answered 429")
        assert said[8].startswith("search-timeout #3 has no cassette yet")
        await pilot.press("k")  # a problem said of one branch is not said of the next
        await settle(pilot)
        assert not screen.query_one("#sweep-status", Static).has_class("-problem")


async def test_a_missing_parent_is_one_line(sweep: Path) -> None:
    (sweep / "parent.json").unlink()
    app = BlackboxApp([], sweep=sweep)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SweepScreen)
        assert status(app.screen).startswith("the parent: ") and "parent.json" in status(app.screen)


@pytest.mark.parametrize(("text", "says"), [
    (b'{"settings": ', "sweep.json: not JSON (truncated?); run the sweep again to rewrite it"),
    (b'{"kind": "something-else"}', "not a Blackbox sweep's manifest"),
    (b'{"kind": "blackbox-sweep", "version": 1, "settings": {}}', "run the sweep again to rewrite it"),
])
async def test_a_broken_manifest_is_one_line_and_r_reads_it_again(sweep: Path, text: bytes, says: str) -> None:
    good = (sweep / MANIFEST).read_bytes()
    (sweep / MANIFEST).write_bytes(text)
    app = BlackboxApp([], sweep=sweep)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SweepScreen) and screen.has_class("-problem")
        problem = str(screen.query_one("#sweep-problem", Static).render())
        assert says in problem and problem.count("\n") <= 1  # one line (wrapped at 80 columns at most once)
        assert listed(screen) == []
        (sweep / MANIFEST).write_bytes(good)
        await pilot.press("r")
        await settle(pilot)
        assert not screen.has_class("-problem") and len(listed(screen)) == 9


async def test_a_running_sweep_s_branches_arrive_as_its_manifest_is_rewritten(sweep: Path) -> None:
    """The sweep writes its manifest again after each branch: the screen looks at it (no key pressed) and keeps
    its cursor on the branch it was on."""
    app = BlackboxApp([], sweep=sweep)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.table.move_to(5)  # baseline #1, a pass
        manifest = read_sweep(sweep)
        last = manifest.branches[-1]
        done = msgspec.structs.replace(last, verdict="fail", failed=["status: expected success, found incomplete"])
        write_sweep(sweep, msgspec.structs.replace(manifest, branches=[*manifest.branches[:-1], done]))
        await pilot_until(pilot, lambda: (None, "search-timeout", 2) not in listed(screen), "the new verdict")
        assert listed(screen)[4] == ("fail", "search-timeout", 2)
        assert listed(screen)[screen.table.cursor] == ("pass", "baseline", 0)
        header = str(screen.query_one("#sweep-header", Static).render())
        assert "9 of 9 branches done: 5 fail, 1 error, 3 pass  ·  finished" in header


async def test_text_from_the_manifest_is_inert(sweep: Path) -> None:
    manifest = read_sweep(sweep)
    evil = "\x1b]0;owned\x07\x1b[31mred"
    variants = [msgspec.structs.replace(v, name=v.name + evil) for v in manifest.variants]
    branches = [msgspec.structs.replace(b, variant=b.variant + evil, failed=[evil + f for f in b.failed],
                                        error=None if b.error is None else evil + b.error) for b in manifest.branches]
    settings = msgspec.structs.replace(manifest.settings, source="runs/\x1b[2Jrun.json")
    write_sweep(sweep, msgspec.structs.replace(manifest, variants=variants, branches=branches, settings=settings))
    app = BlackboxApp([], sweep=sweep)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        drawn = "\n".join(shown(widget) for widget in (screen.query_one("#sweep-header", Static),
                                                       screen.query_one(PassRates), screen.query_one(BranchList)))
        assert "\x1b" not in drawn and "\x07" not in drawn
        assert "␛[31mred" in drawn and len(listed(screen)) == 9  # shown, as text
        for row in range(9):  # the status line says each branch's variant's label with its name
            screen.table.move_to(row)
            await settle(pilot)
            assert "\x1b" not in status(screen)


def test_the_tui_command_opens_a_sweep_folder_alone(sweep: Path, tmp_path: Path) -> None:
    """The command tells a sweep's folder (it holds sweep.json) from a folder of cassettes, and opens it alone."""
    from typer.testing import CliRunner

    from blackbox.cli import app as cli

    other = sweep / "parent.json"
    result = CliRunner().invoke(cli, ["tui", str(sweep), str(other)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {sweep}: is a sweep's folder; open it alone (blackbox tui {sweep})"
    (tmp_path / "plain").mkdir()
    result = CliRunner().invoke(cli, ["tui", str(tmp_path / "plain")])
    assert result.exit_code == 2 and "not a cassette file nor a sweep's folder (no sweep.json)" in result.stderr


async def test_a_folder_the_sweep_command_wrote(tmp_path: Path) -> None:
    """`blackbox sweep` (the real command, scripted) writes the folder; the screen shows what its report says and
    opens each of its branches beside the parent."""
    import json
    import subprocess
    import sys

    from blackbox.demo import demo_pair

    parent, _ = demo_pair(tmp_path / "demo")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "No hotels, so nothing was booked."}]))
    out = tmp_path / "sweep"
    done = subprocess.run([sys.executable, "-m", "blackbox", "sweep", str(parent), "--at", "3", "--set",
                           '{"results": []}', "--repeat", "2", "--script", str(script), "--out", str(out),
                           "--expect-tools", "search,calendar,booking", "--json"],
                          capture_output=True, text=True, check=False)
    report = json.loads(done.stdout)
    assert done.returncode in (0, 1), done.stderr
    app = BlackboxApp([], sweep=out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SweepScreen) and not screen.has_class("-problem")
        table = shown(screen.query_one(PassRates)).splitlines()
        for variant, line in zip(report["variants"], table[1:], strict=True):
            assert line.split()[:4] == [variant["variant"], str(variant["runs"]), str(variant["passed"]),
                                        f"{variant['rate']:.0%}"]
        assert sorted(listed(screen), key=str) == sorted(((b["verdict"], b["variant"], b["repeat"])
                                                          for b in report["branches"]), key=str)
        await pilot.press("enter")
        await pilot_until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff")
        await settle(pilot)
        first = screen.table.branches[0]
        assert app.screen.b.path == out / first.file and app.screen.table.cursor == first.divergence
