"""The bursty messages coalesce: a burst queued while the UI thread is busy is handled once, by its latest."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widget import Widget

from blackbox_tui.messages import ChainChecked, FollowTick, ProgressTick, RowMoved, RunGrew, SearchProgress
from blackbox_tui.run import Run
from blackbox_tui.widgets.line_table import LineTable
from tests.tui.conftest import INCIDENT, PARENT

pytestmark = pytest.mark.anyio


class Counter(Widget):
    """Counts what reaches it; keeps the last of each kind."""

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[Message] = []

    def hear(self, message: Message) -> None:
        self.heard.append(message)

    on_chain_checked = on_progress_tick = on_follow_tick = on_row_moved = on_run_grew = on_search_progress = hear


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Counter()


async def burst(messages: list[Message]) -> list[Message]:
    """Post `messages` at once (nothing runs in between, as when the UI thread is busy); what was handled."""
    app = Host()
    async with app.run_test() as pilot:
        counter = app.query_one(Counter)
        await pilot.pause()
        for message in messages:
            counter.post_message(message)
        await pilot.pause()
        return counter.heard


async def test_a_burst_of_ticks_or_run_changes_is_handled_once() -> None:
    run, other = Run.open(INCIDENT), Run.open(PARENT)
    assert len(await burst([ProgressTick() for _ in range(50)])) == 1
    assert len(await burst([FollowTick() for _ in range(50)])) == 1
    heard = await burst([RunGrew(run) for _ in range(20)] + [RunGrew(other)])
    assert [m.run for m in heard] == [run, other]  # a change of another run is not swallowed


async def test_search_progress_keeps_the_latest_and_every_end() -> None:
    reports = [SearchProgress("van", list(range(n)), done=False) for n in range(1, 30)]
    heard = await burst([*reports, SearchProgress("van", list(range(40)), done=True),
                         SearchProgress("other", [1], done=True)])
    assert [(m.needle, len(m.found), m.done) for m in heard] == [("van", 40, True), ("other", 1, True)]


async def test_row_moves_of_one_table_coalesce_not_of_two() -> None:
    a, b = LineTable(), LineTable()
    heard = await burst([RowMoved(a, row) for row in range(30)] + [RowMoved(b, 3)])
    assert [(m.table, m.row) for m in heard] == [(a, 29), (b, 3)]


async def test_a_message_that_must_not_coalesce_does_not() -> None:
    assert len(await burst([ChainChecked() for _ in range(5)])) == 5
