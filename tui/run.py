"""A loaded cassette as the UI sees it: lazily computed summaries, tool-round nesting, search and JSON text.

Everything here is cheap per step and computed on demand, so a 10,000-step cassette opens at once; the
hash-chain check (which hashes every step) runs once, off the UI thread, through `check_chain`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from blackbox.cassette import Cassette, ChainBreak, Step, chain_break, load, pretty_json
from blackbox.outcome import Outcome, outcome, summarize_step

__all__ = ["Run", "format_time", "pretty_json", "tool_name"]


def compact_json(value: Any) -> str:
    return pretty_json(value, indent=0)


def format_time(ms: int) -> str:
    """A millisecond timestamp in UTC (never local time: the same file must look the same everywhere)."""
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d} UTC"


def tool_name(step: Step) -> str | None:
    """The tool a step is about (tool_call / tool_result), or None."""
    payload = step.payload
    if step.type in ("tool_call", "tool_result") and isinstance(payload, dict):
        name = payload.get("toolName")
        return name if isinstance(name, str) else None
    return None


def is_error_result(step: Step) -> bool:
    return step.type == "tool_result" and isinstance(step.payload, dict) and "error" in step.payload


_UNCHECKED = object()


class Run:
    """One cassette open in the UI; summaries, nesting and the chain state are cached on first use."""

    def __init__(self, cassette: Cassette, path: Path | None = None) -> None:
        self.cassette = cassette
        self.path = path
        self.steps = cassette.steps
        self._summaries: list[str | None] = [None] * len(self.steps)
        self._nesting: list[str] | None = None
        self._outcome: Outcome | None = None
        self._chain: Any = _UNCHECKED

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Run:
        """Load a cassette file (structure only; `CassetteError` with one clear line if it cannot be read)."""
        return cls(load(path), Path(path))

    @property
    def name(self) -> str:
        return self.path.name if self.path else self.cassette.id

    def __len__(self) -> int:
        return len(self.steps)

    def summary(self, index: int) -> str:
        cached = self._summaries[index]
        if cached is None:
            cached = self._summaries[index] = summarize_step(self.steps[index])
        return cached

    @property
    def outcome(self) -> Outcome:
        if self._outcome is None:
            self._outcome = outcome(self.cassette)
        return self._outcome

    # -- the hash chain ------------------------------------------------------------------------------------

    @property
    def chain_checked(self) -> bool:
        return self._chain is not _UNCHECKED

    @property
    def chain(self) -> ChainBreak | None:
        """The first broken link, or None; checks on first use (call `check_chain` from a thread first)."""
        if self._chain is _UNCHECKED:
            self._chain = chain_break(self.cassette)
        return self._chain

    def check_chain(self) -> ChainBreak | None:
        return self.chain

    # -- tool rounds ---------------------------------------------------------------------------------------

    def nesting(self, index: int) -> str:
        """The tree glyph of a step: tool steps that follow a model output are its children."""
        if self._nesting is None:
            self._nesting = self._compute_nesting()
        return self._nesting[index]

    def _compute_nesting(self) -> list[str]:
        glyphs = [""] * len(self.steps)
        children: list[int] = []
        in_round = False
        for i, step in enumerate(self.steps):
            if step.type in ("tool_call", "tool_result") and in_round:
                children.append(i)
                continue
            self._close_round(glyphs, children)
            children = []
            in_round = step.type == "model_output"
        self._close_round(glyphs, children)
        return glyphs

    @staticmethod
    def _close_round(glyphs: list[str], children: list[int]) -> None:
        for position, i in enumerate(children):
            glyphs[i] = "└─ " if position == len(children) - 1 else "├─ "

    # -- finding steps -------------------------------------------------------------------------------------

    def matches(self, index: int, needle: str) -> bool:
        """Case-insensitive match of the summary, the type or the payload's JSON text."""
        step = self.steps[index]
        if needle in self.summary(index).lower() or needle in step.type:
            return True
        return needle in compact_json(step.payload).lower()

    def tool_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for step in self.steps:
            name = tool_name(step)
            if name is not None:
                seen.setdefault(name, None)
        return list(seen)

    def step_types(self) -> list[str]:
        seen: dict[str, None] = {}
        for step in self.steps:
            seen.setdefault(step.type, None)
        return list(seen)

    def fork_point(self) -> int | None:
        """The index named by `forkedFromStepId` on a fork (it may be absent or not in this file)."""
        wanted = self.cassette.forkedFromStepId
        if wanted is None:
            return None
        _, _, tail = wanted.rpartition(":")
        return int(tail) if tail.isdigit() else None
