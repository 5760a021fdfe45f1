"""The other direction: pieces every provider shares to build a request body from a neutral `model_input`.

Recording turns what an SDK sent into a neutral payload; the model-only what-if (`blackbox.fork.whatif`) has no
agent, so each provider's `build_request` turns the recorded history back into its API's body.  Tool-call ids
are sent as the cassette holds them (`call-N` is a valid id for every API).  A tool known only by its name (an
imported Claude Code session keeps no schemas) is sent with a permissive object schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blackbox.providers.neutral import compact_json

__all__ = ["PERMISSIVE_SCHEMA", "kept", "messages_of", "parts", "result_text", "sent_as", "tools_of"]

PERMISSIVE_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}


def result_text(part: Mapping[str, Any]) -> str:
    """A tool result as the text a provider takes: strings as they are, anything else as compact JSON."""
    value = part.get("error") if "error" in part else part.get("result")
    return value if isinstance(value, str) else compact_json(value)


def messages_of(model_input: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The payload's messages that are objects, each with its role as every API takes it (`assistant`, else
    `user`): a hand-edited cassette may hold anything there."""
    return [("assistant" if message.get("role") == "assistant" else "user", message)
            for message in model_input.get("messages") or [] if isinstance(message, dict)]


def parts(content: Any) -> list[dict[str, Any]]:
    """A neutral message's content as a list of parts (a string is one text part)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [part for part in content if isinstance(part, dict)] if isinstance(content, list) else []


def sent_as(kept_params: Mapping[str, str], **prefer: str) -> dict[str, str]:
    """A provider's kept-params table backwards: each neutral name as one request field (several fields may
    stand for one name, and the API refuses more than one of them); `prefer` picks the field for a name."""
    fields: dict[str, str] = {}
    for field, neutral in kept_params.items():
        fields.setdefault(neutral, field)
    return {**fields, **prefer}


def kept(payload: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
    """The payload's neutral `params` as request fields (`fields`: neutral name → field)."""
    found = payload.get("params")
    params: Mapping[str, Any] = found if isinstance(found, dict) else {}
    return {field: params[neutral] for neutral, field in fields.items() if params.get(neutral) is not None}


def tools_of(payload: Mapping[str, Any]) -> list[tuple[Any, str, Any]]:
    """The payload's tools as (name, description, JSON schema), a permissive schema where none was kept."""
    return [(tool.get("name"), tool.get("description") or "", tool.get("inputSchema") or PERMISSIVE_SCHEMA)
            for tool in payload.get("tools") or [] if isinstance(tool, dict)]
