"""Where each API's response puts what the unhashed `origin` of a model call keeps (docs/format.md, "Origin"):
the provider's id of each tool call, in call order.

A recorded response's ids are read from the same places a replayed response's are written to, so a replayed
agent is handed the ids the recorded one was (`toolu_…`, `call_…`), not Blackbox's `call-N`.  Each function
returns the (object, key) of each call's id in a response body, in the order the neutral output lists the
calls; a body of another shape gives none.  Pure functions on plain JSON values.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Slots", "anthropic_slots", "chat_slots", "gemini_slots", "no_slots", "responses_slots"]

#: Where each call's id is (or goes) in a response body: the object holding it and its key, in call order.
Slots = list[tuple[dict[str, Any], str]]


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def no_slots(body: Any) -> Slots:
    """An API whose answers carry no call ids Blackbox keeps."""
    return []


def anthropic_slots(body: Any) -> Slots:
    """Messages: each `tool_use` block's `id`."""
    content = body.get("content") if isinstance(body, dict) else None
    return [(block, "id") for block in _dicts(content) if block.get("type") == "tool_use"]


def _first(body: Any, items: str, field: str) -> dict[str, Any]:
    """The `field` object of the first of `body[items]` (the one choice, the one candidate), or an empty one."""
    found = _dicts(body.get(items)) if isinstance(body, dict) else []
    inner = found[0].get(field) if found else None
    return inner if isinstance(inner, dict) else {}


def chat_slots(body: Any) -> Slots:
    """Chat Completions: each `tool_calls` entry's `id` in the one choice's message."""
    return [(call, "id") for call in _dicts(_first(body, "choices", "message").get("tool_calls"))]


def responses_slots(body: Any) -> Slots:
    """Responses: each `function_call` item's `call_id` (the id a `function_call_output` answers)."""
    output = body.get("output") if isinstance(body, dict) else None
    return [(item, "call_id") for item in _dicts(output) if item.get("type") == "function_call"]


def gemini_slots(body: Any) -> Slots:
    """Gemini: each `functionCall` part's `id` in the one candidate (Gemini often gives none)."""
    parts = _dicts(_first(body, "candidates", "content").get("parts"))
    return [(part["functionCall"], "id") for part in parts if isinstance(part.get("functionCall"), dict)]
