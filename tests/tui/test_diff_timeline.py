"""`T` on the diff screen, the screen `blackbox tui --demo` opens on: run A's timeline (B's on a row only B
has); enter comes back to the diff at the call's step, escape where the diff was (Pilot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox_tui.app import BlackboxApp, load_runs
from blackbox_tui.screens.diff import DiffScreen
from blackbox_tui.screens.help import help_content
from blackbox_tui.screens.timeline import TimelineScreen
from blackbox_tui.widgets.timeline_chart import TimelineChart
from tests.tui.conftest import SIZE, settle

pytestmark = pytest.mark.anyio


async def test_t_on_the_demos_first_screen_opens_run_as_timeline_and_enter_goes_to_the_step(tmp_path: Path) -> None:
    from blackbox.demo import demo_pair

    app = BlackboxApp(load_runs(list(demo_pair(tmp_path))), diff=True, demo=True)  # as `blackbox tui --demo`
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        help_text = str(help_content(diff))  # not in the footer (80 columns hold no more): in help and the palette
        assert "T" in help_text and "Timeline — Each model and tool call over time" in help_text
        assert "in a diff: run A's, B's on a row only B has" in help_text
        diff.table.move_to(1)
        await pilot.press("T")
        await settle(pilot)
        timeline = app.screen
        assert isinstance(timeline, TimelineScreen) and timeline.run is diff.a
        chart = timeline.query_one(TimelineChart)
        await pilot.press("down", "down")
        step = chart.span.start_step if chart.span is not None else None
        assert step is not None and step > 1
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is diff and diff.table.cursor == step
        await pilot.press("T")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is diff and diff.table.cursor == step
