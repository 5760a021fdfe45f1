"""A cassette as OpenTelemetry GenAI spans (docs/format.md, "Export"): pure data, no OpenTelemetry import.

The conventions are pinned at `GENAI_SEMCONV` (gen-ai-dev 1.42.0-dev, "Status: Development"); the names are
written out here rather than taken from `opentelemetry-semantic-conventions`, which lags the GenAI registry.

Ids are derived from the cassette's hashes, so exporting a cassette twice gives the same trace: a backend
de-duplicates instead of showing two runs.  The trace id is taken from the cassette's id and its last step's
hash (two runs that differ in one byte are two traces); a span id from the trace id and its step's hash.  A
fork is its own trace, its root linked to the parent run's tool span at the fork point (when the parent is at
hand: `parent=`).  Payloads are read through their typed views (`format/typed`): a payload that does not fit
its shape gives its span no model, name or content (`?` for a tool's name), never a guess.  Beside the GenAI
attributes each span carries OpenInference's (`openinference.span.kind`, and with content `input.value` and
`output.value`, the same JSON text), which Arize Phoenix fills its Input and Output columns from.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from blackbox.exporters import content
from blackbox.format.cassette import Cassette, Step, Tokens
from blackbox.format.typed import (
    UNSET,
    FinalAnswerView,
    ModelInputView,
    RunCompletedView,
    RunFailedView,
    ToolCallView,
    ToolResultView,
    View,
    mcp_of,
    view,
)

__all__ = ["GENAI_SEMCONV", "Link", "SpanData", "cassette_spans", "fork_point", "span_id", "trace_id"]

GENAI_SEMCONV = "1.42.0-dev"  # the GenAI semantic conventions' version the span names and attributes follow
SCHEMA_URL = "https://opentelemetry.io/schemas/1.42.0"
SCOPE = "blackbox.exporters"

_MS = 1_000_000  # nanoseconds in a millisecond
_US = 1_000  # nanoseconds in a microsecond

# gen_ai.provider.name of each Blackbox provider (the registry's names); a model no provider claims is "unknown"
_PROVIDER_NAMES = {"anthropic": "anthropic", "openai": "openai", "responses": "openai", "gemini": "gcp.gemini",
                   "azure": "azure.ai.openai", "azure-responses": "azure.ai.openai"}
_OPENAI_API_TYPE = {"openai": "chat_completions", "azure": "chat_completions", "responses": "responses",
                    "azure-responses": "responses"}
# neutral request params → gen_ai.request.* (docs/format.md, "Export")
_PARAMS = {"maxTokens": "max_tokens", "temperature": "temperature", "topP": "top_p", "topK": "top_k",
           "stop": "stop_sequences", "seed": "seed", "frequencyPenalty": "frequency_penalty",
           "presencePenalty": "presence_penalty"}
# OpenInference's reading of each span (Arize Phoenix's columns and span kinds), by its gen_ai.operation.name: the
# span kind, and the GenAI content attributes whose JSON text is also its input.value and output.value.  A chat
# span gets no kind: Phoenix derives LLM from gen_ai.operation.name, and MLflow, which reads the kind first,
# would type the span LLM instead of CHAT_MODEL (its chat view).
_OPENINFERENCE: dict[str, tuple[str | None, str, str]] = {
    "invoke_agent": ("AGENT", "gen_ai.input.messages", "gen_ai.output.messages"),
    "chat": (None, "gen_ai.input.messages", "gen_ai.output.messages"),
    "execute_tool": ("TOOL", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")}


class Link(msgspec.Struct, frozen=True):
    trace_id: int
    span_id: int
    attributes: dict[str, Any]


class SpanData(msgspec.Struct):
    """One span, in the terms OTLP carries: ids as integers, times in nanoseconds since the epoch."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    kind: str  # "INTERNAL" | "CLIENT"
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    error: str | None = None  # error.type when the span failed (status ERROR)
    links: list[Link] = msgspec.field(default_factory=list)


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x00".join(("blackbox-otel", *parts)).encode()).digest()


def trace_id(cassette: Cassette) -> int:
    """The trace of a cassette: its id and head hash (a fork differs from its parent in both)."""
    head = cassette.steps[-1].hash if cassette.steps else ""
    return int.from_bytes(_digest("trace", cassette.id, head)[:16], "big") or 1


def span_id(trace: int, key: str) -> int:
    """A span of trace `trace`, keyed by a step's hash (or `root`)."""
    return int.from_bytes(_digest("span", f"{trace:032x}", key)[:8], "big") or 1


def _ns(timestamp: float) -> int:
    return int(timestamp * _MS)


