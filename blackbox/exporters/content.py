"""Message content in the GenAI conventions' JSON shapes (docs/format.md, "Export"), and the redaction hook.

Neutral messages become `{role, parts}` messages: text → `text{content}`, a tool call → `tool_call{id, name,
arguments}`, a tool result → `tool_call_response{id, response}` in a `tool` message (Blackbox adds the tool's
`name`, and `error: true` when the result is the tool's error text, so an import can rebuild the step).

Content leaves Blackbox only with `--content`, and only through `json_text`: the redaction `policy` (the one
place a redaction policy plugs in: a function taking the payload), then known key values and credential
patterns masked (`secrets`): in the written JSON, or string by string where an escape could hide a bearer token.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

__all__ = ["input_messages", "json_text", "output_messages", "policy", "redact", "tool_definitions"]

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


def tool_definitions(tools: Any, with_content: bool) -> list[dict[str, Any]]:
    """`gen_ai.tool.definitions`: each tool's type and name; its description and schema only with content."""
    out: list[dict[str, Any]] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        entry: dict[str, Any] = {"type": "function", "name": tool.get("name")}
        if with_content:
            entry["description"] = tool.get("description", "")
            if "inputSchema" in tool:
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
        return {"type": "text", "content": part.get("text", "")}
    if kind == "tool_use":
        return {"type": "tool_call", "id": part.get("toolCallId"), "name": part.get("toolName"),
                "arguments": part.get("toolInput")}
    if kind == "tool_result":
        out = {"type": "tool_call_response", "id": part.get("toolCallId"), "name": part.get("toolName")}
        if "error" in part:
            return {**out, "response": part["error"], "error": True}
        return {**out, "response": part.get("result")}
    return {"type": str(kind), **{k: v for k, v in part.items() if k != "type"}}


def input_messages(messages: Any) -> list[dict[str, Any]]:
    """`gen_ai.input.messages` of a neutral `model_input`'s messages."""
    out: list[dict[str, Any]] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        body = message.get("content")
        parts = [_part(body)] if isinstance(body, str) else [_part(p) for p in body or []]
        role = message.get("role")
        if parts and all(p["type"] == "tool_call_response" for p in parts):
            role = "tool"
        out.append({"role": role, "parts": parts})
    return out


def output_messages(output: Any) -> list[dict[str, Any]]:
    """`gen_ai.output.messages` of a neutral `model_output` (the deprecated per-message finish reason left out)."""
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
    return [{"role": "assistant", "parts": parts}]
