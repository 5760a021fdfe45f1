"""What a run came to, the one-line step summaries, and where a turn's tool steps begin and end.

Only the last step decides the outcome; the tool sequence is every `tool_call` step's tool name.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from blackbox.format.cassette import Cassette, Step
from blackbox.format.typed import (
    FinalAnswerView,
    Odd,
    RunCompletedView,
    RunFailedView,
    SingleToolCallView,
    ToolCallsView,
    ToolCallView,
    ToolResultView,
    View,
    request_head,
    view_of,
)
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
    "terminal_outcome_of",
    "tool_name",
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
    return tuple(tool_name(s.view()) for s in steps if s.type == "tool_call")


def tool_name(found: View) -> str:
    """The tool a `tool_call` or `tool_result` view names, `?` for a payload that names none."""
    return found.toolName if isinstance(found, ToolCallView | ToolResultView) else "?"


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
    return terminal_outcome_of(view_of("metadata", payload), tools)


def terminal_outcome_of(found: View | None, tools: tuple[str, ...] = ()) -> Outcome:
    """`terminal_outcome` of a metadata view (a lazy step's, decoded straight into it)."""
    if isinstance(found, RunCompletedView) and found.status == "success":
        return Outcome("success", final_answer=_text(found.result), tools=tools)
    if isinstance(found, RunFailedView):
        return Outcome("error", failure_reason=_text(found.reason), tools=tools)
    return Outcome("incomplete", tools=tools)


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
    if step.type == "model_output" and _calls_not_a_list(step.view(), step.payload):
        return f"step {step.index} is a tool_calls output whose `calls` is not a list"
    return None


def _calls_not_a_list(found: View, payload: Any) -> bool:
    """A `tool_calls` output that does not fit and whose `calls` is not a list (a tag names a dict)."""
    return isinstance(found, Odd) and found.tag == "tool_calls" and not isinstance(payload.get("calls"), list)


def summarize_step(step: Step, limit: int = 80) -> str:
    """The one-line summary of a step (`Model called with 2 message(s)`, `Tool result: search → ok` …)."""
    if step.type == "model_input":  # only counted: the head, not a Struct per message of the history
        head = request_head(step.payload)
        return f"Model called with {0 if head is None else len(head.messages)} message(s)"
    found = step.view()
    if step.type == "model_output":
        if _calls_not_a_list(found, step.payload):  # verify reports it; the summary still shows the step
            return "Model → tool_calls: (calls is not a list)"
        return _summarize_output(found, limit)
    if isinstance(found, ToolCallView):
        return f"Tool called: {found.toolName}"
    if isinstance(found, ToolResultView):
        if found.failed:
            return f"Tool result: {found.toolName} → ERROR: {_clip(_text(found.error), limit)}"
        return f"Tool result: {found.toolName} → ok"
    if step.type in TOOL_STEPS:
        return "Tool called: ?" if step.type == "tool_call" else "Tool result: ? → (unreadable payload)"
    if isinstance(found, RunCompletedView):
        return f'Run completed: "{_clip(_text(found.result), limit)}"'
    if isinstance(found, RunFailedView):
        return f"Run failed: {_text(found.reason) or '?'}"
    return f"Metadata: {found.tag if isinstance(found, Odd) and found.tag else '?'}"


def _summarize_output(found: View, limit: int) -> str:
    if isinstance(found, ToolCallsView):
        names = ", ".join(call.toolName for call in found.calls)
        return f"Model → tool_calls: {names}" + (" (with text)" if found.text else "")
    if isinstance(found, SingleToolCallView):
        return f"Model → tool_calls: {found.toolName}"
    if isinstance(found, FinalAnswerView):
        return f'Model → final_answer: "{_clip(found.text, limit)}"'
    if isinstance(found, Odd) and found.tag == "tool_calls":
        return "Model → tool_calls: (unreadable calls)"
    return "Model → (unknown output)"
