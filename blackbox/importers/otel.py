"""Import a production trace: OpenTelemetry GenAI spans that carry content → a cassette (docs/format.md,
"Import", "OpenTelemetry").

Model spans (`gen_ai.operation.name` chat / generate_content / text_completion) become a `model_input` (from
`gen_ai.input.messages`, `gen_ai.system_instructions`, `gen_ai.tool.definitions`, `gen_ai.request.*`) at the
span's start and a `model_output` (from `gen_ai.output.messages`, finish reasons, `gen_ai.usage.*` as the step's
`tokens`) at its end; `execute_tool` spans a `tool_call` and its `tool_result`; all in time order, each tool run
after the model call that asked for it.  Provider tool-call ids become Blackbox's `call-N`.  A trace whose
model spans carry no content cannot be replayed, so it is refused, never guessed at.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from blackbox.format.canonical import json_value
from blackbox.format.cassette import Cassette, StepChain, Tokens
from blackbox.importers.common import (
    DEFAULT_TRACE_ID,
    Importer,
    Reading,
    TranscriptError,
    default_trace_id,
    json_numbers,
    json_or_text,
)
from blackbox.importers.decoding import decode_string
from blackbox.importers.otel_openinference import genai_spans
from blackbox.importers.otel_spans import Span, read_spans

__all__ = ["Otel", "import_otel"]

_MODEL_OPERATIONS = ("chat", "generate_content", "text_completion")
_PARAMS = {"max_tokens": "maxTokens", "temperature": "temperature", "top_p": "topP", "top_k": "topK",
           "stop_sequences": "stop", "seed": "seed", "frequency_penalty": "frequencyPenalty",
           "presence_penalty": "presencePenalty"}
NO_CONTENT = ("the trace's model spans carry no message content (gen_ai.input.messages, OpenInference's "
              "llm.input_messages), so no run can be "
              "rebuilt from them; export it with content capture on (blackbox export --content, or the "
              "instrumentation's capture-content option)")


def _operation(span: Span) -> str | None:
    op = span.attributes.get("gen_ai.operation.name")
    if isinstance(op, str):
        return op
    head = span.name.split(" ", 1)[0]
    return head if head in (*_MODEL_OPERATIONS, "execute_tool") else None


def _json_attr(span: Span, key: str) -> Any:
    """An attribute that holds JSON: its text decoded (a span attribute), or the value (already structured)."""
    value = span.attributes.get(key)
    if isinstance(value, str) and value.strip(" \t\r\n")[:1] in ("[", "{"):
        return decode_string(value.strip(" \t\r\n"), f"{span.where}: attribute {key}", "an OpenTelemetry trace")
    return json_or_text(value) if isinstance(value, str) else value


class _Ids:
    """Provider tool-call ids → `call-N`, in the order they first appear."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.names: dict[str, str] = {}

    def of(self, raw: Any, name: Any = None) -> str:
        key = raw if isinstance(raw, str) and raw else f"\0{len(self.ids)}"
        if key not in self.ids:
            self.ids[key] = f"call-{len(self.ids)}"
        if isinstance(name, str):
            self.names.setdefault(self.ids[key], name)
        return self.ids[key]


