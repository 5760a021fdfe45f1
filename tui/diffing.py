"""The UI's view of `blackbox.format.diff`: rows per step index, the first divergence, the verdict, field changes."""

from __future__ import annotations

import difflib
import re
import time
from typing import TYPE_CHECKING

import msgspec

from .run import Run

if TYPE_CHECKING:
    from blackbox.format.firstdiff import Difference

__all__ = ["KIND_TEXT", "Classifier", "Comparison", "agents_of", "classify", "compare", "field_changes",
           "word_changes"]

class Comparison(msgspec.Struct, frozen=True):
    """What the diff screen shows: one kind per step index, where the runs part, and the outcome verdict."""

    rows: tuple[str, ...]
    first_divergence: int | None
    verdict: str
    semantic: bool
    agents: bool = False  # compared by what each step did, across coding agents

    @property
    def differing(self) -> list[int]:
        return [i for i, kind in enumerate(self.rows) if kind != "same"]


def compare(a: Run, b: Run, *, semantic: bool, agents: bool = False) -> Comparison:
    """blackbox's diff (hash, semantic or across agents), keeping what the screen needs.

    By hash, rows come from the stored hashes without decoding a payload, and the verdict from each run's
    outcome; the other comparisons need every payload, so they run the full diff."""
    from blackbox.format.diff import compare_rows, diff, verdict_of

    if semantic or agents:
        report = diff(a.decoded(), b.decoded(), semantic=semantic and not agents, agents=agents)
        return Comparison(rows=tuple(report.rows), first_divergence=report.first_divergence,
                          verdict=report.verdict.text, semantic=report.semantic, agents=agents)
    la, lb = a.steps.lazy, b.steps.lazy
    rows, first = compare_rows(len(la), len(lb), lambda i: la[i].hash == lb[i].hash)
    return Comparison(rows=tuple(rows), first_divergence=first, verdict=verdict_of(a.outcome, b.outcome).text,
                      semantic=False)


def agents_of(a: Run, b: Run) -> tuple[str | None, str | None]:
    """The coding agent each run was imported from (None for a recording), read from its first steps."""
    from blackbox.format.agentview import agent_of

    return agent_of(a.steps[:1]) if len(a) else None, agent_of(b.steps[:1]) if len(b) else None


def field_changes(a: Run, b: Run, index: int, limit: int | None = None) -> list[Difference]:
    """The changed fields (`path`, `old`, `new`) between step `index` of both runs (type first)."""
    from blackbox.format.diff import step_changes

    a_step = a.steps[index] if index < len(a) else None
    b_step = b.steps[index] if index < len(b) else None
    return step_changes(a_step, b_step, limit=limit)


# -- why it diverged: the edit, the steps that only carry it, and where behaviour changed ----------------------

SCAN_BUDGET = 1.0  # seconds the diff may spend looking for the first behavioural divergence
_CARRIED = re.compile(r"^messages\[\d+\]\.content\[\d+\]\.(result|error)(?=[.\[]|$)")
KIND_TEXT = {
    "edited": "the changed value itself (the fork point)",
    "carry": "carries the change: only the edited value in its history differs",
    "hash_only": "same payload, different hash: an earlier step or the time differs",
    "changed": "behaviour changed here",
}


def classify(a: Run, b: Run, index: int, *, first: int | None) -> str:
    """For a row whose steps differ: `edited` (the fork point's new value), `hash_only` (equal payloads),
    `carry` (a request whose only difference is that value inside its history) or `changed` (the model or a
    tool did something else)."""
    la, lb = a.steps.lazy[index], b.steps.lazy[index]
    if la.type == lb.type and bytes(la.payload) == bytes(lb.payload):  # the same JSON text: no need to decode
        return "hash_only"
    changes = field_changes(a, b, index)
    if not changes:
        return "hash_only"
    a_step, b_step = a.steps[index], b.steps[index]
    if a_step.type != b_step.type:
        return "changed"
    paths = [change.path for change in changes]
    if index == first and a_step.type == "tool_result" and all(re.match(r"^(result|error)(?=[.\[]|$)", p)
                                                                for p in paths):
        return "edited"
    if a_step.type == "model_input" and all(_CARRIED.match(p) for p in paths):
        return "carry"
    return "changed"


class Classifier:
    """`classify`, cached per row; `first_behavioural` scans from the first divergence (off the UI thread)."""

    def __init__(self, a: Run, b: Run, comparison: Comparison) -> None:
        self.a, self.b, self.comparison = a, b, comparison
        self._kinds: dict[int, str] = {}
        self.scanned_to = -1
        self.complete = True  # False when `first_behavioural` ran out of time before it found one

    def kind(self, row: int) -> str:
        base = self.comparison.rows[row] if row < len(self.comparison.rows) else "same"
        if base != "changed":
            return base
        found = self._kinds.get(row)
        if found is None:
            found = self._kinds[row] = classify(self.a, self.b, row, first=self.comparison.first_divergence)
        return found

    def first_behavioural(self, budget: float = SCAN_BUDGET) -> int | None:
        """The first row where one run did something the other did not (or one run ended), or None.

        Stops looking after `budget` seconds (`scanned_to` says how far it got): a long run whose every later
        request carries the change would otherwise decode the whole of both files."""
        deadline = time.monotonic() + budget
        for row in self.comparison.differing:
            if self.kind(row) in ("changed", "only_a", "only_b"):
                return row
            self.scanned_to = row
            if time.monotonic() > deadline:
                self.complete = False
                return None
        return None


def word_changes(old: str, new: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both strings as (piece, changed) runs, compared word by word, for highlighting inside long text."""
    a, b = re.split(r"(\s+)", old), re.split(r"(\s+)", new)
    left: list[tuple[str, bool]] = []
    right: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        left.append(("".join(a[i1:i2]), tag != "equal"))
        right.append(("".join(b[j1:j2]), tag != "equal"))
    return [p for p in left if p[0]], [p for p in right if p[0]]