def _times(steps: list[Step]) -> dict[int, int]:
    """Each step's time in nanoseconds by its index: its millisecond, plus a microsecond per step before it in
    that same millisecond (up to 999).  Steps recorded within one millisecond (a scripted model, a quick tool)
    then keep their order in a backend that sorts spans by start time at microsecond precision (Phoenix),
    and a span lasts at least a microsecond; every time stays within its recorded millisecond."""
    out: dict[int, int] = {}
    previous, rank = None, 0
    for step in steps:
        rank = rank + 1 if step.timestamp == previous else 0
        previous = step.timestamp
        out[step.index] = _ns(step.timestamp) + min(rank, 999) * _US
    return out


def _same(value: Any) -> Any:
    return value


def _provider(model: Any) -> tuple[str, str | None]:
    """(gen_ai.provider.name, openai.api.type or None) of a model name, through the provider registry."""
    return _provider_of(model) if isinstance(model, str) else ("unknown", None)


@functools.lru_cache(maxsize=256)
def _provider_of(model: str) -> tuple[str, str | None]:
    from blackbox.providers import for_model

    provider = for_model(model)
    if provider is None:
        return "unknown", None
    return _PROVIDER_NAMES.get(provider.name, provider.name), _OPENAI_API_TYPE.get(provider.name)


def _usage(tokens: Tokens | None) -> dict[str, Any]:
    if tokens is None:
        return {}
    out: dict[str, Any] = {"gen_ai.usage.input_tokens": tokens.input, "gen_ai.usage.output_tokens": tokens.output}
    if tokens.cacheRead is not None:
        out["gen_ai.usage.cache_read.input_tokens"] = tokens.cacheRead
    if tokens.cacheWrite is not None:
        out["gen_ai.usage.cache_creation.input_tokens"] = tokens.cacheWrite
    if tokens.reasoning is not None:
        out["gen_ai.usage.reasoning.output_tokens"] = tokens.reasoning
    return out


def _chat_attributes(model_input: Step, output: Step | None, with_content: bool,
                     redact: Callable[[Any], Any]) -> dict[str, Any]:
    found = view(model_input)
    request = found if isinstance(found, ModelInputView) else None
    model = request.model if request is not None else None
    provider, api_type = _provider(model)
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider}
    if isinstance(model, str):
        attrs["gen_ai.request.model"] = model
        attrs["gen_ai.response.model"] = model  # the cassette keeps the model the request named, no other
    if api_type is not None:
        attrs["openai.api.type"] = api_type
    params: dict[str, Any] = request.params if request is not None and isinstance(request.params, dict) else {}
    for name, attribute in _PARAMS.items():
        value = params.get(name)
        if isinstance(value, str) and attribute == "stop_sequences":
            value = [value]
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            attrs[f"gen_ai.request.{attribute}"] = value
    if isinstance(params.get("responseFormat"), dict) or isinstance(params.get("outputConfig"), dict):
        attrs["gen_ai.output.type"] = "json"
    tools = content.tool_definitions(request.tools if request is not None else [], with_content)
    attrs["gen_ai.tool.definitions"] = content.json_text(tools, redact if with_content else _same)
    attrs["blackbox.step.index"] = model_input.index
    attrs["blackbox.step.hash"] = model_input.hash
    answer = view(output) if output is not None else None
    if output is not None and answer is not None:
        attrs["gen_ai.response.finish_reasons"] = [content.finish_reason(answer)]
        attrs.update(_usage(output.tokens))
        attrs["blackbox.output.step.hash"] = output.hash
    if with_content:
        if request is not None:
            attrs.update(_request_content(request, redact))
        if answer is not None:
            attrs["gen_ai.output.messages"] = content.json_text(content.output_messages(answer), redact)
    return attrs


def _request_content(request: ModelInputView, redact: Callable[[Any], Any]) -> dict[str, Any]:
    """`gen_ai.system_instructions` (when the request has a system prompt) and `gen_ai.input.messages`."""
    attrs: dict[str, Any] = {}
    system = request.systemPrompt
    if isinstance(system, str) and system:
        attrs["gen_ai.system_instructions"] = content.json_text([{"type": "text", "content": system}], redact)
    attrs["gen_ai.input.messages"] = content.json_text(content.input_messages(request.messages), redact)
    return attrs


def _run_content(steps: list[Step], redact: Callable[[Any], Any]) -> dict[str, Any]:
    """The run's own input and answer, for the root span (with content): the first model call's system prompt
    and messages, and the last model output when it is the final answer.  A backend shows them as the run's
    request and response (MLflow's trace list, Phoenix's agent span)."""
    first = next((found for s in steps if s.type == "model_input"
                  and isinstance(found := view(s), ModelInputView)), None)
    attrs = _request_content(first, redact) if first is not None else {}
    last = next((s for s in reversed(steps) if s.type == "model_output"), None)
    answer = view(last) if last is not None else None
    if isinstance(answer, FinalAnswerView):
        attrs["gen_ai.output.messages"] = content.json_text(content.output_messages(answer), redact)
    return attrs


