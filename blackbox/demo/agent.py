"""The built-in demo agent loop (docs/format.md, "Diff, assert, inspect and list"): ask the model, run the fixture
tool it names, feed the result back.

Every event becomes a step of a `StepChain`.  The loop writes the single-call `tool_call` output shape and
ends with one terminal metadata step: `run_completed`, or `run_failed` with `unknown_tool`,
`max_steps_exceeded` or `model_error`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from blackbox.demo.clock import Clock
from blackbox.demo.model import DemoModel, DemoModelError
from blackbox.demo.tools import UnknownToolError, run_tool, tool_definitions
from blackbox.format.canonical import json_value
from blackbox.format.cassette import StepChain

__all__ = ["LoopResult", "run_loop"]


class LoopResult(msgspec.Struct, frozen=True):
    """How the loop ended: `final_answer` on success, else the failure reason it recorded."""

    final_answer: str | None = None
    failure_reason: str | None = None
    model_calls: int = 0


def run_loop(
    chain: StepChain,
    model: DemoModel,
    *,
    clock: Clock,
    prompt: str = "",
    messages: list[Any] | None = None,
    max_steps: int = 20,
    first_call: int = 0,
) -> LoopResult:
    """Run until a final answer, a failure, or `max_steps` model calls.

    `messages` (a rebuilt history, for a fork) replaces the single user `prompt`; `first_call` seeds the
    `call-N` counter past the ids a copied prefix already uses.
    """
    history: list[Any] = list(messages) if messages is not None else [{"role": "user", "content": prompt}]
    tools = tool_definitions()
    next_call = first_call
    calls = 0
    while calls < max_steps:
        chain.append("model_input", clock(), {"messages": list(history), "tools": tools})
        try:
            output = model.complete({"messages": list(history), "tools": tools})
        except DemoModelError as exc:
            chain.append("metadata", clock(), {"event": "run_failed", "status": "error", "reason": "model_error",
                                               "errorKind": exc.kind, "message": str(exc)})
            return LoopResult(failure_reason="model_error", model_calls=calls)
        calls += 1
        if output.get("type") == "final_answer":
            text = str(output.get("text", ""))
            chain.append("model_output", clock(), {"type": "final_answer", "text": text})
            chain.append("metadata", clock(), {"event": "run_completed", "status": "success", "result": text})
            return LoopResult(final_answer=text, model_calls=calls)

        call_id = f"call-{next_call}"
        next_call += 1
        name = str(output.get("toolName"))
        tool_input = _as_json(output.get("toolInput", {}), f"the input of tool {name!r}")
        chain.append("model_output", clock(),
                     {"type": "tool_call", "toolCallId": call_id, "toolName": name, "toolInput": tool_input})
        chain.append("tool_call", clock(), {"toolCallId": call_id, "toolName": name, "toolInput": tool_input})
        try:
            result = _as_json(run_tool(name, tool_input), f"the result of tool {name!r}")
        except UnknownToolError as exc:
            chain.append("tool_result", clock(), {"toolCallId": call_id, "toolName": name, "error": str(exc)})
            chain.append("metadata", clock(), {"event": "run_failed", "status": "error", "reason": "unknown_tool",
                                               "toolName": name, "toolCallId": call_id})
            return LoopResult(failure_reason="unknown_tool", model_calls=calls)
        chain.append("tool_result", clock(), {"toolCallId": call_id, "toolName": name, "result": result})
        history.append({"role": "assistant", "content": [
            {"type": "tool_use", "toolCallId": call_id, "toolName": name, "toolInput": tool_input}]})
        history.append({"role": "user", "content": [
            {"type": "tool_result", "toolCallId": call_id, "toolName": name, "result": result}]})

    chain.append("metadata", clock(), {"event": "run_failed", "status": "error", "reason": "max_steps_exceeded",
                                       "maxSteps": max_steps})
    return LoopResult(failure_reason="max_steps_exceeded", model_calls=calls)


def _as_json(value: Any, what: str) -> Any:
    return json_value(value, where=lambda: what)
