"""Anthropic Messages API ↔ neutral steps.

A pure codec: `normalize_request` and `normalize_response` turn what the SDK sends and receives into the
provider-neutral `model_input` / `model_output` payloads (dropping ids, usage and everything else that
varies between runs); `synthesize_response` rebuilds a Messages response from a recorded output for replay.
The parts that read the provider's data (its `kept_params`) are methods of `Anthropic`; the module's functions
of those names are the provider's methods.
Anything that could not be recorded and replayed faithfully is refused before the request leaves the process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from blackbox.apis import facts
from blackbox.format.payloads import ModelInput, ModelOutput, ToolCall
from blackbox.providers import anthropic_stream, origins
from blackbox.providers import token_counts as counts
from blackbox.providers.anthropic_threads import threads_of
from blackbox.providers.base import CodecProvider
from blackbox.providers.neutral import (
    CallIds,
    answer_of,
    neutral_tool,
    tool_list,
    unsupported,
)
from blackbox.providers.outgoing import kept, messages_of, parts, result_text, tools_of
from blackbox.wire import Request

__all__ = [
    "KEPT_PARAMS",
    "PROVIDER",
    "build_request",
    "error_body",
    "normalize_request",
    "normalize_response",
    "synthesize_response",
]

#: Request controls that change the model's behaviour, and their neutral `params` names.
KEPT_PARAMS: Mapping[str, str] = {
    "max_tokens": "maxTokens",
    "temperature": "temperature",
    "top_p": "topP",
    "top_k": "topK",
    "tool_choice": "toolChoice",
    "stop_sequences": "stop",
    "output_config": "outputConfig",
    "thinking": "thinking",
}

_THINKING = ("thinking", "redacted_thinking")
_OK_STOPS = ("end_turn", "tool_use", "max_tokens", "refusal", None)


def error_body(message: str) -> dict[str, Any]:
    """Anthropic's 400 error shape, which the SDK raises as `BadRequestError` without retrying."""
    if not message.startswith("[blackbox]"):
        message = f"[blackbox] {message}"
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


# ---------------------------------------------------------------------------------------------------------
# request


def _refuse_server_history(body: dict[str, Any]) -> None:
    """Refuse what makes the server change the conversation the request sends: the model would answer from a
    history no cassette holds (the runner's `compact_before_next_turn()`, a compaction edit)."""
    if body.get("compaction") is not None:
        raise unsupported("server-side compaction (compaction, the runner's compact_before_next_turn())",
                          "let the run's conversation grow, or summarize it in the agent and send the summary")
    management = body.get("context_management")
    edits = management.get("edits") if isinstance(management, dict) else None
    if any(isinstance(edit, dict) and str(edit.get("type", "")).startswith("compact") for edit in edits or ()):
        raise unsupported("a compaction edit in context_management", "drop it from context_management")


