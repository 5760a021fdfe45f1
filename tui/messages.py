"""Every message the UI's parts send each other, in one place; the bursty ones coalesce (`can_replace`), so a
queue that fills while the UI thread is busy is drained in one step, not one redraw per message."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from .run import Run
    from .widgets.json_editor import JsonEditor
    from .widgets.line_table import LineTable

__all__ = ["ChainChecked", "FollowTick", "JsonValidated", "ProgressTick", "RowMoved", "RunChanged", "RunGrew",
           "SearchClosed", "SearchProgress", "SweepTick", "TotalsAdded"]


class RowMoved(Message):
    """A table's cursor moved to another row (holding a key sends a burst: only the last row matters)."""

    def __init__(self, table: LineTable, row: int) -> None:
        super().__init__()
        self.table = table
        self.row = row

    @property
    def control(self) -> LineTable:
        return self.table

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RowMoved) and message.table is self.table


class JsonValidated(Message):
    """A JSON editor's text changed; `problem` says what is wrong with it, or is None."""

    def __init__(self, editor: JsonEditor, problem: str | None) -> None:
        super().__init__()
        self.editor = editor
        self.problem = problem

    @property
    def control(self) -> JsonEditor:
        return self.editor

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, JsonValidated) and message.editor is self.editor


class RunChanged(Message):
    """A run read in the background changed (`change`, applied on the UI thread, says how).  Never coalesced:
    every change is applied, in order."""

    def __init__(self, run: Run, change: Callable[[], None]) -> None:
        super().__init__()
        self.run = run
        self.change = change


class RunGrew(Message):
    """Sent to each screen once a change of `run` is applied: the latest of a burst stands for all of them."""

    bubble = False

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunGrew) and message.run is self.run


class ChainChecked(Message):
    """The background check of the run's hash chain is done."""


class TotalsAdded(Message):
    """The run header's totals (the run's timeline) were added up off the UI thread."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TotalsAdded)


class SearchProgress(Message):
    """The matches a search for `needle` has found so far (each report holds all of them, so a later one
    replaces an earlier one of the same search)."""

    def __init__(self, needle: str, found: list[int], *, done: bool) -> None:
        super().__init__()
        self.needle = needle
        self.found = found
        self.done = done

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SearchProgress) and message.needle == self.needle and not self.done


class SearchClosed(Message):
    """The search box was closed without searching (escape)."""


class ProgressTick(Message):
    """Time to show how far the reading and the chain check have got."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ProgressTick)


class FollowTick(Message):
    """Time to look at the followed recording's journal again."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FollowTick)


class SweepTick(Message):
    """Time to look whether the sweep's manifest changed (a sweep still running rewrites it per branch)."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SweepTick)
