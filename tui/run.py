"""A loaded cassette as the UI sees it: lazily computed summaries, tool-round nesting, search and JSON text.

Everything here is cheap per step and computed on demand, so a 10,000-step cassette opens at once; the
hash-chain check (which hashes every step) runs once, off the UI thread, through `check_chain`.  Payloads
stay undecoded (`load_lazy`: about the file's size in memory) and are decoded per step when shown.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, overload

import msgspec

from blackbox.cassette import Cassette, ChainBreak, Step, chain_break
from blackbox.inert import inert
from blackbox.lazy import LazyCassette, LazyStep, load_lazy
from blackbox.outcome import Outcome, summarize_step, terminal_outcome, tool_sequence
from blackbox.writing import pretty_json

__all__ = ["Run", "format_time", "pretty_json", "tool_name"]


def compact_json(value: Any) -> str:
    return pretty_json(value, indent=0)


def format_time(ms: float) -> str:
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


class _ToolFacts(msgspec.Struct, frozen=True):
    """What the UI needs of the tool steps' payloads: per step the tool name and whether it is an error
    result, and the tool calls' names in order (the outcome's tool sequence)."""

    names: list[str | None]
    errors: list[bool]
    calls: tuple[str, ...]


class Steps(Sequence[Step]):
    """The steps of a lazily loaded cassette: each payload decoded when a step is asked for, the last few
    kept (the rows on screen and the detail pane ask again and again)."""

    def __init__(self, lazy: list[LazyStep], keep: int = 256) -> None:
        self.lazy = lazy
        self._keep = keep
        self._recent: OrderedDict[int, Step] = OrderedDict()

    def __len__(self) -> int:
        return len(self.lazy)

    def forget_from(self, index: int) -> None:
        """Drop the decoded steps from `index` on (those steps were replaced)."""
        for stale in [i for i in self._recent if i >= index]:
            del self._recent[stale]

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        index = range(len(self))[index]  # negative indices; IndexError past the end
        step = self._recent.get(index)
        if step is None:
            step = self._recent[index] = self.lazy[index].decoded()
            if len(self._recent) > self._keep:
                self._recent.popitem(last=False)
        else:
            self._recent.move_to_end(index)
        return step

    def type(self, index: int) -> str:
        return self.lazy[index].type


class Run:
    """One cassette open in the UI; summaries, nesting and the chain state are cached on first use."""

    def __init__(self, cassette: LazyCassette, path: Path | None = None) -> None:
        self.lazy = cassette
        self.path = path
        self.steps = Steps(cassette.steps)
        self._summaries: list[str | None] = [None] * len(self.steps)
        self._nesting: list[str] | None = None
        self._tools: _ToolFacts | None = None
        self._outcome: Outcome | None = None
        self._chain: Any = _UNCHECKED

    def append(self, steps: list[LazyStep], *, drop: int = 0) -> None:
        """Steps a recording in progress just wrote (`--follow`), after dropping its last `drop` steps (tool
        runs shown ahead of their turn, now chained): the per-run caches start over."""
        if drop:
            keep = max(0, len(self.lazy.steps) - drop)
            del self.lazy.steps[keep:]
            del self._summaries[keep:]
            self.steps.forget_from(keep)
        self.lazy.steps.extend(steps)
        self._summaries.extend([None] * len(steps))
        self._nesting = None
        self._tools = None
        self._outcome = None
        self._chain = _UNCHECKED

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Run:
        """Load a cassette file (structure only; `CassetteError` with one clear line if it cannot be read)."""
        return cls(load_lazy(path), Path(path))

    @property
    def cassette(self) -> LazyCassette:
        """The cassette's fields; its steps' payloads are undecoded (use `steps` or `decoded()`)."""
        return self.lazy

    def decoded(self) -> Cassette:
        """The whole cassette with every payload decoded (the diff needs it; costs about 3× the file)."""
        return self.lazy.decoded()

    @property
    def name(self) -> str:
        """The file's name (or the id), made inert: it is shown on screen."""
        return inert(self.path.name if self.path else self.cassette.id)

    @property
    def label(self) -> str:
        """The cassette's id, made inert for the screen."""
        return inert(self.cassette.id)

    def __len__(self) -> int:
        return len(self.steps)

    def summary(self, index: int) -> str:
        """The step's one-line summary, inert: a tool's output may hold escape sequences."""
        cached = self._summaries[index]
        if cached is None:
            cached = self._summaries[index] = inert(summarize_step(self.steps[index]))
        return cached

    @property
    def outcome(self) -> Outcome:
        """`blackbox.outcome.outcome`, from the last step's payload and the tool calls' names."""
        if self._outcome is None:
            last = self.steps[-1] if len(self.steps) else None
            payload = last.payload if last is not None and last.type == "metadata" else None
            self._outcome = terminal_outcome(payload, self._tool_facts().calls)
        return self._outcome

    def _tool_facts(self) -> _ToolFacts:
        """One pass decoding the tool steps' payloads, each dropped after use."""
        if self._tools is None:
            names: list[str | None] = [None] * len(self.steps)
            errors = [False] * len(self.steps)
            calls: list[str] = []
            for i, lazy in enumerate(self.steps.lazy):
                if lazy.type in ("tool_call", "tool_result"):
                    step = lazy.decoded()
                    names[i], errors[i] = tool_name(step), is_error_result(step)
                    calls += tool_sequence([step])
            self._tools = _ToolFacts(names, errors, tuple(calls))
        return self._tools

    def is_error_result(self, index: int) -> bool:
        return self._tool_facts().errors[index]

    # -- the hash chain ------------------------------------------------------------------------------------

    @property
    def chain_checked(self) -> bool:
        return self._chain is not _UNCHECKED

    @property
    def chain(self) -> ChainBreak | None:
        """The first broken link, or None; checks on first use (call `check_chain` from a thread first)."""
        if self._chain is _UNCHECKED:
            self._chain = chain_break(self.lazy)
        found: ChainBreak | None = self._chain
        return found

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
        for i, step in enumerate(self.steps.lazy):
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
        if needle in self.summary(index).lower() or needle in self.steps.type(index):
            return True
        return needle in compact_json(self.steps[index].payload).lower()

    def tool_names(self) -> list[str]:
        return list(dict.fromkeys(name for name in self._tool_facts().names if name is not None))

    def step_types(self) -> list[str]:
        return list(dict.fromkeys(step.type for step in self.steps.lazy))

    def indices(self, test: str, value: str = "") -> list[int]:
        """The steps of one `type`, of one `tool` (name) or the `errors` (error results), without decoding
        every payload."""
        if test == "type":
            return [i for i, step in enumerate(self.steps.lazy) if step.type == value]
        if test == "tool":
            return [i for i, name in enumerate(self._tool_facts().names) if name == value]
        return [i for i, error in enumerate(self._tool_facts().errors) if error]