def _system(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        texts = []
        for block in system:
            if not isinstance(block, dict) or block.get("type") != "text":
                kind = block.get("type") if isinstance(block, dict) else type(block).__name__
                raise unsupported(f"a {kind!r} block in the system prompt", "use text blocks only")
            texts.append(block.get("text") or "")
        return "\n\n".join(texts)
    raise unsupported(f"a system prompt of type {type(system).__name__}", "pass a string or text blocks")


def _tools(tools: Any) -> list[dict[str, Any]]:
    out = []
    for tool in tool_list(tools):
        kind = tool.get("type")
        if kind not in (None, "custom"):
            raise unsupported(
                f"the server tool {kind!r}",
                "Blackbox records custom tools only; implement it as a custom tool the agent runs",
            )
        if tool.get("strict"):
            raise unsupported(f"strict tool {tool.get('name')!r}", "drop strict=True from the tool")
        out.append(neutral_tool(tool.get("name"), tool.get("description"), tool.get("input_schema")))
    return out


def _message(message: dict[str, Any], ids: CallIds) -> dict[str, Any]:
    role = "assistant" if message.get("role") == "assistant" else "user"
    content = message.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        raise unsupported(
            f"message content of type {type(content).__name__}", "send a string or a list of content blocks"
        )
    if role == "assistant":
        return {"role": role, "content": _assistant_parts(content, ids)}
    return {"role": role, "content": _user_parts(content, ids)}


def _block_type(block: Any) -> Any:
    return block.get("type") if isinstance(block, dict) else type(block).__name__


def _assistant_parts(blocks: list[Any], ids: CallIds) -> list[dict[str, Any]]:
    """One leading text part (all non-empty text joined), then the tool_use parts: block boundaries vary."""
    texts: list[str] = []
    uses: list[dict[str, Any]] = []
    for block in blocks:
        kind = _block_type(block)
        if kind in _THINKING:
            continue
        if kind == "text":
            if block.get("text"):
                texts.append(block["text"])
        elif kind == "tool_use":
            uses.append({"type": "tool_use", **_call(block, ids)})
        else:
            raise unsupported(f"{kind!r} content blocks in an assistant message", _BLOCK_ADVICE)
    parts: list[dict[str, Any]] = []
    if texts:
        parts.append({"type": "text", "text": "\n\n".join(texts)})
    return parts + uses


def _call(block: dict[str, Any], ids: CallIds) -> ToolCall:
    """A `tool_use` block (in a response or the history) as a neutral call: its id mapped to `call-N`."""
    call_id = ids.neutral(block["id"])
    ids.note_name(call_id, block["name"])
    tool_input = block.get("input")
    return {"toolCallId": call_id, "toolName": block["name"], "toolInput": {} if tool_input is None else tool_input}


_BLOCK_ADVICE = "send text, tool_use and tool_result blocks only"


def _user_parts(blocks: list[Any], ids: CallIds) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        kind = _block_type(block)
        if kind in _THINKING:
            continue
        if kind == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif kind == "tool_result":
            parts.append(_tool_result(block, ids))
        elif kind in ("tool_addition", "tool_removal"):  # the tool runner's add_tools() / remove_tools()
            raise unsupported(f"{kind!r} blocks (tools changed inside the conversation)",
                              "give the agent every tool when the run starts instead of add_tools()/remove_tools()")
        else:
            raise unsupported(f"{kind!r} content blocks in a user message", _BLOCK_ADVICE)
    return parts


def _tool_result(block: dict[str, Any], ids: CallIds) -> dict[str, Any]:
    provider_id: Any = block.get("tool_use_id")
    call_id = ids.neutral(provider_id)
    name = ids.name_of(call_id)
    if name is None:
        raise unsupported(
            f"a tool_result for {provider_id!r} whose tool_use is not in the conversation",
            "send the assistant message that asked for the tool along with its result",
        )
    text = _tool_result_text(block.get("content"))
    if block.get("is_error"):
        return {"type": "tool_result", "toolCallId": call_id, "toolName": name, "error": text}
    return {"type": "tool_result", "toolCallId": call_id, "toolName": name, "result": text}


def _tool_result_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for block in content:
            if _block_type(block) != "text":
                raise unsupported(f"{_block_type(block)!r} blocks in a tool_result", "return text from tools")
            texts.append(block.get("text") or "")
        return "\n\n".join(texts)
    raise unsupported(f"tool_result content of type {type(content).__name__}", "return text from tools")


# ---------------------------------------------------------------------------------------------------------
# response


def normalize_response(body: dict[str, Any], ids: CallIds) -> ModelOutput:
    """The neutral `model_output` payload of a Messages response (ids → `call-N`, usage and ids dropped)."""
    with ids.undo_on_error():
        return _normalize_response(body, ids)


def _normalize_response(body: dict[str, Any], ids: CallIds) -> ModelOutput:
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, list):
        raise unsupported("a Messages response without a content list", "check the API endpoint")
    if body.get("stop_details") is not None:
        raise unsupported("a response with stop_details", "this response cannot be replayed faithfully")
    if body.get("container") is not None:
        raise unsupported("a response with a code-execution container", "drop server tools")
    stop_reason = body.get("stop_reason")
    if stop_reason not in _OK_STOPS:
        advice = {
            "pause_turn": "server tools that pause the turn cannot be replayed; use custom tools",
            "stop_sequence": "drop stop_sequences from the request",
            "model_context_window_exceeded": "shorten the conversation",
        }.get(stop_reason, "this response cannot be replayed faithfully")
        raise unsupported(f"the stop reason {stop_reason!r}", advice)

    text: str | None = None
    calls: list[ToolCall] = []
    for block in content:
        kind = _block_type(block)
        if kind in _THINKING:
            continue
        if kind == "text":
            if block.get("citations"):
                raise unsupported("text with citations", "turn citations off for recorded runs")
            if not block.get("text"):
                continue
            if calls:
                raise unsupported("text after a tool_use in a response", "this response cannot be replayed")
            if text is not None:
                raise unsupported("more than one text block in a response", "it cannot be replayed")
            text = block["text"]
        elif kind == "tool_use":
            calls.append(_call(block, ids))
        else:
            raise unsupported(f"{kind!r} content blocks in a response", "use custom tools only")

    if calls:
        if stop_reason == "refusal":
            raise unsupported("a refusal with tool calls", "this response cannot be replayed faithfully")
        output: dict[str, Any] = {"type": "tool_calls", "calls": calls}
        if text:
            output["text"] = text
        if stop_reason == "max_tokens":
            output["stop"] = "length"
        return cast(ModelOutput, output)
    if stop_reason == "tool_use":
        raise unsupported("a tool_use stop without tool_use blocks", "this response cannot be replayed")
    output = {"type": "final_answer", "text": text or ""}
    if stop_reason == "max_tokens":
        output["stop"] = "length"
    elif stop_reason == "refusal":
        output["stop"] = "refusal"
    return cast(ModelOutput, output)


