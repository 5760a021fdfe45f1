"""`tui --follow` on the browse screen: each look at the journal applied to the step list.

New steps are appended (the cursor on the last row stays on the last), steps shown ahead of their turn or for
a tool still running are replaced when the recorder chains them, the running ones are marked, and when the
recording ends the written cassette replaces them all (or, if none was written, the journal's steps stay)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from blackbox.format.inert import inert

from ..notice import say

if TYPE_CHECKING:
    from .browse import BrowseScreen

__all__ = ["follow_tick", "following_status"]


def follow_tick(screen: BrowseScreen) -> None:
    """Apply what the recording wrote since the last look."""
    follower = screen.follower
    if follower is None:
        return
    update = follower.poll()
    table, run = screen.table, screen.run
    if update.steps or update.drop:
        at_end = table.cursor >= table.row_count - 1
        before = len(run)
        run.append(update.steps, drop=update.drop)
        table._index_width = max(table._index_width, len(str(len(run) - 1)))
        if not screen.filter_label:
            table.indices = range(len(run))
        else:  # a filter keeps its rows, less the steps that were replaced, plus the new ones it admits
            kind, _, value = screen._filter_choice.partition(":")
            start = before - update.drop
            table.indices = [i for i in table.indices if i < start] + run.indices(kind, value, start=start)
        table.rows_changed(table.row_count - 1 if at_end else min(table.cursor, max(table.row_count - 1, 0)))
        screen.rows_changed()  # the header too: it is bound to the screen's state
        screen._check_chain()
        screen._show_detail()
    if table.running != follower.running:
        table.running = follower.running
        table.refresh()
    if follower.finished:
        screen.follower = None
        if update.final:
            say(screen.app, f"The recording ended: {inert(str(follower.out))} written; showing it.")
        else:
            say(screen.app, f"The recording ended: {inert(str(follower.out))} not written (see the agent's "
                "output); showing the steps its journal held.")
    screen.following = following_status(screen)


def following_status(screen: BrowseScreen) -> str | None:
    """The status line's part about the recording followed, or None."""
    follower = screen.follower
    if follower is None:
        return None
    running = len(screen.table.running)
    tools = f" · {running} tool{'s' if running != 1 else ''} running" if running else ""
    problem = f" — {inert(follower.problem)}" if follower.problem else ""
    return f"following {inert(follower.journal.name)} (live){tools}{problem}"
