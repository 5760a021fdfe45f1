"""What a run came to, the one-line step summaries, and where a turn's tool steps begin and end.

Only the last step decides the outcome; the tool sequence is every `tool_call` step's tool name.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from blackbox.format.cassette import Cassette, Step
from blackbox.format.writing import pretty_json

__all__ = [
    "TOOL_STEPS",
    "Outcome",
    "Status",
    "last_metadata",
    "outcome",
    "step_label",
    "summarize_step",
    "terminal_outcome",
    "tool_sequence",
    "turn_end",
    "turn_start",
]

#: The step types of a turn's wrapped tool runs (the steps after a model output).
TOOL_STEPS: tuple[str, ...] = ("tool_call", "tool_result")

Status = Literal["success", "error", "incomplete"]


class Outcome(msgspec.Struct, frozen=True):
    """The terminal state of a run: status, the final answer (success) or failure reason (error)."""

    status: Status
    final_answer: str | None = None
    failure_reason: str | None = None
    tools: tuple[str, ...] = ()

    def describe(self) -> str:
        """`success, result "…"` / `error, reason …` / `incomplete`: the words diff and replay use."""
        if self.status == "success":
            return f'success, result "{_clip(self.final_answer or "", 80)}"'
        if self.status == "error":
            return f"error, reason {self.failure_reason}"
        return "incomplete"


def tool_sequence(steps: list[Step]) -> tuple[str, ...]:
    return tuple(str(_get(s.payload, "toolName", "?")) for s in steps if s.type == "tool_call")


def last_metadata(steps: list[Step]) -> Any:
    """The payload of the terminal metadata step (the last step), or None when the run has none."""
    last = steps[-1] if steps else None
    return last.payload if last is not None and last.type == "metadata" else None


def turn_start(steps: list[Step], at: int) -> int:
    """The first step of the run of tool steps that ends just before step `at` (`at` itself if none)."""
    start = at
    while start > 0 and steps[start - 1].type in TOOL_STEPS:
        start -= 1
    return start


def turn_end(steps: list[Step], start: int) -> int:
    """The index after the run of tool steps that begins at step `start` (`start` itself if none)."""
    end = start
    while end < len(steps) and steps[end].type in TOOL_STEPS:
        end += 1
    return end


def outcome(cassette: Cassette) -> Outcome:
    return terminal_outcome(last_metadata(cassette.steps), tool_sequence(cassette.steps))


def terminal_outcome(payload: Any, tools: tuple[str, ...] = ()) -> Outcome:
    """The outcome a terminal metadata payload stands for; None (no terminal step) or anything else is
    incomplete."""
    if isinstance(payload, dict):
        if payload.get("event") == "run_completed" and payload.get("status") == "success":
            return Outcome("success", final_answer=_text(payload.get("result")), tools=tools)
        if payload.get("event") == "run_failed":
            return Outcome("error", failure_reason=_text(payload.get("reason")), tools=tools)
    return Outcome("incomplete", tools=tools)


def _get(payload: Any, key: str, default: Any = None) -> Any:
    return payload.get(key, default) if isinstance(payload, dict) else default


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else pretty_json(value, indent=0)


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def step_label(step: Step) -> str:
    """`#3 tool_result` — how diff names a step."""
    return f"#{step.index} {step.type}"


def payload_problem(step: Step) -> str | None:
    """What makes a step's payload unreadable for replay and the summaries (verify's replayability check
    reports it), or None."""
    p = step.payload
    if step.type == "model_output" and _get(p, "type") == "tool_calls" and not isinstance(_get(p, "calls"), list):
        return f"step {step.index} is a tool_calls output whose `calls` is not a list"
    return None


def summarize_step(step: Step, limit: int = 80) -> str:
    """The one-line summary of a step (`Model called with 2 message(s)`, `Tool result: search → ok` …)."""
    p = step.payload
    if step.type == "model_input":
        messages = _get(p, "messages")
        return f"Model called with {len(messages) if isinstance(messages, list) else 0} message(s)"
    if step.type == "model_output":
        kind = _get(p, "type")
        if kind == "tool_calls":
            calls = _get(p, "calls")
            if not isinstance(calls, list):  # verify reports it; the summary still shows the step
                return "Model → tool_calls: (calls is not a list)"
            names = ", ".join(str(_get(c, "toolName", "?")) for c in calls if isinstance(c, dict))
            return f"Model → tool_calls: {names}" + (" (with text)" if _get(p, "text") else "")
        if kind == "tool_call":
            return f"Model → tool_calls: {_get(p, 'toolName', '?')}"
        if kind == "final_answer":
            return f'Model → final_answer: "{_clip(_text(_get(p, "text")), limit)}"'
        return "Model → (unknown output)"
    if step.type == "tool_call":
        return f"Tool called: {_get(p, 'toolName', '?')}"
    if step.type == "tool_result":
        name = _get(p, "toolName", "?")
        if isinstance(p, dict) and "error" in p:
            return f"Tool result: {name} → ERROR: {_clip(_text(p['error']), limit)}"
        return f"Tool result: {name} → ok"
    if _get(p, "event") == "run_completed":
        return f'Run completed: "{_clip(_text(_get(p, "result")), limit)}"'
    if _get(p, "event") == "run_failed":
        return f"Run failed: {_get(p, 'reason', '?')}"
    return f"Metadata: {_get(p, 'event', '?')}"
