"""The browse screen's status line: where the cursor is, the reading, the recording followed, the filter and the
search, drawn from reactive attributes the screen binds (`data_bind`), so no change has to ask for a redraw."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from blackbox.format.inert import inert

__all__ = ["StatusLine", "match_position"]


def match_position(matches: Sequence[int], rows: Sequence[int], step: int | None) -> str:
    """`match 3 of 12` when the cursor is on a match, else how many there are (n / N move between them)."""
    kept = rows if isinstance(rows, range) else frozenset(rows)
    shown = [i for i in matches if i in kept]
    if not shown:
        return "no match" + (" in the steps shown" if matches else "")
    if step is not None and step in frozenset(matches):
        return f"match {shown.index(step) + 1} of {len(shown)}" if step in kept else f"{len(shown)} matches"
    return f"{len(shown)} match{'es' if len(shown) != 1 else ''} (n: next, N: previous)"


class StatusLine(Static):
    """One line; every attribute is reactive and bound to the screen's attribute of the same name."""

    step: reactive[int | None] = reactive(None)  # the step under the cursor (once it rests)
    total: reactive[int] = reactive(0)  # the run's steps (so far)
    rows: reactive[Sequence[int]] = reactive(range(0))  # the steps shown (the filter's)
    reading: reactive[float | None] = reactive(None)  # how much of a large file is read, while it is read
    following: reactive[str | None] = reactive(None)  # the part about the recording followed
    filter_label: reactive[str] = reactive("")
    query_text: reactive[str] = reactive("")
    matches: reactive[list[int]] = reactive(list)
    searching: reactive[bool] = reactive(False)

    def render(self) -> RenderResult:
        step = self.step
        # steps are named by their index, 0-based as in the cassette and the CLI; the position counts from 1
        parts = [f"step {step} ({step + 1} of {self.total})" if step is not None else "no steps shown"]
        if self.reading is not None:
            parts.append(f"reading the file: {self.reading:.0%}")
        if self.following is not None:
            parts.append(self.following)
        if self.filter_label:
            parts.append(f"filter: {inert(self.filter_label)} ({len(self.rows)} shown)")
        if self.query_text:
            matches = self.matches
            if self.searching:  # numbers would shift as matches before the cursor are found
                found = f"{len(matches)} match{'es' if len(matches) != 1 else ''} so far" if matches else "none yet"
                parts.append(f'search "{inert(self.query_text)}": {found} (searching…)')
            else:
                parts.append(f'search "{inert(self.query_text)}": {match_position(matches, self.rows, step)}')
        return Content("  ·  ".join(parts))
