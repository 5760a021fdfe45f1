"""The step list of the browse screen: index, type and one-line summary, coloured by type.

Line-rendered (see LineTable), so opening or scrolling a 10,000-step cassette costs only the visible rows;
summaries come from `Run.summary`, computed when a row is first drawn.  Tool steps that answer a model
output are drawn as its children (├─ / └─).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style

from ..run import Run, is_error_result
from .line_table import KEEP_STYLE, LineTable

__all__ = ["StepTable"]

TYPE_WIDTH = 13
RUNNING = " · running…"  # after the call of a tool that has not returned yet (`tui --follow`)


class StepTable(LineTable):
    """Rows are steps of one run, possibly filtered; the cursor is a row, `step_index` a step."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "step-table--model_input",
        "step-table--model_output",
        "step-table--tool_call",
        "step-table--tool_result",
        "step-table--metadata",
        "step-table--error",
        "step-table--match",
    }

    DEFAULT_CSS = """
    StepTable {
        & > .step-table--model_input { color: $text-primary; }
        & > .step-table--model_output { color: $text-accent; }
        & > .step-table--tool_call { color: $text-warning; }
        & > .step-table--tool_result { color: $text-success; }
        & > .step-table--metadata { color: $text-secondary; }
        & > .step-table--error { color: $text-error; text-style: bold; }
        & > .step-table--match { background: $warning; color: black; text-style: bold; }
    }
    """

    def __init__(self, run: Run, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run = run
        self.indices: Sequence[int] = range(len(run))
        self.marked: frozenset[int] = frozenset()
        self.running: frozenset[int] = frozenset()  # steps of tools a followed recording is still running
        self.needle = ""
        self._index_width = len(str(max(len(run) - 1, 0)))

    @property
    def row_count(self) -> int:
        return len(self.indices)

    @property
    def step_index(self) -> int | None:
        """The step under the cursor (None when the filter leaves no rows)."""
        return self.indices[self.cursor] if self.indices else None

    def show(self, indices: Sequence[int], keep: int | None = None) -> None:
        """Show only these steps; keep the cursor on step `keep` if it is still shown."""
        self.indices = indices
        row = 0
        if keep is not None:
            row = _position(indices, keep)
        self.rows_changed(row)

    def mark(self, steps: frozenset[int], needle: str = "") -> None:
        """Mark the rows of these steps (search matches) and highlight `needle` where the summary holds it."""
        self.marked = steps
        self.needle = needle.lower()
        self.refresh()

    def go_to_step(self, index: int, *, center: bool = False) -> bool:
        """Move the cursor to a step if it is shown; False when the filter hides it."""
        row = _position(self.indices, index, exact=True)
        if row < 0:
            return False
        self.move_to(row, center=center)
        return True

    def render_row(self, row: int, width: int) -> list[Segment]:
        index = self.indices[row]
        step = self.run.steps[index]
        kind = "error" if is_error_result(step) else step.type  # this step's view: no pass over the others
        colour = self.style_of(f"step-table--{kind}")
        muted = self.style_of("line-table--muted")
        marked = index in self.marked
        broken = self.run.chain if self.run.chain_checked else None  # never hashed here: checked in a thread
        if broken is not None and broken.index == index and not marked:
            mark = Segment("✗", self.style_of("step-table--error"))  # the step whose hash does not hold
        else:
            mark = Segment("›" if marked else " ", self.style_of("step-table--match") if marked else muted)
        lead = [
            mark,
            Segment(f"{index:>{self._index_width}}  ", muted),
            Segment(f"{step.type:<{TYPE_WIDTH}}", colour),
            Segment(self.run.nesting(index), muted),
        ]
        room = width - sum(cell_len(segment.text) for segment in lead)
        summary = self.run.summary(index) + (RUNNING if index in self.running else "")
        if cell_len(summary) > room > 1:
            summary = set_cell_size(summary, room - 1) + "…"
        if marked and self.needle:
            match = self.style_of("step-table--match") + KEEP_STYLE
            return lead + _highlighted(summary, self.needle, colour, match)
        return [*lead, Segment(summary, colour)]


def _highlighted(text: str, needle: str, style: Style, match: Style) -> list[Segment]:
    """`text` in `style`, with each case-insensitive occurrence of `needle` (and nothing else) in `match`."""
    segments: list[Segment] = []
    lowered = text.lower()
    at = 0
    while (found := lowered.find(needle, at)) != -1:
        segments += [Segment(text[at:found], style), Segment(text[found:found + len(needle)], match)]
        at = found + len(needle)
    segments.append(Segment(text[at:], style))
    return segments


def _position(indices: Sequence[int], index: int, *, exact: bool = False) -> int:
    """Where step `index` sits in the shown rows (or the row just before it; -1 if `exact` and absent)."""
    if isinstance(indices, range):
        if index in indices:
            return index - indices.start
        return -1 if exact else 0
    row = bisect.bisect_left(indices, index)
    if row < len(indices) and indices[row] == index:
        return row
    return -1 if exact else max(0, min(row, len(indices) - 1))
