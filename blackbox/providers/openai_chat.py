"""OpenAI Chat Completions ↔ neutral steps.

A pure codec: a Chat Completions request becomes the neutral `model_input` payload, a response the
`model_output` payload, and a recorded output is rebuilt as a `chat.completion` object for replay. Features that
would not record and replay faithfully are refused before anything is sent. The Responses API (`/responses`) is
a different endpoint and is not handled here.

The codec is the methods of `OpenAIChat`, which read the class's data: the request controls it keeps
(`kept_params`), the message fields it keeps (`message_fields`), the fields a response's reasoning comes in
(`reasoning_fields`).  A dialect (an OpenAI-compatible server that sends or accepts a few fields of its own)
is a subclass that changes that data, nothing more (docs/architecture.md, "Adding an adapter").  The
module-level functions are the OpenAI provider's methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, cast

from blackbox.apis import facts
from blackbox.format.payloads import ModelInput, ModelOutput, ToolCall
from blackbox.providers import openai_chat_stream, origins
from blackbox.providers import token_counts as counts
from blackbox.providers.base import CodecProvider
from blackbox.providers.neutral import (
    CallIds,
    answer_of,
    compact_json,
    neutral_tool,
    parse_tool_arguments,
    text_of,
    tool_list,
    unsupported,
)
from blackbox.providers.openai_compat import (
    REASONING_FIELDS,
    SERVER_PARAMS,
    put_thoughts,
    refuse_server_tools,
    thoughts_of,
)
from blackbox.providers.outgoing import kept, messages_of, parts, result_text, tools_of

__all__ = [
    "KEPT_PARAMS",
    "MESSAGE_FIELDS",
    "PROVIDER",
    "OpenAIChat",
    "build_request",
    "error_body",
    "normalize_request",
    "normalize_response",
    "synthesize_response",
]

#: Request controls that change the model's behaviour, and their neutral `params` names. `max_tokens` and
#: `max_completion_tokens` both become `maxTokens` (sending both is refused).  OpenAI-compatible servers'
#: own controls follow (`openai_compat.SERVER_PARAMS`).
KEPT_PARAMS: Mapping[str, str] = {
    "max_tokens": "maxTokens",
    "max_completion_tokens": "maxTokens",
    "temperature": "temperature",
    "top_p": "topP",
    "tool_choice": "toolChoice",
    "response_format": "responseFormat",
    "stop": "stop",
    "parallel_tool_calls": "parallelToolCalls",
    "seed": "seed",
    "reasoning_effort": "reasoningEffort",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
    "logit_bias": "logitBias",
    "logprobs": "logprobs",
    "top_logprobs": "topLogprobs",
    "verbosity": "verbosity",
    "prediction": "prediction",
    "modalities": "modalities",
    **SERVER_PARAMS,
}

#: Message fields kept on the neutral message (a tool message's on its `tool_result` part), and their neutral
#: names: `name` (LangChain sends an agent's name on its assistant messages, some servers a tool's on tool
#: messages), which the model reads as part of the conversation (docs/format.md, "OpenAI Chat Completions").
MESSAGE_FIELDS: Mapping[str, str] = {"name": "name"}

#: Keys a neutral message or part already has, which no kept message field may take.
_NEUTRAL_KEYS = frozenset({"role", "content", "type", "text", "toolCallId", "toolName", "toolInput", "result",
                           "error"})
_SYSTEM_ROLES = ("system", "developer")
_REPLAY_ADVICE = "this response cannot be replayed faithfully"


def error_body(message: str) -> dict[str, Any]:
    """OpenAI's 400 error shape, which the SDK raises as `BadRequestError` without retrying."""
    if not message.startswith("[blackbox]"):
        message = f"[blackbox] {message}"
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": "blackbox"}}


_SYSTEM_ADVICE = "put every system/developer message at the start of the conversation"


def _text_of(content: Any, role: str) -> str:
    """A message's content as one string: text parts are joined with a blank line; other parts are refused."""
    return text_of(content, ("text",), parts_in=f"a {role} message", content_of=f"{role} message")


def _extras(message: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any] | None:
    """The kept message fields (`fields`: field → neutral name) a message carries, or None."""
    found: dict[str, Any] | None = None
    for field, neutral in fields.items():
        value = message.get(field)
        if value is not None:
            if found is None:
                found = {}
            found[neutral] = value
    return found


def _call(call: dict[str, Any], ids: CallIds) -> ToolCall:
    """A `tool_calls` entry (in a response or the history) as a neutral call: its id mapped to `call-N`."""
    if call.get("type", "function") != "function":
        raise unsupported(f"{call.get('type')!r} tool calls", "use function tools")
    function = call.get("function") or {}
    call_id = ids.neutral(call["id"])
    name: Any = function.get("name")
    ids.note_name(call_id, name)
    return {"toolCallId": call_id, "toolName": name,
            "toolInput": parse_tool_arguments(function.get("arguments"))}


