"""The second reading of `--from otel`: spans by the OpenInference conventions (Arize's, written by
`openinference-instrumentation-*`, e.g. for the OpenAI Agents SDK, which has no OpenTelemetry output of its own)
restated as the GenAI spans `importers.otel` reads (docs/format.md, "Import", "OpenTelemetry").

OpenInference flattens messages into indexed attributes (`llm.input_messages.3.message.tool_calls.0.tool_call.id`)
and its tool spans carry no call id; the id is taken from the call of the model span before it with the same
name (and arguments, when several match).
"""

from __future__ import annotations

from typing import Any

import msgspec

from blackbox.importers.common import json_or_text
from blackbox.importers.otel_spans import Span

__all__ = ["KIND", "genai_spans"]

KIND = "openinference.span.kind"
_USAGE = {"llm.token_count.prompt": "gen_ai.usage.input_tokens",
          "llm.token_count.completion": "gen_ai.usage.output_tokens",
          "llm.token_count.prompt_details.cache_read": "gen_ai.usage.cache_read.input_tokens",
          "llm.token_count.prompt_details.cache_write": "gen_ai.usage.cache_creation.input_tokens",
          "llm.token_count.completion_details.reasoning": "gen_ai.usage.reasoning.output_tokens"}
_PARAMS = {"max_tokens": "max_tokens", "max_output_tokens": "max_tokens", "max_completion_tokens": "max_tokens",
           "temperature": "temperature", "top_p": "top_p", "seed": "seed",
           "frequency_penalty": "frequency_penalty", "presence_penalty": "presence_penalty"}


def _indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.N.rest = v` attributes as one `{rest: v}` dict per index N, in index order."""
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix + "."):
            index, _, rest = key[len(prefix) + 1:].partition(".")
            if index.isdigit() and rest:
                groups.setdefault(int(index), {})[rest] = value
    return [groups[i] for i in sorted(groups)]


def _message(fields: dict[str, Any]) -> dict[str, Any]:
    """One flattened OpenInference message as a GenAI `{role, parts}` message."""
    role = fields.get("message.role")
    content = fields.get("message.content")
    if role == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": fields.get("message.tool_call_id"),
                                           "response": content if content is not None else ""}]}
    texts = [c.get("message_content.text") for c in _indexed(fields, "message.contents")
             if c.get("message_content.type") == "text"]
    if not texts and isinstance(content, str) and content:
        texts = [content]
    parts: list[dict[str, Any]] = [{"type": "text", "content": t} for t in texts if isinstance(t, str)]
    for call in _indexed(fields, "message.tool_calls"):
        arguments = call.get("tool_call.function.arguments")
        parts.append({"type": "tool_call", "id": call.get("tool_call.id"), "name": call.get("tool_call.function.name"),
                      "arguments": json_or_text(arguments) if isinstance(arguments, str) else arguments})
    return {"role": role, "parts": parts}


def _messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The messages, an assistant's text and its calls (which OpenInference lists one per message) joined."""
    out: list[dict[str, Any]] = []
    for fields in _indexed(attributes, prefix):
        message = _message(fields)
        if out and message["role"] == "assistant" and out[-1]["role"] == "assistant":
            out[-1]["parts"] += message["parts"]
        else:
            out.append(message)
    return out


def _tools(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for tool in _indexed(attributes, "llm.tools"):
        schema = json_or_text(tool["tool.json_schema"]) if isinstance(tool.get("tool.json_schema"), str) else None
        function = schema.get("function", schema) if isinstance(schema, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out.append({"type": "function", "name": function["name"],
                        "description": function.get("description") or "",
                        **({"parameters": function["parameters"]}
                           if isinstance(function.get("parameters"), dict) else {})})
    return out


def _model(span: Span) -> dict[str, Any]:
    a = span.attributes
    out: dict[str, Any] = {"gen_ai.operation.name": "chat"}
    if any(k.startswith("llm.input_messages.") for k in a):
        out["gen_ai.input.messages"] = _messages(a, "llm.input_messages")
    if any(k.startswith("llm.output_messages.") for k in a):
        out["gen_ai.output.messages"] = _messages(a, "llm.output_messages")
    if isinstance(a.get("llm.model_name"), str):
        out["gen_ai.request.model"] = out["gen_ai.response.model"] = a["llm.model_name"]
    if isinstance(a.get("llm.finish_reason"), str):
        out["gen_ai.response.finish_reasons"] = [a["llm.finish_reason"]]
    tools = _tools(a)
    if tools:
        out["gen_ai.tool.definitions"] = tools
    params = json_or_text(a["llm.invocation_parameters"]) if isinstance(a.get("llm.invocation_parameters"),
                                                                          str) else None
    for name, attr in _PARAMS.items():
        if isinstance(params, dict) and isinstance(params.get(name), int | float) \
                and not isinstance(params[name], bool):
            out[f"gen_ai.request.{attr}"] = params[name]
    out.update({genai: a[key] for key, genai in _USAGE.items() if key in a})
    return out


def _tool(span: Span, call_id: str | None) -> dict[str, Any]:
    a = span.attributes
    out: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": a.get("tool.name")}
    if call_id is not None:
        out["gen_ai.tool.call.id"] = call_id
    for key, genai in (("input.value", "gen_ai.tool.call.arguments"), ("output.value", "gen_ai.tool.call.result")):
        if key in a:  # JSON, or plain text (a tool's answer): as the JSON text the GenAI reading decodes
            value = json_or_text(a[key]) if isinstance(a[key], str) else a[key]
            out[genai] = msgspec.json.encode(value).decode()
    return out


class _Calls:
    """The calls the latest model span asked for, each given to the first tool span that matches it."""

    def __init__(self) -> None:
        self.open: list[dict[str, Any]] = []

    def asked(self, attributes: dict[str, Any]) -> None:
        self.open = [p for m in attributes.get("gen_ai.output.messages", []) for p in m["parts"]
                     if p["type"] == "tool_call"]

    def claim(self, span: Span) -> str | None:
        name = span.attributes.get("tool.name")
        value = span.attributes.get("input.value")
        arguments = json_or_text(value) if isinstance(value, str) else value
        same = [c for c in self.open if c["name"] == name]
        call = next((c for c in same if c["arguments"] == arguments), same[0] if same else None)
        if call is None:
            return None
        self.open.remove(call)
        return call["id"] if isinstance(call["id"], str) else None


def genai_spans(spans: list[Span]) -> list[Span]:
    """`spans` with each OpenInference LLM and TOOL span (one without GenAI attributes of its own) restated in
    GenAI attributes; every other span as it is."""
    calls = _Calls()
    restated: dict[int, Span] = {}
    for i in sorted(range(len(spans)), key=lambda i: (spans[i].start_ns, spans[i].end_ns)):
        span = spans[i]
        kind = span.attributes.get(KIND)
        if "gen_ai.operation.name" in span.attributes or kind not in ("LLM", "TOOL"):
            continue
        if kind == "LLM":
            attributes = _model(span)
            calls.asked(attributes)
        else:
            call_id = span.attributes.get("tool_call.id") or span.attributes.get("tool.id")
            attributes = _tool(span, call_id if isinstance(call_id, str) else calls.claim(span))
        restated[i] = msgspec.structs.replace(span, attributes={**span.attributes, **attributes})
    return [restated.get(i, span) for i, span in enumerate(spans)]
