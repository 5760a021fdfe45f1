"""The UI's view of `blackbox.diff`: rows per step index, the first divergence, the verdict, field changes."""

from __future__ import annotations

from typing import Any

import msgspec
from blackbox_tui.run import Run

__all__ = ["Comparison", "compare", "field_changes"]

ROW_KINDS = ("same", "changed", "only_a", "only_b")


class Comparison(msgspec.Struct, frozen=True):
    """What the diff screen shows: one kind per step index, where the runs part, and the §9 verdict."""

    rows: tuple[str, ...]
    first_divergence: int | None
    verdict: str
    semantic: bool

    @property
    def differing(self) -> list[int]:
        return [i for i, kind in enumerate(self.rows) if kind != "same"]


def compare(a: Run, b: Run, *, semantic: bool) -> Comparison:
    """Run blackbox's diff (hash or semantic) and keep what the screen needs."""
    from blackbox.diff import diff

    report = diff(a.cassette, b.cassette, semantic=semantic)
    first = report.first_divergence
    index = getattr(first, "index", first)
    return Comparison(
        rows=tuple(str(getattr(row, "status", row)) for row in report.rows),
        first_divergence=index if isinstance(index, int) else None,
        verdict=str(report.verdict.text),
        semantic=semantic,
    )


def field_changes(a: Run, b: Run, index: int, limit: int | None = None) -> list[Any]:
    """The changed fields (`path`, `old`, `new`) between step `index` of both runs."""
    from blackbox.diff import step_changes

    return list(step_changes(a.steps[index], b.steps[index], limit=limit))
