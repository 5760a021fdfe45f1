"""Message content in the GenAI conventions' JSON shapes (docs/format.md, "Export"), and the redaction hook.

Neutral messages become `{role, parts}` messages: text → `text{content}`, a tool call → `tool_call{id, name,
arguments}`, a tool result → `tool_call_response{id, response}` (Blackbox adds the tool's `name`, and `error:
true` when the result is the tool's error text, so an import can rebuild the step).  A round of results is one
`tool` message per result, as the conventions' examples carry them: a backend that reads one response per tool
message (Phoenix) then shows every one.  The model's answer is one `assistant` message with its
`finish_reason`, which the output schema requires: a backend that validates the list (Phoenix) drops the whole
answer without it.  Every field the schemas require is written with its type (a name is always a string).
Payloads are read through their typed views (`format/typed`): one that does not fit its shape exports none.

Content leaves Blackbox only with `--content`, and only through `json_text`: the redaction `policy` (the one
place a redaction policy plugs in: a function taking the payload), then known key values and credential
patterns masked (`secrets`): in the written JSON, or string by string where an escape could hide a bearer token.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from blackbox.format.typed import (
    UNSET,
    FinalAnswerView,
    MessageView,
    PartView,
    SingleToolCallView,
    TextPartView,
    ToolCallsView,
    ToolCallView,
    ToolSpecView,
    ToolUsePartView,
    View,
)

__all__ = ["finish_reason", "input_messages", "json_text", "output_messages", "policy", "redact", "tool_definitions"]

#: A redaction of each piece of exported content (after the whole cassette was redacted by the policy in force,
#: `exporters.batch`), before key masking; identity unless a caller sets one.
policy: Callable[[Any], Any] = lambda payload: payload  # noqa: E731

_KEYS: list[str] | None = None


def _mask(text: str) -> str:
    from blackbox.format.secrets import key_values, mask_secrets

    global _KEYS
    if _KEYS is None:
        values = key_values(os.environ)
        _KEYS = values + [json.dumps(v)[1:-1] for v in values if json.dumps(v)[1:-1] != v]  # as JSON writes them
    return mask_secrets(text, {}, _KEYS)


def _masked(value: Any) -> Any:
    """`value` with every string (and object key) masked as decoded text."""
    if isinstance(value, str):
        return _mask(value)
    if isinstance(value, dict):
        return {_mask(k) if isinstance(k, str) else k: _masked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(v) for v in value]
    return value


def redact(payload: Any) -> Any:
    """`payload` as the redaction `policy` lets it leave the machine."""
    return policy(payload)


def json_text(value: Any, redaction: Callable[[Any], Any] | None = None) -> str:
    """Content as a JSON attribute: redacted (`redaction`, else `policy`), written, then every known key value
    and credential pattern masked.

    Masking the written text (one pass, not one per string) finds what masking each decoded string finds as
    long as no match needs an escaped character: the key patterns' characters are never escaped and a key
    value is searched in its JSON form too; only a bearer token's whitespace can be (`Bearer\\n…`).  So a
    text holding `Bearer` and any escape is masked string by string instead."""
    from blackbox.format.writing import pretty_json

    payload = (redaction or redact)(value)
    text = pretty_json(payload, indent=0)
    if "Bearer" in text and "\\" in text:
        return pretty_json(_masked(payload), indent=0)
    return _mask(text)


def tool_definitions(tools: list[ToolSpecView], with_content: bool) -> list[dict[str, Any]]:
    """`gen_ai.tool.definitions`: each tool's type and name; its description and schema only with content."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        entry: dict[str, Any] = {"type": "function", "name": tool.name}
        if with_content:
            entry["description"] = tool.description
            if isinstance(tool.inputSchema, dict):
                entry["parameters"] = tool.inputSchema
        out.append(entry)
    return out


def _call(call: ToolCallView | ToolUsePartView | SingleToolCallView) -> dict[str, Any]:
    return {"type": "tool_call", "id": call.toolCallId, "name": call.toolName, "arguments": call.toolInput}


def _part(part: PartView) -> dict[str, Any]:
    if isinstance(part, TextPartView):
        return {"type": "text", "content": part.text}
    if isinstance(part, ToolUsePartView):
        return _call(part)
    out = {"type": "tool_call_response", "id": part.toolCallId, "name": part.toolName}
    if part.error is not UNSET:
        return {**out, "response": part.error, "error": True}
    return {**out, "response": None if part.result is UNSET else part.result}


def input_messages(messages: list[MessageView]) -> list[dict[str, Any]]:
    """`gen_ai.input.messages` of a neutral `model_input`'s messages: a message of tool results is one `tool`
    message per result (an import joins them back into one)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        body = message.content
        parts = [{"type": "text", "content": body}] if isinstance(body, str) else [_part(p) for p in body]
        if parts and all(p["type"] == "tool_call_response" for p in parts):
            out += [{"role": "tool", "parts": [part]} for part in parts]
            continue
        out.append({"role": message.role or "user", "parts": parts})
    return out


_STOPS = {None: "stop", "length": "length", "refusal": "content_filter"}


def finish_reason(output: View) -> str:
    """Why the model stopped, in the conventions' words (`stop`, `length`, `content_filter`, `tool_call`): the
    answer message's `finish_reason` and the span's `gen_ai.response.finish_reasons`."""
    if isinstance(output, ToolCallsView | SingleToolCallView):
        stop = output.stop if isinstance(output, ToolCallsView) else UNSET
        return "length" if stop == "length" else "stop" if stop == "end" else "tool_call"
    if isinstance(output, FinalAnswerView):
        return _STOPS.get(None if output.stop is UNSET else output.stop, "stop")
    return "stop"


def output_messages(output: View) -> list[dict[str, Any]]:
    """`gen_ai.output.messages` of a neutral `model_output`: one assistant message and its finish reason."""
    parts: list[dict[str, Any]] = []
    if isinstance(output, FinalAnswerView):
        parts.append({"type": "text", "content": output.text})
    elif isinstance(output, ToolCallsView):
        if isinstance(output.text, str) and output.text:
            parts.append({"type": "text", "content": output.text})
        parts += [_call(call) for call in output.calls]
    elif isinstance(output, SingleToolCallView):
        parts.append(_call(output))
    else:
        return []
    return [{"role": "assistant", "parts": parts, "finish_reason": finish_reason(output)}]