def _assistant(message: dict[str, Any], ids: CallIds) -> dict[str, Any]:
    if message.get("refusal"):
        raise unsupported("refusals in the conversation history", "drop the refused turn")
    if message.get("audio") is not None:
        raise unsupported("audio in the conversation history", "send text content only")
    if message.get("function_call") is not None:
        raise unsupported("legacy function_call in the history", "use tool_calls")
    text = _text_of(message.get("content"), "assistant")
    tool_calls = message.get("tool_calls") or []
    if not tool_calls:
        return {"role": "assistant", "content": text}
    parts: list[dict[str, Any]] = []
    if text:
        parts.append({"type": "text", "text": text})
    for call in tool_calls:
        parts.append({"type": "tool_use", **_call(call, ids)})
    return {"role": "assistant", "content": parts}


def _tool_result(message: dict[str, Any], ids: CallIds) -> dict[str, Any]:
    provider_id: Any = message.get("tool_call_id")
    call_id = ids.neutral(provider_id)
    name = ids.name_of(call_id)
    if name is None:
        raise unsupported(
            f"a tool message for {provider_id!r} whose tool call is not in the conversation",
            "send the assistant message that asked for the tool along with its result",
        )
    return {
        "type": "tool_result",
        "toolCallId": call_id,
        "toolName": name,
        "result": _text_of(message.get("content"), "tool"),
    }


def _tools(tools: Any) -> list[dict[str, Any]]:
    out = []
    for tool in tool_list(tools):
        kind = tool.get("type")
        if kind != "function":
            raise unsupported(f"{kind!r} tools", "Blackbox records function tools only")
        function = tool.get("function") or {}
        out.append(neutral_tool(function.get("name"), function.get("description"), function.get("parameters")))
    return out


def _logprobs_present(logprobs: Any) -> bool:
    if isinstance(logprobs, dict):
        return any(value for value in logprobs.values())
    return bool(logprobs)


def _answer(message: dict[str, Any], finish: Any, ids: CallIds) -> ModelOutput:
    content = message.get("content")
    tool_calls = message.get("tool_calls") or []
    refusal = message.get("refusal")
    if refusal:
        if content or tool_calls:
            raise unsupported("a refusal mixed with content or tool calls", _REPLAY_ADVICE)
        return {"type": "final_answer", "text": refusal, "stop": "refusal"}

    if tool_calls:
        if finish not in ("tool_calls", "length", "stop"):
            raise unsupported(f"tool calls with the finish reason {finish!r}", _REPLAY_ADVICE)
        calls = [_call(call, ids) for call in tool_calls]
        output: dict[str, Any] = {"type": "tool_calls", "calls": calls}
        if content:
            output["text"] = content
        if finish == "length":
            output["stop"] = "length"
        elif finish == "stop":
            # OpenAI answers a `tool_choice` that names a function this way (and some compatible servers always
            # do); an agent may branch on it, so replay must hand back `stop`, not `tool_calls`.
            output["stop"] = "end"
        return cast(ModelOutput, output)

    if content is None:
        raise unsupported("a final answer whose content is null", _REPLAY_ADVICE)
    if finish not in ("stop", "length"):
        raise unsupported(f"a final answer with the finish reason {finish!r}", _REPLAY_ADVICE)
    output = {"type": "final_answer", "text": content}
    if finish == "length":
        output["stop"] = "length"
    return cast(ModelOutput, output)


def _arguments(tool_input: Any) -> str:
    """Compact JSON arguments; a raw string that was never JSON goes back unchanged (exact round trip)."""
    if isinstance(tool_input, str) and parse_tool_arguments(tool_input) is tool_input:
        return tool_input
    return compact_json({} if tool_input is None else tool_input)


