"""The run's timeline and totals in the UI (Pilot and SVG snapshots at 80×24 and 160×40).

`T` on the browse screen opens the timeline: a row per model and tool call, a bar where it ran, its duration
and tokens, the slowest three marked; enter goes back to browse at that call's step. The run header shows
the same totals `blackbox inspect` prints.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox.cli.inspecting import totals_lines
from blackbox.format.lazy import load_lazy
from blackbox.format.timeline import timeline
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.screens.timeline import TimelineScreen
from blackbox_tui.widgets.run_header import RunHeader
from blackbox_tui.widgets.timeline_chart import TimelineChart
from tests.tui.conftest import CHILD, INCIDENT, make_app, settle
from tests.tui.test_snapshots import steady
from tests.tui.timed import write_timed

pytestmark = pytest.mark.anyio
WIDE = (160, 40)


@pytest.fixture
def timed(tmp_path: Path) -> Path:
    return write_timed(tmp_path / "timed-research.json")


def _rows(chart: TimelineChart) -> list[str]:
    return ["".join(segment.text for segment in chart.render_row(row, 100)) for row in range(chart.row_count)]


async def test_the_header_shows_the_totals_inspect_prints(timed: Path) -> None:
    app = make_app(timed)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        header = str(app.screen.query_one(RunHeader).render())
        assert "tokens 40,950 in · 1,010 out  ·  model 12.8 s  ·  tools 6.4 s  ·  wall 19.4 s" in header
    printed = totals_lines(timeline(load_lazy(timed).steps).totals)
    assert printed[0].endswith("in 40,950 (cache read 27,000, cache write 1,600) · out 1,010 (reasoning 320)")


async def test_a_run_without_counts_says_so_and_times_its_calls() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        header = str(app.screen.query_one(RunHeader).render())
        assert "tokens not recorded  ·  model 1.4 s  ·  tools 1.4 s  ·  wall 9.4 s" in header


async def test_a_run_with_nothing_to_tell_has_no_totals_line() -> None:
    app = make_app(CHILD)  # the demo's fixed clock: every step at 0, no counts
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        header = str(app.screen.query_one(RunHeader).render())
        assert len(header.splitlines()) == 3 and "tokens" not in header


async def test_t_opens_the_timeline_marks_the_slowest_and_enter_goes_to_the_step(timed: Path) -> None:
    app = make_app(timed)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press("T")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        chart = screen.query_one(TimelineChart)
        rows = _rows(chart)
        assert len(rows) == 8  # four model calls, four tool calls
        assert [row[1:].split()[:2] for row in rows[:3]] == [["0", "model"], ["2", "tool"], ["4", "tool"]]
        slow = [row for row in rows if row.startswith("!")]
        assert [row[1:].split()[0] for row in slow] == ["6", "8", "14"]  # 6.5 s, 4.0 s, 3.05 s: the three slowest
        assert "6.5 s" in rows[3] and "12.4k→310" in rows[3]
        assert "1,850→96" in rows[0]  # a count under 10,000 in full
        await pilot.press("s")  # slowest first
        assert _rows(chart)[0][1:].split()[0] == "6"
        await pilot.press("down", "enter")  # the second slowest: summarize, step 8
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        assert app.screen.table.step_index == 8


async def test_escape_comes_back_where_browse_was(timed: Path) -> None:
    app = make_app(timed)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "T")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen) and app.screen.table.step_index == 2


def test_timeline_80x24(snap_compare, timed: Path) -> None:
    assert snap_compare(make_app(timed), terminal_size=(80, 24), run_before=steady("T"))


def test_timeline_wide(snap_compare, timed: Path) -> None:
    assert snap_compare(make_app(timed), terminal_size=WIDE, run_before=steady("T", "s"))


def test_browse_with_totals_80x24(snap_compare, timed: Path) -> None:
    assert snap_compare(make_app(timed), terminal_size=(80, 24), run_before=steady("j"))


async def test_the_cursor_stays_in_view_when_the_header_grows_above_the_list() -> None:
    """The totals line can appear while a run is shown (a followed recording's first timed steps): the step
    list shrinks under it and must keep its cursor row on screen."""
    app = make_app(INCIDENT)
    async with app.run_test(size=(80, 16)) as pilot:
        await settle(pilot)
        await pilot.press("G")
        await settle(pilot)
        table = app.screen.table
        app.screen.query_one(RunHeader).styles.height = 7  # three lines more than it had
        await settle(pilot)
        assert table.scroll_y <= table.cursor < table.scroll_y + table.size.height
