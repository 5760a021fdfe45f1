"""The UI's view of `blackbox.diff`: rows per step index, the first divergence, the verdict, field changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from blackbox_tui.run import Run

if TYPE_CHECKING:
    from blackbox.diff import FieldChange

__all__ = ["Comparison", "compare", "field_changes"]

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
    """blackbox's diff (hash or semantic), keeping what the screen needs.

    By hash, rows come from the stored hashes without decoding a payload, and the verdict from each run's
    outcome; a semantic comparison needs every payload, so it runs the full diff."""
    from blackbox.diff import compare_rows, diff, verdict_of

    if semantic:
        report = diff(a.decoded(), b.decoded(), semantic=True)
        return Comparison(rows=tuple(report.rows), first_divergence=report.first_divergence,
                          verdict=report.verdict.text, semantic=True)
    la, lb = a.steps.lazy, b.steps.lazy
    rows, first = compare_rows(len(la), len(lb), lambda i: la[i].hash == lb[i].hash)
    return Comparison(rows=tuple(rows), first_divergence=first, verdict=verdict_of(a.outcome, b.outcome).text,
                      semantic=False)


def field_changes(a: Run, b: Run, index: int, limit: int | None = None) -> list[FieldChange]:
    """The changed fields (`path`, `old`, `new`) between step `index` of both runs (type first)."""
    from blackbox.diff import step_changes

    a_step = a.steps[index] if index < len(a) else None
    b_step = b.steps[index] if index < len(b) else None
    return step_changes(a_step, b_step, limit=limit)