def _tool_attributes(call: Step, result: Step | None, with_content: bool,
                     redact: Callable[[Any], Any]) -> tuple[dict[str, Any], str | None]:
    found = view(call)
    asked = found if isinstance(found, ToolCallView) else None
    attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool",
                             "gen_ai.tool.name": asked.toolName if asked is not None else "?",
                             "gen_ai.tool.type": "function", "blackbox.step.index": call.index,
                             "blackbox.step.hash": call.hash}
    if asked is not None and asked.toolCallId:
        attrs["gen_ai.tool.call.id"] = asked.toolCallId
    mcp = mcp_of(call.payload)
    if mcp is not None:
        attrs["gen_ai.tool.type"] = "extension"
        if isinstance(mcp.server, str):
            attrs["blackbox.mcp.server"] = mcp.server
        if isinstance(mcp.method, str):
            attrs["mcp.method.name"] = mcp.method
    if with_content:
        attrs["gen_ai.tool.call.arguments"] = content.json_text(asked.toolInput if asked is not None else None, redact)
    error: str | None = None
    if result is None:
        return attrs, "incomplete"  # the run ended before the tool returned
    outcome = view(result)
    attrs["blackbox.result.step.hash"] = result.hash
    if isinstance(outcome, ToolResultView) and outcome.failed:
        extra = mcp_of(result.payload)
        code = extra.error.get("code") if extra is not None and isinstance(extra.error, dict) else None
        error = str(code) if isinstance(code, int) and not isinstance(code, bool) else "tool_error"
        if with_content:
            attrs["gen_ai.tool.call.result"] = content.json_text({"error": outcome.error}, redact)
    elif with_content:
        value = outcome.result if isinstance(outcome, ToolResultView) and outcome.result is not UNSET else None
        attrs["gen_ai.tool.call.result"] = content.json_text(value, redact)
    return attrs, error


def _openinference(attrs: dict[str, Any]) -> None:
    """Add OpenInference's attributes to a span's: `openinference.span.kind` on the root and tool spans (a
    classification, no content, so with or without it), and `input.value` / `output.value` (`application/json`)
    only where the span carries the GenAI content they restate (`_OPENINFERENCE`), as the very text written
    there: redacted and masked once, the same."""
    kind, source_in, source_out = _OPENINFERENCE[attrs["gen_ai.operation.name"]]
    if kind is not None:
        attrs["openinference.span.kind"] = kind
    for side, source in (("input", source_in), ("output", source_out)):
        if source in attrs:
            attrs[f"{side}.value"] = attrs[source]
            attrs[f"{side}.mime_type"] = "application/json"


def _call_id(found: View) -> str:
    """A tool step's call id, "" when it has none (or does not fit its shape)."""
    return found.toolCallId if isinstance(found, ToolCallView | ToolResultView) else ""


def _pairs(steps: list[Step]) -> Iterator[tuple[str, Step, Step | None, Step | None]]:
    """(kind, first step, its closing step or None, the step after the pair or None), in step order.

    A tool call's result is the tool_result with its id; one without an id (the demo's fork) the next result
    of the same tool."""
    views = {id(step): view(step) for step in steps if step.type in ("tool_call", "tool_result")}
    results: dict[str, Step] = {}
    for step in steps:
        if step.type == "tool_result" and (call_id := _call_id(views[id(step)])):
            results.setdefault(call_id, step)
    for i, step in enumerate(steps):
        following = steps[i + 1] if i + 1 < len(steps) else None
        if step.type == "model_input":
            output = following if following is not None and following.type == "model_output" else None
            yield "chat", step, output, following
        elif step.type == "tool_call":
            asked = views[id(step)]
            result = results.get(_call_id(asked))
            if result is None and isinstance(asked, ToolCallView) and not asked.toolCallId:
                result = next((s for s in steps[i + 1:] if s.type == "tool_result"
                               and isinstance(found := views[id(s)], ToolResultView) and not found.toolCallId
                               and found.toolName == asked.toolName), None)
            if result is not None and result.index < step.index:
                result = None
            yield "tool", step, result, following