# ---------------------------------------------------------------------------------------------------------
# replay


def synthesize_response(output: ModelOutput | Mapping[str, Any], *, step_index: int, timestamp_ms: int = 0,
                        model: str | None) -> dict[str, Any]:
    """A Messages response carrying a recorded `model_output`, shaped as the SDK expects (`timestamp_ms` is
    unused: a Messages response carries no time).

    Tool uses get their `call-N` ids, which the agent will send back and which normalize identically.
    """
    calls, stop, text = answer_of(output)
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for call in calls:
        tool_input = call.get("toolInput")
        content.append(
            {
                "type": "tool_use",
                "id": call["toolCallId"],
                "name": call["toolName"],
                "input": {} if tool_input is None else tool_input,
            }
        )
    if stop == "length":
        stop_reason = "max_tokens"
    elif calls:
        stop_reason = "tool_use"
    elif stop == "refusal":
        stop_reason = "refusal"
    else:
        stop_reason = "end_turn"
    return {
        "id": f"blackbox-replay-{step_index}",
        "type": "message",
        "role": "assistant",
        "model": model if model is not None else "",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


DEFAULT_MAX_TOKENS = 4096  # the Messages API requires max_tokens; a recorded request without one gets this


class Anthropic(CodecProvider):
    """The Messages API (`/v1/messages`)."""

    name = "anthropic"
    label = "Anthropic Messages"
    api = facts("anthropic")
    suffix = "/v1/messages"
    kept_params = KEPT_PARAMS
    stream = anthropic_stream.CODEC
    normalize_response = staticmethod(normalize_response)
    token_counts = staticmethod(counts.anthropic)
    call_slots = staticmethod(origins.anthropic_slots)
    synthesize_response = staticmethod(synthesize_response)
    error_body = staticmethod(error_body)

    def normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        """The neutral `model_input` payload of a Messages request; refuses what cannot be replayed faithfully.

        Provider tool ids in the history are mapped through `ids`; if the request is refused, `ids` is left as it
        was.
        """
        with ids.undo_on_error():
            return self._normalize_request(body, ids)

    def _normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        if not isinstance(body, dict):
            raise unsupported("a request body that is not a JSON object", "send a Messages API request")
        if body.get("mcp_servers"):
            raise unsupported("mcp_servers (remote MCP tools run by the API)", "expose the tools as custom tools")
        if body.get("container") is not None:
            raise unsupported("a code-execution container", "drop the container parameter")
        _refuse_server_history(body)

        messages_in = body.get("messages")
        if not isinstance(messages_in, list):
            raise unsupported("a request without a messages list", "send messages=[...]")
        messages = [_message(message, ids) for message in messages_in]

        payload: dict[str, Any] = {"messages": messages, "tools": _tools(body.get("tools"))}
        system = body.get("system")
        if system is not None:
            payload["systemPrompt"] = _system(system)
        if body.get("model") is not None:
            payload["model"] = body["model"]
        params = {neutral: body[name] for name, neutral in self.kept_params.items() if body.get(name) is not None}
        if params:
            payload["params"] = params
        return cast(ModelInput, payload)

    def build_request(self, model_input: Mapping[str, Any]) -> dict[str, Any]:
        """A Messages API request body for a neutral `model_input` (the what-if's direction)."""
        messages: list[dict[str, Any]] = []
        for role, message in messages_of(model_input):
            if isinstance(message.get("content"), str):
                messages.append({"role": role, "content": message["content"]})
                continue
            blocks: list[dict[str, Any]] = []
            for part in parts(message.get("content")):
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
        body: dict[str, Any] = {"model": model_input.get("model"), "messages": messages}
        body.update(kept(model_input, self.sent_fields))
        body.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
        if isinstance(model_input.get("systemPrompt"), str):
            body["system"] = model_input["systemPrompt"]
        tools = [{"name": name, "description": description, "input_schema": schema}
                 for name, description, schema in tools_of(model_input)]
        if tools:
            body["tools"] = tools
        return body

    def read_request(self, request: Request, ids: CallIds) -> tuple[dict[str, Any], ModelInput]:
        """A message thread's turn read as the whole conversation it continues (`anthropic_threads`)."""
        body = self.body_of(request)
        if body.get("thread") is not None:
            body = threads_of(ids).expand(body)
        return body, self.normalize_request(body, ids)

    def note_answer(self, request: dict[str, Any], response: dict[str, Any], ids: CallIds, *, live: bool) -> None:
        if request.get("thread") is not None:
            threads_of(ids).note(request, response, live=live)

    def outgoing(self, request: dict[str, Any], ids: CallIds) -> dict[str, Any] | None:
        return threads_of(ids).outgoing(request) if request.get("thread") is not None else None

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key, "anthropic-version": "2023-06-01"}


PROVIDER = Anthropic()

# The Anthropic provider's methods that read its class data, as functions.
normalize_request = PROVIDER.normalize_request
build_request = PROVIDER.build_request
