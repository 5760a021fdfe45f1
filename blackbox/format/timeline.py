"""A run over time (docs/format.md, "Timing and totals"): each model call and tool call as a span between two
step timestamps, its tokens, the slowest marked, and the run's totals, for `inspect` and the UI's timeline.

A model call runs from its `model_input` to the `model_output` after it; a tool call from its `tool_call` to
the `tool_result` with the same call id.  A call whose end is not in the cassette (the run stopped first) is a
span without an end.  Only timestamps are read, so a run imported with one time for every step has spans of
0 ms; the counts come from the steps' unhashed `tokens` (docs/format.md, "Token usage").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Protocol

import msgspec

from blackbox.format.tokens import Tokens

__all__ = ["SLOWEST", "Span", "TimedStep", "Timeline", "Totals", "duration_text", "timeline", "tokens_text"]

SLOWEST = 3  # how many of the slowest finished calls are marked
_TOOL_STEPS = frozenset({"tool_call", "tool_result"})
_NAMED = _TOOL_STEPS | {"model_input"}  # the steps whose payload names the call


class TimedStep(Protocol):
    """What a timeline reads of a step (a `Step`, or any reader's decoded step)."""

    @property
    def index(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def timestamp(self) -> int | float: ...
    @property
    def payload(self) -> Any: ...  # decoded, or undecoded JSON (`msgspec.Raw`, a lazily loaded step)
    @property
    def tokens(self) -> Tokens | None: ...


class Span(msgspec.Struct):
    """One call: a model call (named for its model) or a tool call (named for its tool)."""

    kind: Literal["model", "tool"]
    name: str
    start_step: int
    start: float  # ms since the epoch
    end_step: int | None = None  # None: the call never ended in the cassette
    end: float | None = None
    tokens: Tokens | None = None
    slow: bool = False  # one of the run's SLOWEST finished calls

    @property
    def ms(self) -> float | None:
        """How long the call took (never negative: a hand-made file may go back in time), or None."""
        return None if self.end is None else max(0.0, self.end - self.start)


class Totals(msgspec.Struct, frozen=True):
    """The run in numbers: tokens summed over the calls that have them; times in milliseconds."""

    model_calls: int
    tool_calls: int
    calls_with_tokens: int
    tokens: Tokens | None  # None when no model call has counts (an import, an older recording)
    model_ms: float  # the model calls' time, summed (a session's model calls never overlap)
    tool_ms: float  # the time at least one tool was running (parallel calls counted once)
    wall_ms: float  # the first step's timestamp to the last's

    def to_dict(self) -> dict[str, Any]:
        """The `--json` form (camelCase, as the cassette spells its fields)."""
        return {"modelCalls": self.model_calls, "toolCalls": self.tool_calls,
                "modelCallsWithTokens": self.calls_with_tokens,
                "tokens": None if self.tokens is None else msgspec.to_builtins(self.tokens),
                "modelMs": self.model_ms, "toolMs": self.tool_ms, "wallMs": self.wall_ms}


class Timeline(msgspec.Struct):
    """The spans in the order they started, their totals, and the run's first and last timestamps."""

    spans: list[Span]
    totals: Totals
    first: float | None
    last: float | None


class _Names(msgspec.Struct):
    """The few payload fields a timeline reads: decoded from undecoded JSON without building the rest."""

    model: Any = None
    toolName: Any = None
    toolCallId: Any = None


_NAMES = msgspec.json.Decoder(_Names)


def _names(payload: Any) -> _Names:
    """A payload's names, from a decoded payload or a lazily loaded one (`msgspec.Raw`)."""
    if isinstance(payload, msgspec.Raw):
        try:
            return _NAMES.decode(payload)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return _Names()
    if isinstance(payload, dict):
        return _Names(payload.get("model"), payload.get("toolName"), payload.get("toolCallId"))
    return _Names()


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any, default: str) -> str:
    return value if isinstance(value, str) and value else default


def timeline(steps: Iterable[TimedStep], *, model_names: bool = True) -> Timeline:
    """The spans and totals of a run's steps (in their order); steps of any shape are read, none refused.

    `model_names=False` leaves the model calls named `model`, reading no `model_input` payload (the largest
    of a run: each holds the history so far): the totals are the same, for a fraction of the reading."""
    named = _NAMED if model_names else _TOOL_STEPS
    spans: list[Span] = []
    open_tools: dict[str, Span] = {}
    waiting: Span | None = None  # the model call whose output is the next step
    first = last = None
    for step in steps:
        at = _number(step.timestamp)
        if at is None:
            continue
        first = at if first is None else first
        last = at
        kind = step.type
        payload = _names(step.payload) if kind in named else _Names()
        if waiting is not None and kind == "model_output":
            waiting.end_step, waiting.end, waiting.tokens = step.index, at, step.tokens
        waiting = None
        if kind == "model_input":
            waiting = Span("model", _text(payload.model, "model"), step.index, at)
            spans.append(waiting)
        elif kind == "tool_call":
            span = Span("tool", _text(payload.toolName, "tool"), step.index, at)
            spans.append(span)
            open_tools[str(payload.toolCallId)] = span
        elif kind == "tool_result":
            started = open_tools.pop(str(payload.toolCallId), None)
            if started is not None:
                started.end_step, started.end = step.index, at
    finished = sorted((s for s in spans if s.ms), key=lambda s: s.ms or 0.0, reverse=True)
    for span in finished[:SLOWEST]:
        span.slow = True
    return Timeline(spans, _totals(spans, first, last), first, last)


def _totals(spans: list[Span], first: float | None, last: float | None) -> Totals:
    models = [s for s in spans if s.kind == "model"]
    counted = [s.tokens for s in models if s.tokens is not None]
    tokens = None
    for t in counted:
        tokens = t if tokens is None else tokens + t
    return Totals(len(models), len(spans) - len(models), len(counted), tokens,
                  sum(s.ms or 0.0 for s in models), _busy(s for s in spans if s.kind == "tool"),
                  0.0 if first is None or last is None else max(0.0, last - first))


def _busy(spans: Iterable[Span]) -> float:
    """The length of the union of the finished spans' intervals."""
    total, reach = 0.0, None
    for start, end in sorted((s.start, s.end) for s in spans if s.end is not None):
        if reach is None or start > reach:
            total += max(0.0, end - start)
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def duration_text(ms: float | None) -> str:
    """`850 ms`, `2.4 s`, `3 min 05 s`; `—` when unknown."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    return f"{minutes} min {seconds:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def tokens_text(tokens: Tokens | None) -> str:
    """`in 1,234 (cache read 300, write 20) · out 456 (reasoning 12)`; `not recorded` when None."""
    if tokens is None:
        return "not recorded"
    cache = [f"{label} {value:,}" for label, value in (("cache read", tokens.cacheRead),
                                                         ("cache write", tokens.cacheWrite)) if value]
    text = f"in {tokens.input:,}" + (f" ({', '.join(cache)})" if cache else "")
    text += f" · out {tokens.output:,}"
    return text + (f" (reasoning {tokens.reasoning:,})" if tokens.reasoning else "")
