"""Neutral `model_input` payloads back to provider request bodies, for a conversation Blackbox continues itself.

The normalizers turn what an SDK sent into a neutral payload; this is the other direction, used by the what-if
engine (`blackbox.whatif`) when no agent is there to send the request.  Tool-call ids are sent as they are in
the cassette (`call-N` is a valid id for both APIs).  A tool known only by its name (an imported Claude Code
session keeps no schemas) is sent with a permissive object schema.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from blackbox.errors import UsageError
from blackbox.providers.anthropic import KEPT_PARAMS as ANTHROPIC_PARAMS
from blackbox.providers.neutral import compact_json
from blackbox.providers.openai_chat import KEPT_PARAMS as OPENAI_PARAMS

__all__ = [
    "PROVIDERS",
    "anthropic_body",
    "api_key",
    "base_url",
    "infer_provider",
    "key_problem",
    "key_variable",
    "openai_body",
    "request_body",
    "result_text",
]

PROVIDERS = ("anthropic", "openai")
PERMISSIVE_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}
DEFAULT_MAX_TOKENS = 4096  # the Messages API requires max_tokens; a recorded request without one gets this
_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
_URLS = {"anthropic": ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
         "openai": ("OPENAI_BASE_URL", "https://api.openai.com/v1")}
_OPENAI_PREFIXES = ("gpt", "o1", "o3", "o4", "chatgpt", "text-", "davinci", "ft:gpt")


def infer_provider(model: Any) -> str | None:
    """`anthropic` for Claude models, `openai` for GPT and o-series models, None when the name says neither."""
    if not isinstance(model, str):
        return None
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith(_OPENAI_PREFIXES):
        return "openai"
    return None


def key_variable(provider: str) -> str:
    return _KEYS[provider]


def key_problem(provider: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """Why a live run would fail at its first request for want of a key, or None: checked before anything
    starts (the CLI's `fork --live`, the UI's fork screen), so the user is told of the key, not of the agent.
    `provider` None (the recorded model names neither) accepts either key."""
    values = os.environ if env is None else env
    names = [key_variable(provider)] if provider else [key_variable(p) for p in PROVIDERS]
    if any(values.get(name, "").strip() for name in names):
        return None
    return f"{' or '.join(names)} is not set: a live run needs the API key in the environment"


def api_key(provider: str, env: Mapping[str, str] | None = None) -> str:
    """The provider's key from the environment; a clear error naming the variable when it is missing."""
    value = (os.environ if env is None else env).get(_KEYS[provider], "").strip()
    if not value:
        raise UsageError(f"{_KEYS[provider]} is not set: a live continuation sends the requests to the "
                         f"{provider} API; export the key, or continue from scripted replies instead")
    return value


def base_url(provider: str, env: Mapping[str, str] | None = None) -> str:
    """The API's base URL: $ANTHROPIC_BASE_URL / $OPENAI_BASE_URL when set (a proxy, a test server)."""
    variable, default = _URLS[provider]
    return ((os.environ if env is None else env).get(variable, "").strip() or default).rstrip("/")


def result_text(part: Mapping[str, Any]) -> str:
    """A tool result as the text a provider takes: strings as they are, anything else as compact JSON."""
    value = part.get("error") if "error" in part else part.get("result")
    return value if isinstance(value, str) else compact_json(value)


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [part for part in content if isinstance(part, dict)] if isinstance(content, list) else []


def _sent_as(kept: Mapping[str, str], **prefer: str) -> dict[str, str]:
    """A provider's kept-params table backwards: each neutral name as one request field (several fields may
    stand for one name, and the API refuses more than one of them); `prefer` picks the field for a name."""
    fields: dict[str, str] = {}
    for field, neutral in kept.items():
        fields.setdefault(neutral, field)
    return {**fields, **prefer}


_ANTHROPIC_FIELDS = _sent_as(ANTHROPIC_PARAMS)
_OPENAI_FIELDS = _sent_as(OPENAI_PARAMS, maxTokens="max_completion_tokens")  # the field every model takes


def _params(payload: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
    found = payload.get("params")
    params: Mapping[str, Any] = found if isinstance(found, dict) else {}
    return {field: params[neutral] for neutral, field in fields.items() if params.get(neutral) is not None}


def anthropic_body(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A Messages API request body for a neutral `model_input`."""
    messages: list[dict[str, Any]] = []
    for message in payload.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = "assistant" if message.get("role") == "assistant" else "user"
        if isinstance(message.get("content"), str):
            messages.append({"role": role, "content": message["content"]})
            continue
        blocks: list[dict[str, Any]] = []
        for part in _parts(message.get("content")):
            kind = part.get("type")
            if kind == "text" and part.get("text"):
                blocks.append({"type": "text", "text": part["text"]})
            elif kind == "tool_use":
                blocks.append({"type": "tool_use", "id": part.get("toolCallId"), "name": part.get("toolName"),
                               "input": part.get("toolInput") if isinstance(part.get("toolInput"), dict) else {}})
            elif kind == "tool_result":
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.get("toolCallId"),
                                         "content": result_text(part)}
                if "error" in part:
                    block["is_error"] = True
                blocks.append(block)
        messages.append({"role": role, "content": blocks})
    body: dict[str, Any] = {"model": payload.get("model"), "messages": messages}
    body.update(_params(payload, _ANTHROPIC_FIELDS))
    body.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
    if isinstance(payload.get("systemPrompt"), str):
        body["system"] = payload["systemPrompt"]
    tools = [{"name": tool.get("name"), "description": tool.get("description") or "",
              "input_schema": tool.get("inputSchema") or PERMISSIVE_SCHEMA}
             for tool in payload.get("tools") or [] if isinstance(tool, dict)]
    if tools:
        body["tools"] = tools
    return body


def openai_body(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat Completions request body for a neutral `model_input`."""
    messages: list[dict[str, Any]] = []
    if isinstance(payload.get("systemPrompt"), str):
        messages.append({"role": "system", "content": payload["systemPrompt"]})
    for message in payload.get("messages") or []:
        if not isinstance(message, dict):
            continue
        parts = _parts(message.get("content"))
        text = "\n\n".join(p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str))
        if message.get("role") == "assistant":
            out: dict[str, Any] = {"role": "assistant", "content": text or None}
            calls = [{"id": p.get("toolCallId"), "type": "function",
                      "function": {"name": p.get("toolName"),
                                   "arguments": json.dumps(p.get("toolInput") or {}, ensure_ascii=False)}}
                     for p in parts if p.get("type") == "tool_use"]
            if calls:
                out["tool_calls"] = calls
            messages.append(out)
            continue
        for part in parts:
            if part.get("type") == "tool_result":
                messages.append({"role": "tool", "tool_call_id": part.get("toolCallId"),
                                 "content": result_text(part)})
        if text or not any(p.get("type") == "tool_result" for p in parts):
            messages.append({"role": "user", "content": text})
    body: dict[str, Any] = {"model": payload.get("model"), "messages": messages}
    body.update(_params(payload, _OPENAI_FIELDS))
    tools = [{"type": "function", "function": {"name": tool.get("name"), "description": tool.get("description") or "",
                                               "parameters": tool.get("inputSchema") or PERMISSIVE_SCHEMA}}
             for tool in payload.get("tools") or [] if isinstance(tool, dict)]
    if tools:
        body["tools"] = tools
    return body


def request_body(provider: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    return anthropic_body(payload) if provider == "anthropic" else openai_body(payload)
