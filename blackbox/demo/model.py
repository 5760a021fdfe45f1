"""The demo's models: a scripted one that plays back outputs, and the reactive continuation model.

A model takes a neutral `model_input` payload (`messages`, `tools`) and returns a neutral output
without a `toolCallId` (the loop assigns `call-N`): `{"type": "tool_call", "toolName", "toolInput"}` or
`{"type": "final_answer", "text"}`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from blackbox.format.canonical import canonical_text

__all__ = ["DemoModel", "DemoModelError", "ReactiveModel", "ScriptedModel"]


class DemoModelError(Exception):
    """The model could not answer; the loop records `run_failed model_error` with this kind."""

    def __init__(self, message: str, kind: str = "unknown") -> None:
        super().__init__(message)
        self.kind = kind


class DemoModel(Protocol):
    def complete(self, model_input: dict[str, Any]) -> dict[str, Any]: ...


class ScriptedModel:
    """Answers with the given outputs in order, whatever it is asked (the recorded demo runs)."""

    def __init__(self, outputs: Iterable[dict[str, Any]]) -> None:
        self._outputs = list(outputs)
        self._next = 0

    def complete(self, model_input: dict[str, Any]) -> dict[str, Any]:
        if self._next >= len(self._outputs):
            raise DemoModelError(f"the scripted model has no output left after {len(self._outputs)} call(s)")
        output = self._outputs[self._next]
        self._next += 1
        return output


class ReactiveModel:
    """A one-round continuation model whose final answer is computed from the latest tool result.

    Used after a demo fork so that the child's answer visibly reacts to the changed tool result: change
    the value, change the answer.  Pure: the same input always gives the same text.
    """

    def complete(self, model_input: dict[str, Any]) -> dict[str, Any]:
        messages = model_input.get("messages")
        return {"type": "final_answer", "text": answer(messages if isinstance(messages, list) else [])}


def answer(messages: list[Any]) -> str:
    """The TypeScript Blackbox's rule table, string for string."""
    latest = _latest_tool_result(messages)
    if latest is None:
        prompt = _latest_user_text(messages)
        if prompt:
            return f'No tool results were available; responding to the request directly: "{prompt}".'
        return "No tool results were available and no request text was provided; nothing to act on."
    tool = latest.get("toolName")
    if "error" in latest:
        return f"The {tool} tool call failed with error: {latest['error']}. I cannot complete this request."
    result = latest.get("result")
    if isinstance(result, dict):
        available = result.get("available")
        results = result.get("results")
        if available is False or results == []:
            message = result.get("message")
            if not isinstance(message, str):
                count = len(results) if isinstance(results, list) else 0
                message = f"available={canonical_text(available)}, {count} result(s)"
            return (f'Based on the {tool} result, no options are available: "{message}". '
                    "I could not complete the booking.")
        if isinstance(results, list) and results:
            first = results[0]
            title = first.get("title") if isinstance(first, dict) else None
            shown = title if isinstance(title, str) else canonical_text(first)
            return (f'Based on the {tool} result, {len(results)} option(s) are available (first: "{shown}"). '
                    "Proceeding to complete the booking.")
    return (f"The {tool} tool returned an unrecognized result shape: {canonical_text(result)}. "
            "I cannot reliably act on it.")


def _parts(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _latest_tool_result(messages: list[Any]) -> dict[str, Any] | None:
    for message in reversed(messages):
        for part in reversed(_parts(message)):
            if isinstance(part, dict) and part.get("type") == "tool_result":
                return part
    return None


def _latest_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        text = " ".join(p["text"] for p in _parts(message)
                        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str))
        if text:
            return text
    return ""