def _text(parts: list[Any]) -> str:
    return "".join(p.get("content", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"
                   and isinstance(p.get("content"), str))


def _neutral_parts(parts: list[Any], ids: _Ids, where: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise TranscriptError(f"{where}.parts[{i}] must be an object")
        kind = part.get("type")
        if kind == "text":
            out.append({"type": "text", "text": part.get("content") if isinstance(part.get("content"), str) else ""})
        elif kind == "tool_call":
            name = part.get("name")
            arguments = part.get("arguments")
            if isinstance(arguments, str):
                arguments = json_or_text(arguments)
            out.append({"type": "tool_use", "toolCallId": ids.of(part.get("id"), name), "toolName": str(name),
                        "toolInput": {} if arguments is None else arguments})
        elif kind == "tool_call_response":
            call_id = ids.of(part.get("id"))
            name = part.get("name") if isinstance(part.get("name"), str) else ids.names.get(call_id, "")
            response = part.get("response", part.get("result"))
            if part.get("error") is True:
                out.append({"type": "tool_result", "toolCallId": call_id, "toolName": name, "error": str(response)})
            else:
                out.append({"type": "tool_result", "toolCallId": call_id, "toolName": name,
                            "result": json_or_text(response) if isinstance(response, str) else response})
        elif kind == "reasoning":
            continue  # thinking is not part of a neutral request
        else:
            out.append({"type": "text", "text": f"[{kind if isinstance(kind, str) else 'part'} omitted]"})
    return out


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    return parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts


def _messages(span: Span, ids: _Ids) -> tuple[list[dict[str, Any]], str | None]:
    """The neutral messages of a model span's input, and a system prompt it carried as a message."""
    raw = _json_attr(span, "gen_ai.input.messages")
    if not isinstance(raw, list):
        raise TranscriptError(f"{span.where}: gen_ai.input.messages must be a JSON array of messages")
    messages: list[dict[str, Any]] = []
    system: list[str] = []
    for i, message in enumerate(raw):
        where = f"{span.where}: gen_ai.input.messages[{i}]"
        if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
            raise TranscriptError(f"{where} must be an object with `parts`")
        role = message.get("role")
        if role == "system":
            system.append(_text(message["parts"]))
            continue
        parts = _neutral_parts(message["parts"], ids, where)
        if role == "tool":
            if messages and messages[-1]["role"] == "user" and isinstance(messages[-1]["content"], list) \
                    and all(p["type"] == "tool_result" for p in messages[-1]["content"]):
                messages[-1]["content"] += parts  # one user message holds a round's results
                continue
            messages.append({"role": "user", "content": parts})
        elif role in ("user", "assistant"):
            messages.append({"role": role, "content": _content(parts)})
        else:
            raise TranscriptError(f"{where}.role must be system, user, assistant or tool")
    return messages, "\n".join(system) if system else None


def _tools(span: Span) -> list[dict[str, Any]]:
    raw = _json_attr(span, "gen_ai.tool.definitions")
    out = []
    for tool in raw if isinstance(raw, list) else []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            entry: dict[str, Any] = {"name": tool["name"], "description": tool.get("description") or ""}
            if isinstance(tool.get("parameters"), dict):
                entry["inputSchema"] = tool["parameters"]
            out.append(entry)
    return out


def _model_input(span: Span, ids: _Ids) -> dict[str, Any]:
    messages, system = _messages(span, ids)
    payload: dict[str, Any] = {"messages": messages, "tools": _tools(span)}
    instructions = _json_attr(span, "gen_ai.system_instructions")
    if isinstance(instructions, list):
        system = _text(instructions) or system
    if system:
        payload["systemPrompt"] = system
    model = span.attributes.get("gen_ai.request.model")
    if isinstance(model, str) and model:
        payload["model"] = model
    params = {name: span.attributes[f"gen_ai.request.{attr}"] for attr, name in _PARAMS.items()
              if span.attributes.get(f"gen_ai.request.{attr}") is not None}
    if params:
        payload["params"] = params
    return payload


def _model_output(span: Span, ids: _Ids) -> dict[str, Any]:
    raw = _json_attr(span, "gen_ai.output.messages")
    if not isinstance(raw, list):
        raise TranscriptError(f"{span.where}: gen_ai.output.messages must be a JSON array of messages (the model's "
                              "answer); a model call without it cannot be replayed")
    parts = [p for m in raw if isinstance(m, dict) and isinstance(m.get("parts"), list)
             for p in _neutral_parts(m["parts"], ids, f"{span.where}: gen_ai.output.messages")]
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    calls = [{k: p[k] for k in ("toolCallId", "toolName", "toolInput")} for p in parts if p["type"] == "tool_use"]
    reasons = span.attributes.get("gen_ai.response.finish_reasons")
    if not isinstance(reasons, list):
        reasons = [m.get("finish_reason") for m in raw if isinstance(m, dict)]
    stop = "length" if "length" in reasons else "refusal" if "content_filter" in reasons else None
    if calls:
        out: dict[str, Any] = {"type": "tool_calls", "calls": calls}
        if text:
            out["text"] = text
        if stop == "length":
            out["stop"] = "length"
        return out
    final: dict[str, Any] = {"type": "final_answer", "text": text}
    if stop is not None:
        final["stop"] = stop
    return final


def _tokens(span: Span) -> Tokens | None:
    a = span.attributes
    def num(key: str) -> int | None:
        value = a.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
    if num("gen_ai.usage.input_tokens") is None and num("gen_ai.usage.output_tokens") is None:
        return None
    return Tokens(num("gen_ai.usage.input_tokens") or 0, num("gen_ai.usage.output_tokens") or 0,
                  num("gen_ai.usage.cache_read.input_tokens"),
                  next((n for n in (num("gen_ai.usage.cache_creation.input_tokens"),  # the conventions' name,
                                    num("gen_ai.usage.cache_write.input_tokens")) if n is not None), None),  # older
                  num("gen_ai.usage.reasoning.output_tokens"))


def _tool_steps(span: Span, ids: _Ids) -> tuple[dict[str, Any], dict[str, Any]]:
    name = span.attributes.get("gen_ai.tool.name")
    if not isinstance(name, str) or not name:
        name = span.name.split(" ", 1)[1] if " " in span.name else ""
    if not name:
        raise TranscriptError(f"{span.where}: an execute_tool span without gen_ai.tool.name")
    call_id = ids.of(span.attributes.get("gen_ai.tool.call.id"), name)
    arguments = _json_attr(span, "gen_ai.tool.call.arguments")
    call = {"toolCallId": call_id, "toolName": name, "toolInput": {} if arguments is None else arguments}
    if span.error:
        message = span.attributes.get("gen_ai.tool.call.result")
        error = json_or_text(message) if isinstance(message, str) else message
        if isinstance(error, dict) and "error" in error:
            error = error["error"]
        text = error if isinstance(error, str) else str(span.attributes.get("error.type") or "tool error")
        return call, {"toolCallId": call_id, "toolName": name, "error": text}
    result = _json_attr(span, "gen_ai.tool.call.result") if "gen_ai.tool.call.result" in span.attributes else None
    return call, {"toolCallId": call_id, "toolName": name, "result": result}


def _one_trace(spans: list[Span]) -> list[Span]:
    genai = [s for s in spans if _operation(s) in (*_MODEL_OPERATIONS, "execute_tool")]
    if not genai:
        raise TranscriptError("no GenAI spans in the trace (no span has gen_ai.operation.name chat or execute_tool); "
                              "export it from a GenAI instrumentation")
    traces = {s.trace_id for s in genai}
    if len(traces) > 1:
        raise TranscriptError(f"the file holds {len(traces)} traces with GenAI spans; import one trace per file")
    for span in genai:
        if span.end_ns < span.start_ns:
            raise TranscriptError(f"{span.where}: the span ends before it starts; the trace is damaged")
    return sorted(genai, key=_order)


def _order(span: Span) -> tuple[int, float, int]:
    """Time order; spans that start in the same instant by Blackbox's step index when it exported them."""
    index = span.attributes.get("blackbox.step.index")
    return span.start_ns, index if isinstance(index, int) and not isinstance(index, bool) else float("inf"), \
        span.end_ns


def _ms(ns: int) -> int:
    return ns // 1_000_000


def _turns(ordered: list[Span]) -> list[tuple[Span, list[Span]]]:
    """Each model span with the tool spans that run after it and before the next model call."""
    turns: list[tuple[Span, list[Span]]] = []
    for span in ordered:
        if _operation(span) in _MODEL_OPERATIONS:
            turns.append((span, []))
        elif turns:
            turns[-1][1].append(span)
        else:
            raise TranscriptError(f"{span.where}: a tool span before the first model call; a run starts with one")
    return turns


def import_spans(spans: list[Span], trace_id: str = DEFAULT_TRACE_ID) -> Cassette:
    spans = genai_spans(spans)  # OpenInference's spans read as GenAI spans
    ordered = _one_trace(spans)
    models = [s for s in ordered if _operation(s) in _MODEL_OPERATIONS]
    if not models:
        raise TranscriptError("the trace has tool spans but no model span (chat); nothing to replay")
    if not all("gen_ai.input.messages" in s.attributes for s in models):
        raise TranscriptError(NO_CONTENT)
    chain = StepChain(trace_id)
    ids = _Ids()
    last_time = 0
    root_error = next((s for s in spans if s.parent_id is None and s.error), None)
    output: dict[str, Any] = {}
    for model, mine in _turns(ordered):
        if _ms(model.start_ns) < last_time:
            raise TranscriptError(f"{model.where}: the model call starts before the previous call's tools "
                                  "returned; overlapping model calls cannot be one run")
        chain.append("model_input", _ms(model.start_ns), json_value(_model_input(model, ids)))
        output = _model_output(model, ids)
        step = chain.append("model_output", _ms(model.end_ns), json_value(output))
        step.tokens = _tokens(model)
        last_time = _ms(model.end_ns)
        if output["type"] == "tool_calls":  # in the model's call order, as a recorder writes them
            order = {c["toolCallId"]: i for i, c in enumerate(output["calls"])}
            mine.sort(key=lambda t: order.get(ids.of(t.attributes.get("gen_ai.tool.call.id")), len(order)))
        for tool in mine:
            call, result = _tool_steps(tool, ids)
            chain.append("tool_call", max(_ms(tool.start_ns), last_time), json_value(call))
            last_time = max(last_time, _ms(tool.end_ns))
            chain.append("tool_result", last_time, json_value(result))
    end = chain.steps[-1].timestamp
    if root_error is not None:
        reason = root_error.attributes.get("error.type")
        chain.append("metadata", end, {"event": "run_failed", "status": "error", "reason": "agent_error",
                                       "message": str(reason) if reason else "the traced run failed"})
    elif output.get("type") == "final_answer":
        chain.append("metadata", end, {"event": "run_completed", "status": "success", "result": output["text"]})
    return chain.cassette(_ms(ordered[0].start_ns))


def import_otel(path: str | os.PathLike[str], trace_id: str | None = None) -> Cassette:
    return import_spans(read_spans(Path(path)), trace_id or default_trace_id(path))


class Otel(Importer):
    name = "otel"
    description = ("an OpenTelemetry GenAI trace with content: OTLP JSON (a request, or JSON lines of them) or "
                   "MLflow's trace JSON")
    patterns = ("*.json", "*.jsonl")

    def import_file(self, path: str | os.PathLike[str], trace_id: str | None = None,
                    progress: Reading = None) -> Cassette:
        with json_numbers():
            return import_otel(path, trace_id)