def fork_point(cassette: Cassette, parent: Cassette | None) -> int | None:
    """Where a fork leaves its parent: the first step that differs from it (the parent at hand), else the index
    `forkedFromStepId` names."""
    if cassette.parentId is None:
        return None
    if parent is not None:
        return next((i for i, (a, b) in enumerate(zip(cassette.steps, parent.steps, strict=False)) if a.hash != b.hash),
                    min(len(cassette.steps), len(parent.steps)))
    at = cassette.forkedFromStepId
    tail = at.rsplit(":", 1)[-1] if isinstance(at, str) else ""
    return int(tail) if tail.isdigit() and int(tail) < len(cassette.steps) else None


def _root(cassette: Cassette, trace: int, parent: Cassette | None, times: dict[int, int],
          run_content: dict[str, Any]) -> SpanData:
    steps = cassette.steps
    last = view(steps[-1]) if steps and steps[-1].type == "metadata" else None
    attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", "blackbox.cassette.id": cassette.id,
                             "blackbox.cassette.head_hash": steps[-1].hash if steps else "",
                             "blackbox.format_version": cassette.version, "blackbox.created_at": cassette.createdAt}
    error: str | None = None
    if isinstance(last, RunFailedView):
        error = last.reason if isinstance(last.reason, str) else "run_failed"
    elif not isinstance(last, RunCompletedView):
        attrs["blackbox.run.incomplete"] = True
    attrs.update(run_content)
    links: list[Link] = []
    if cassette.parentId is not None:
        attrs["blackbox.fork.parent_id"] = cassette.parentId
        at = fork_point(cassette, parent)
        if at is not None:
            attrs["blackbox.fork.at_step"] = at
        if parent is not None and at is not None and at < len(parent.steps):
            attrs["blackbox.fork.parent_head_hash"] = parent.steps[-1].hash
            parent_trace = trace_id(parent)
            anchor = _call_of(parent.steps, at)
            links.append(Link(parent_trace, span_id(parent_trace, anchor.hash if anchor else "root"),
                              {"blackbox.fork.at_step": at, "blackbox.link": "forked_from"}))
    start = times[steps[0].index] if steps else _ns(cassette.createdAt)
    end = times[steps[-1].index] if steps else start
    return SpanData("invoke_agent", trace, span_id(trace, "root"), None, "INTERNAL", start, end, attrs,
                    error, links)


def _call_of(steps: list[Step], at: int) -> Step | None:
    """The parent's tool_call whose span the fork at step `at` links to: the call of the result there (by id),
    else the last tool call before it."""
    call_id = _call_id(view(steps[at]))
    calls = [(s, found) for s in steps[:at] if s.type == "tool_call" and isinstance(found := view(s), ToolCallView)]
    return next((s for s, found in reversed(calls) if found.toolCallId == call_id), calls[-1][0] if calls else None)


def _failed_call(following: Step | None) -> str:
    """error.type of a model call with no output: the run's error kind when it failed there, else incomplete."""
    ended = view(following) if following is not None else None
    kind = ended.errorKind if isinstance(ended, RunFailedView) else None
    return kind if isinstance(kind, str) else "incomplete"


def cassette_spans(cassette: Cassette, *, with_content: bool = False, parent: Cassette | None = None,
                   redact: Callable[[Any], Any] | None = None) -> list[SpanData]:
    """The spans of one cassette: the `invoke_agent` root, then a `chat` or `execute_tool` span per call, each
    also read as OpenInference (`_openinference`).

    `redact` is applied to every piece of content before it is written (`content.redact`, the redaction
    policy, by default); keys are masked after it in any case."""
    policy = redact or content.redact
    trace = trace_id(cassette)
    times = _times(cassette.steps)
    root = _root(cassette, trace, parent, times, _run_content(cassette.steps, policy) if with_content else {})
    spans = [root]
    at = fork_point(cassette, parent)
    original = parent.steps[at] if parent is not None and at is not None and at < len(parent.steps) else None
    for kind, first, closing, following in _pairs(cassette.steps):
        end_step = closing or following or first
        if kind == "chat":
            attrs = _chat_attributes(first, closing, with_content, policy)
            model = attrs.get("gen_ai.request.model")
            name = f"chat {model}" if model else "chat"
            error = None if closing is not None else _failed_call(following)
            spans.append(SpanData(name, trace, span_id(trace, first.hash), root.span_id, "CLIENT",
                                  times[first.index], times[end_step.index], attrs, error))
            continue
        attrs, error = _tool_attributes(first, closing, with_content, policy)
        if closing is not None and at is not None and closing.index == at:
            attrs["blackbox.fork.edited"] = True
            if original is not None:
                attrs["blackbox.fork.original_hash"] = original.hash
        spans.append(SpanData(f"execute_tool {attrs['gen_ai.tool.name']}", trace, span_id(trace, first.hash),
                              root.span_id, "INTERNAL", times[first.index], times[end_step.index], attrs, error))
    for span in spans:
        _openinference(span.attributes)
    return spans
