"""Two runs side by side, one row per step index: A's step, a mark (same / changed / one side), B's step.

Both columns live in one line-rendered table, so they can never scroll out of step with each other.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style

from ..diffing import Classifier, Comparison
from ..run import Run
from .line_table import LineTable
from .step_table import TYPE_WIDTH

__all__ = ["MARKS", "DiffTable"]

MARKS = {"same": " = ", "changed": " ≠ ", "only_a": " ◀ ", "only_b": " ▶ ", "edited": " ✎ ", "carry": " ≈ ",
         "hash_only": " ≈ "}


class DiffTable(LineTable):
    """Row i is step i of both runs; `comparison` says which rows differ."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-table--same",
        "diff-table--changed",
        "diff-table--only_a",
        "diff-table--only_b",
        "diff-table--divider",
        "diff-table--edited",
        "diff-table--carry",
        "diff-table--hash_only",
    }

    DEFAULT_CSS = """
    DiffTable {
        & > .diff-table--same { color: $text-muted; }
        & > .diff-table--changed { color: $text-warning; text-style: bold; }
        & > .diff-table--only_a { color: $text-error; }
        & > .diff-table--only_b { color: $text-success; }
        & > .diff-table--divider { color: $panel-lighten-2; }
        & > .diff-table--edited { color: $text-accent; text-style: bold; }
        & > .diff-table--carry { color: $text-muted; text-style: italic; }
        & > .diff-table--hash_only { color: $text-muted; text-style: italic; }
    }
    """

    def __init__(self, a: Run, b: Run, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.a = a
        self.b = b
        self.comparison: Comparison | None = None
        self.classifier: Classifier | None = None
        self._index_width = len(str(max(len(a), len(b), 1) - 1))

    @property
    def row_count(self) -> int:
        return max(len(self.a), len(self.b))

    def kind(self, row: int) -> str:
        """same / changed / only_a / only_b, and for changed rows why: edited, carry, hash_only or changed."""
        if self.classifier is not None:
            return str(self.classifier.kind(row))
        rows = self.comparison.rows if self.comparison else ()
        return rows[row] if row < len(rows) else "same"

    def column_layout(self, width: int) -> tuple[int, int, int]:
        """(where A's column starts, where B's starts, the width of each)."""
        index_width = self._index_width + 1
        side = max(10, (width - index_width - len(MARKS["same"]) - 1) // 2)
        return index_width, index_width + side + len(MARKS["same"]) + 1, side

    def render_row(self, row: int, width: int) -> list[Segment]:
        kind = self.kind(row) if self.comparison else "same"
        mark_style = self.style_of(f"diff-table--{kind}")
        muted = self.style_of("line-table--muted")
        index_text = f" {row:>{self._index_width}}"
        _, _, side = self.column_layout(width)
        mark = MARKS[kind] if self.comparison else " … "
        return [
            Segment(index_text, muted),
            *self._side(self.a, row, side, kind),
            Segment(mark, mark_style),
            Segment("│", self.style_of("diff-table--divider")),
            *self._side(self.b, row, side, kind),
        ]

    def _side(self, run: Run, row: int, width: int, kind: str) -> list[Segment]:
        if row >= len(run):
            return [Segment(" " * width, self.rich_style)]
        step = run.steps[row]
        style: Style = self.style_of("line-table--muted" if kind == "same" else f"diff-table--{kind}")
        text = f" {step.type:<{TYPE_WIDTH}}{run.summary(row)}"
        text = set_cell_size(text, width - 1) + "…" if cell_len(text) > width else set_cell_size(text, width)
        return [Segment(text, style)]
