"""Message content in the GenAI conventions' JSON shapes (docs/format.md, "Export"), and the redaction hook.

Neutral messages become `{role, parts}` messages: text → `text{content}`, a tool call → `tool_call{id, name,
arguments}`, a tool result → `tool_call_response{id, response}` (Blackbox adds the tool's `name`, and `error:
true` when the result is the tool's error text, so an import can rebuild the step).  A round of results is one
`tool` message per result, as the conventions' examples carry them: a backend that reads one response per tool
message (Phoenix) then shows every one.  The model's answer is one `assistant` message with its
`finish_reason`, which the output schema requires: a backend that validates the list (Phoenix) drops the whole
answer without it.  Every field the schemas require is written with its type (a name is always a string).

Content leaves Blackbox only with `--content`, and only through `json_text`: the redaction `policy` (the one
place a redaction policy plugs in: a function taking the payload), then known key values and credential
patterns masked (`secrets`): in the written JSON, or string by string where an escape could hide a bearer token.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

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


def _text(value: Any) -> str:
    """A field the schemas require as a string: a hand-edited cassette may hold anything there."""
    return value if isinstance(value, str) else ""


def tool_definitions(tools: Any, with_content: bool) -> list[dict[str, Any]]:
    """`gen_ai.tool.definitions`: each tool's type and name; its description and schema only with content."""
    out: list[dict[str, Any]] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        entry: dict[str, Any] = {"type": "function", "name": _text(tool.get("name"))}
        if with_content:
            entry["description"] = _text(tool.get("description"))
            if isinstance(tool.get("inputSchema"), dict):
                entry["parameters"] = tool["inputSchema"]
        out.append(entry)
    return out


def _part(part: Any) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "content": part}
    if not isinstance(part, dict):
        return {"type": "text", "content": ""}
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "content": _text(part.get("text"))}
    if kind == "tool_use":
        return {"type": "tool_call", "id": part.get("toolCallId"), "name": _text(part.get("toolName")),
                "arguments": part.get("toolInput")}
    if kind == "tool_result":
        out = {"type": "tool_call_response", "id": part.get("toolCallId"), "name": _text(part.get("toolName"))}
        if "error" in part:
            return {**out, "response": part["error"], "error": True}
        return {**out, "response": part.get("result")}
    return {"type": str(kind), **{k: v for k, v in part.items() if k != "type"}}


def input_messages(messages: Any) -> list[dict[str, Any]]:
    """`gen_ai.input.messages` of a neutral `model_input`'s messages: a message of tool results is one `tool`
    message per result (an import joins them back into one)."""
    out: list[dict[str, Any]] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        body = message.get("content")
        parts = [_part(p) for p in ([body] if isinstance(body, str) else body if isinstance(body, list) else [])]
        if parts and all(p["type"] == "tool_call_response" for p in parts):
            out += [{"role": "tool", "parts": [part]} for part in parts]
            continue
        role = message.get("role")
        out.append({"role": role if isinstance(role, str) and role else "user", "parts": parts})
    return out


_STOPS = {None: "stop", "length": "length", "refusal": "content_filter"}


def finish_reason(output: Any) -> str:
    """Why the model stopped, in the conventions' words (`stop`, `length`, `content_filter`, `tool_call`): the
    answer message's `finish_reason` and the span's `gen_ai.response.finish_reasons`."""
    if not isinstance(output, dict):
        return "stop"
    stop = output.get("stop")
    if output.get("type") in ("tool_calls", "tool_call"):
        return "length" if stop == "length" else "stop" if stop == "end" else "tool_call"
    return _STOPS.get(stop, "stop") if isinstance(stop, str | None) else "stop"


def output_messages(output: Any) -> list[dict[str, Any]]:
    """`gen_ai.output.messages` of a neutral `model_output`: one assistant message and its finish reason."""
    if not isinstance(output, dict):
        return []
    kind = output.get("type")
    parts: list[dict[str, Any]] = []
    if isinstance(output.get("text"), str) and (output["text"] or kind == "final_answer"):
        parts.append({"type": "text", "content": output["text"]})
    if kind == "tool_calls":
        calls: list[Any] = output["calls"] if isinstance(output.get("calls"), list) else []
        parts += [_part({"type": "tool_use", **call}) for call in calls if isinstance(call, dict)]
    elif kind == "tool_call":
        parts.append(_part({**output, "type": "tool_use"}))
    return [{"role": "assistant", "parts": parts, "finish_reason": finish_reason(output)}]