class OpenAIChat(CodecProvider):
    """OpenAI Chat Completions (`…/chat/completions`), and every OpenAI-compatible server that speaks it.

    A dialect subclasses it with data: its `name`, `label`, where its requests go (`hosts`, `path_prefixes`),
    and what it adds to the format (`kept_params`, `message_fields`, `reasoning_fields`); its stream codec
    follows its `reasoning_fields` unless it sets `stream` itself."""

    name = "openai"
    label = "OpenAI Chat Completions"
    api = facts("openai")
    suffix = "/chat/completions"
    kept_params = KEPT_PARAMS
    sent_params: ClassVar[Mapping[str, str]] = {"maxTokens": "max_completion_tokens"}  # the field every model takes
    #: Message fields kept on the neutral message (a tool message's on its tool_result part), field → neutral name.
    message_fields: ClassVar[Mapping[str, str]] = MESSAGE_FIELDS
    #: Response message fields that hold reasoning text, kept aside as the output's `thoughts` (`openai_compat`).
    reasoning_fields: ClassVar[tuple[str, ...]] = REASONING_FIELDS
    stream = openai_chat_stream.CODEC
    token_counts = staticmethod(counts.openai_chat)
    call_slots = staticmethod(origins.chat_slots)
    error_body = staticmethod(error_body)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        taken = _NEUTRAL_KEYS.intersection(cls.message_fields.values())
        if taken:
            raise TypeError(f"{cls.__name__}.message_fields: {', '.join(sorted(taken))} is a neutral message key")
        if "stream" not in cls.__dict__ and cls.reasoning_fields != OpenAIChat.reasoning_fields:
            cls.stream = openai_chat_stream.codec(cls.reasoning_fields)

    # -----------------------------------------------------------------------------------------------------
    # request

    def normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        """The neutral `model_input` payload of a Chat Completions request; refuses what cannot be replayed.

        Provider tool-call ids in the history are mapped through `ids`; a refused request leaves `ids`
        unchanged."""
        with ids.undo_on_error():
            return self._normalize_request(body, ids)

    def _normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        if not isinstance(body, dict):
            raise unsupported("a request body that is not a JSON object", "send a Chat Completions request")
        if body.get("n") not in (None, 1):
            raise unsupported(f"n={body.get('n')!r} (several choices)", "ask for one choice (n=1)")
        if body.get("audio") is not None:
            raise unsupported("audio output", "drop the audio parameter")
        if body.get("functions") is not None or body.get("function_call") is not None:
            raise unsupported("legacy functions/function_call", "use tools=[{'type': 'function', ...}]")
        if body.get("web_search_options") is not None:
            raise unsupported("web_search_options", "expose search as a function tool the agent runs")
        if body.get("max_tokens") is not None and body.get("max_completion_tokens") is not None:
            raise unsupported("max_tokens together with max_completion_tokens", "send only max_completion_tokens")

        messages_in = body.get("messages")
        if not isinstance(messages_in, list):
            raise unsupported("a request without a messages list", "send messages=[...]")

        fields = self.message_fields
        named = fields.keys()  # a message holding none of them (most) is passed over in one set test
        system: list[str] = []
        messages: list[dict[str, Any]] = []
        results: list[dict[str, Any]] | None = None  # the open user turn of consecutive tool messages
        for message in messages_in:
            role = message.get("role")
            extras = None if named.isdisjoint(message) else _extras(message, fields)
            if role in _SYSTEM_ROLES:
                if messages:
                    raise unsupported(f"a {role} message after the conversation started", _SYSTEM_ADVICE)
                if extras:
                    held = ", ".join(field for field in fields if message.get(field) is not None)
                    raise unsupported(f"the {held} field on a {role} message",
                                      "drop it: the system prompt is kept as one text")
                system.append(_text_of(message.get("content"), role))
                continue
            if role == "tool":
                if results is None:
                    results = []
                    messages.append({"role": "user", "content": results})
                part = _tool_result(message, ids)
                if extras:
                    part.update(extras)
                results.append(part)
                continue
            results = None
            if role == "user":
                out: dict[str, Any] = {"role": "user", "content": _text_of(message.get("content"), role)}
            elif role == "assistant":
                out = _assistant(message, ids)
            elif role == "function":
                raise unsupported("legacy function messages", "use tools and tool messages")
            else:
                raise unsupported(f"messages with role {role!r}", "use system, developer, user, assistant, tool")
            if extras:
                out.update(extras)
            messages.append(out)

        payload: dict[str, Any] = {"messages": messages, "tools": _tools(body.get("tools"))}
        if system:
            payload["systemPrompt"] = "\n\n".join(system)
        if body.get("model") is not None:
            payload["model"] = body["model"]
        # the body's few fields looked up in the long table, not the table walked for each request
        table = self.kept_params
        params = {table[name]: value for name, value in body.items() if value is not None and name in table}
        # `strict: true` functions (pydantic-ai's default) are kept as the names of the strict tools, in order,
        # as the Responses codec does, so a change of strictness shows as a difference.
        strict = [tool.get("function", {}).get("name") for tool in body.get("tools") or []
                  if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
                  and tool["function"].get("strict")]
        if strict:
            params["strictTools"] = strict
        if params:
            payload["params"] = params
        return cast(ModelInput, payload)

    # -----------------------------------------------------------------------------------------------------
    # response

    def normalize_response(self, body: dict[str, Any], ids: CallIds) -> ModelOutput:
        """The neutral `model_output` payload of a `chat.completion` (ids → `call-N`, usage and ids dropped)."""
        with ids.undo_on_error():
            return self._normalize_response(body, ids)

    def _normalize_response(self, body: dict[str, Any], ids: CallIds) -> ModelOutput:
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or not choices:
            raise unsupported("a response with no message", _REPLAY_ADVICE)
        if len(choices) > 1:
            raise unsupported("a response with several choices", "ask for one choice (n=1)")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise unsupported("a response with no message", _REPLAY_ADVICE)
        finish = choice.get("finish_reason")
        if finish == "content_filter":
            raise unsupported("a response stopped by the content filter", _REPLAY_ADVICE)
        if _logprobs_present(choice.get("logprobs")):
            raise unsupported("logprobs in a response", "drop logprobs from the request for recorded runs")
        if message.get("annotations"):
            raise unsupported("annotations in a response", _REPLAY_ADVICE)
        if message.get("audio") is not None:
            raise unsupported("audio in a response", "drop the audio parameter")
        if message.get("function_call") is not None:
            raise unsupported("a legacy function_call in a response", "use tools")
        refuse_server_tools(message)
        output = cast(dict[str, Any], _answer(message, finish, ids))
        thoughts = thoughts_of(message, self.reasoning_fields)
        if thoughts:
            output["thoughts"] = thoughts  # a compatible server's reasoning, kept aside like Gemini's thoughts
        return cast(ModelOutput, output)

    # -----------------------------------------------------------------------------------------------------
    # replay

    def synthesize_response(self, output: ModelOutput | Mapping[str, Any], *, step_index: int, timestamp_ms: int,
                            model: str | None) -> dict[str, Any]:
        """A `chat.completion` carrying a recorded `model_output`, shaped as the SDK expects.

        Tool calls get their `call-N` ids, which the agent sends back and which normalize identically."""
        calls, stop, text = answer_of(output)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None, "annotations": []}
        if calls:
            message["content"] = text or None
            message["tool_calls"] = [
                {
                    "id": call["toolCallId"],
                    "type": "function",
                    "function": {"name": call["toolName"], "arguments": _arguments(call.get("toolInput"))},
                }
                for call in calls
            ]
            finish = "length" if stop == "length" else "stop" if stop == "end" else "tool_calls"
        elif stop == "refusal":
            message["refusal"] = text or ""
            finish = "stop"
        else:
            message["content"] = text or ""
            finish = "length" if stop == "length" else "stop"
        put_thoughts(message, output, self.reasoning_fields)
        return {
            "id": f"blackbox-replay-{step_index}",
            "object": "chat.completion",
            "created": timestamp_ms // 1000,
            "model": model if model is not None else "",
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    # -----------------------------------------------------------------------------------------------------
    # what-if

    def build_request(self, model_input: Mapping[str, Any]) -> dict[str, Any]:
        """A Chat Completions request body for a neutral `model_input` (the what-if's direction): the kept
        params and message fields back under their fields."""
        back = {neutral: field for field, neutral in self.message_fields.items()}

        def extras(holder: Mapping[str, Any]) -> dict[str, Any]:
            return {field: holder[neutral] for neutral, field in back.items() if holder.get(neutral) is not None}

        messages: list[dict[str, Any]] = []
        if isinstance(model_input.get("systemPrompt"), str):
            messages.append({"role": "system", "content": model_input["systemPrompt"]})
        for role, message in messages_of(model_input):
            content = parts(message.get("content"))
            text = "\n\n".join(p["text"] for p in content
                               if p.get("type") == "text" and isinstance(p.get("text"), str))
            if role == "assistant":
                out: dict[str, Any] = {"role": "assistant", "content": text or None, **extras(message)}
                calls = [{"id": p.get("toolCallId"), "type": "function",
                          "function": {"name": p.get("toolName"),
                                       "arguments": compact_json(p.get("toolInput") or {})}}
                         for p in content if p.get("type") == "tool_use"]
                if calls:
                    out["tool_calls"] = calls
                messages.append(out)
                continue
            for part in content:
                if part.get("type") == "tool_result":
                    messages.append({"role": "tool", "tool_call_id": part.get("toolCallId"),
                                     "content": result_text(part), **extras(part)})
            if text or not any(p.get("type") == "tool_result" for p in content):
                messages.append({"role": "user", "content": text, **extras(message)})
        body: dict[str, Any] = {"model": model_input.get("model"), "messages": messages}
        body.update(kept(model_input, self.sent_fields))
        tools = [{"type": "function", "function": {"name": name, "description": description, "parameters": schema}}
                 for name, description, schema in tools_of(model_input)]
        if tools:
            body["tools"] = tools
        return body


PROVIDER = OpenAIChat()

# The OpenAI provider's codec, as functions.
normalize_request = PROVIDER.normalize_request
normalize_response = PROVIDER.normalize_response
synthesize_response = PROVIDER.synthesize_response
build_request = PROVIDER.build_request
