"""OpenAI Responses API (`/v1/responses`) ↔ neutral steps.

Pure functions like `blackbox.providers.openai_chat`: a Responses request becomes the neutral `model_input`
payload, a Responses object the `model_output` payload, and a recorded output is rebuilt as a Responses object
for replay.

- `instructions` and the leading `system`/`developer` input messages become `systemPrompt`; `input` (a string
  or items) becomes messages: consecutive assistant-side items (assistant messages and `function_call` items)
  form one assistant turn, consecutive `function_call_output` items one user turn of tool results. `reasoning`
  items are dropped like thinking blocks; so are the items' own ids and statuses (`fc_…`, `msg_…`) and the
  provider call ids (`call_…`), which map to `call-N`.
- Server-side state cannot be replayed: `previous_response_id`, `conversation`, `prompt` templates,
  `item_reference` items and `background` runs are refused before anything is sent. `store` alone is harmless
  (whatever the API keeps is never read back by a request Blackbox accepts) and is dropped, like `include`
  entries that only add data Blackbox drops (`reasoning.encrypted_content`).
- Only flat function tools are recorded. `strict: true` (the OpenAI Agents SDK's default) is kept as the
  neutral param `strictTools` (the names of the strict tools, in order), so a change of strictness shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
from blackbox.providers.openai_chat import error_body  # one OpenAI error shape for both APIs

__all__ = [
    "PARAMS",
    "Turns",
    "error_body",
    "is_stream_request",
    "normalize_request",
    "normalize_response",
    "synthesize_response",
]

#: Top-level request controls that change the model's behaviour, and their neutral names. `text.format`,
#: `text.verbosity`, `reasoning.effort` and `reasoning.summary` are read from their objects.
PARAMS: tuple[tuple[str, str], ...] = (
    ("max_output_tokens", "maxTokens"),
    ("temperature", "temperature"),
    ("top_p", "topP"),
    ("tool_choice", "toolChoice"),
    ("parallel_tool_calls", "parallelToolCalls"),
    ("top_logprobs", "topLogprobs"),
    ("max_tool_calls", "maxToolCalls"),
    ("truncation", "truncation"),
)
_KEPT: Mapping[str, str] = dict(PARAMS)

_SYSTEM_ROLES = ("system", "developer")
_HARMLESS_INCLUDES = ("reasoning.encrypted_content",)
_REPLAY_ADVICE = "this response cannot be replayed faithfully"
_STATE_ADVICE = (
    "send the whole conversation in input (the OpenAI Agents SDK does unless you pass previous_response_id "
    "or conversation_id)"
)


def is_stream_request(body: dict[str, Any]) -> bool:
    """True when the request asks for server-sent events (`stream: true`)."""
    return bool(body.get("stream"))


# ---------------------------------------------------------------------------------------------------------
# request


def normalize_request(body: dict[str, Any], ids: CallIds,
                      kept: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The neutral `model_input` payload of a Responses request; refuses what cannot be replayed.

    `kept` is the provider's `kept_params` (request field → neutral name; `PARAMS` when not given).  Provider
    call ids in the input are mapped through `ids`; a refused request leaves `ids` unchanged.
    """
    with ids.undo_on_error():
        return _normalize_request(body, ids, _KEPT if kept is None else kept)


def _refuse_state(body: dict[str, Any]) -> None:
    if body.get("previous_response_id") is not None:
        raise unsupported("previous_response_id (a conversation kept on OpenAI's servers)", _STATE_ADVICE)
    if body.get("conversation") is not None:
        raise unsupported("conversation (a conversation kept on OpenAI's servers)", _STATE_ADVICE)
    if body.get("prompt") is not None:
        raise unsupported("a stored prompt template (prompt=...)", "send the instructions and input themselves")
    if body.get("background"):
        raise unsupported("background responses (polled later from the server)", "run without background=True")
    include = body.get("include")
    if include is not None:
        if not isinstance(include, list):
            raise unsupported("an include value that is not a list", "pass include=[...]")
        for entry in include:
            if entry not in _HARMLESS_INCLUDES:
                raise unsupported(f"include={entry!r}", "drop it from include for recorded runs")


def _normalize_request(body: dict[str, Any], ids: CallIds, kept: Mapping[str, str]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise unsupported("a request body that is not a JSON object", "send a Responses API request")
    _refuse_state(body)
    if body.get("max_output_tokens") is not None and not isinstance(body["max_output_tokens"], int):
        raise unsupported("a max_output_tokens that is not an integer", "pass an integer")

    system: list[str] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise unsupported("instructions that are not a string", "pass instructions as a string")
        system.append(instructions)

    raw_input = body.get("input")
    if isinstance(raw_input, str):
        items: list[Any] = [{"type": "message", "role": "user", "content": raw_input}]
    elif isinstance(raw_input, list):
        items = raw_input
    elif raw_input is None:
        items = []
    else:
        raise unsupported(f"input of type {type(raw_input).__name__}", "pass a string or a list of items")

    messages = _messages(items, ids, system)
    payload: dict[str, Any] = {"messages": messages, "tools": _tools(body.get("tools"))}
    if system:
        payload["systemPrompt"] = "\n\n".join(system)
    if body.get("model") is not None:
        payload["model"] = body["model"]
    params = {neutral: body[name] for name, neutral in kept.items() if body.get(name) is not None}
    params.update(_nested_params(body))
    strict = [tool.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict) and tool.get("strict")]
    if strict:
        params["strictTools"] = strict
    if params:
        payload["params"] = params
    return payload


def _nested_params(body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, keys in (
        ("text", (("format", "responseFormat"), ("verbosity", "verbosity"))),
        ("reasoning", (("effort", "reasoningEffort"), ("summary", "reasoningSummary"))),
    ):
        value = body.get(field)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise unsupported(f"a {field} value that is not an object", f"pass {field}={{...}}")
        for key, neutral in keys:
            if value.get(key) is not None:
                out[neutral] = value[key]
    return out


def _item_type(item: Any) -> str:
    if not isinstance(item, dict):
        return type(item).__name__
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"  # the short form {"role": ..., "content": ...}
    return kind if isinstance(kind, str) else repr(kind)


class Turns:
    """Collects neutral messages, merging consecutive assistant-side items and consecutive tool outputs (the
    Codex importer reads a compacted history, Responses items, with it too)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._texts: list[str] | None = None  # the open assistant turn's texts …
        self._uses: list[dict[str, Any]] = []  # … and its tool_use parts
        self._results: list[dict[str, Any]] | None = None  # the open user turn of tool results

    def assistant_text(self, text: str) -> None:
        self._open_assistant()
        if text:
            assert self._texts is not None
            self._texts.append(text)

    def tool_use(self, part: dict[str, Any]) -> None:
        self._open_assistant()
        self._uses.append(part)

    def tool_result(self, part: dict[str, Any]) -> None:
        self._close_assistant()
        if self._results is None:
            self._results = []
            self.messages.append({"role": "user", "content": self._results})
        self._results.append(part)

    def user(self, content: str) -> None:
        self._close_assistant()
        self._results = None
        self.messages.append({"role": "user", "content": content})

    def _open_assistant(self) -> None:
        self._results = None
        if self._texts is None:
            self._texts, self._uses = [], []

    def _close_assistant(self) -> None:
        if self._texts is None:
            return
        text = "\n\n".join(self._texts)
        if self._uses:
            parts = ([{"type": "text", "text": text}] if text else []) + self._uses
            self.messages.append({"role": "assistant", "content": parts})
        else:
            self.messages.append({"role": "assistant", "content": text})
        self._texts, self._uses = None, []

    def done(self) -> list[dict[str, Any]]:
        self._close_assistant()
        return self.messages


def _messages(items: list[Any], ids: CallIds, system: list[str]) -> list[dict[str, Any]]:
    turns = Turns()
    started = False
    for item in items:
        kind = _item_type(item)
        if kind == "reasoning":
            continue
        if kind == "message":
            role = item.get("role")
            if role in _SYSTEM_ROLES:
                if started:
                    raise unsupported(f"a {role} message after the conversation started", _SYSTEM_ADVICE)
                system.append(_text_of(item.get("content"), role))
                continue
            started = True
            if role == "user":
                turns.user(_text_of(item.get("content"), role))
            elif role == "assistant":
                turns.assistant_text(_text_of(item.get("content"), role))
            else:
                raise unsupported(f"input messages with role {role!r}", "use system, developer, user, assistant")
        elif kind == "function_call":
            started = True
            call_id = ids.neutral(_call_id(item))
            ids.note_name(call_id, item.get("name"))
            turns.tool_use(
                {
                    "type": "tool_use",
                    "toolCallId": call_id,
                    "toolName": item.get("name"),
                    "toolInput": parse_tool_arguments(item.get("arguments")),
                }
            )
        elif kind == "function_call_output":
            started = True
            provider_id = _call_id(item)
            call_id = ids.neutral(provider_id)
            name = ids.name_of(call_id)
            if name is None:
                raise unsupported(
                    f"a function_call_output for {provider_id!r} whose function_call is not in the input",
                    "send the function_call item along with its output (or drop previous_response_id)",
                )
            result = _text_of(item.get("output"), "function_call_output")
            turns.tool_result({"type": "tool_result", "toolCallId": call_id, "toolName": name, "result": result})
        elif kind == "item_reference":
            raise unsupported("item_reference input items (items kept on OpenAI's servers)", _STATE_ADVICE)
        else:
            raise unsupported(
                f"{kind!r} input items",
                "Blackbox records messages, function_call and function_call_output items (built-in tools are "
                "not supported; expose them as function tools the agent runs)",
            )
    return turns.done()


_SYSTEM_ADVICE = "pass the system prompt as instructions or at the start of input"


def _call_id(item: dict[str, Any]) -> str:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise unsupported(f"a {item.get('type')} item without a call_id", "send the call_id the model gave")
    return call_id


def _text_of(content: Any, role: Any) -> str:
    """Content as one string: text parts joined with a blank line; other parts (images, files…) refused."""
    return text_of(content, _TEXT_PARTS, parts_in=f"{role} input", content_of=f"{role}")


_TEXT_PARTS = ("input_text", "output_text", "text")


def _tools(tools: Any) -> list[dict[str, Any]]:
    out = []
    for tool in tool_list(tools):
        kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
        if kind != "function":
            raise unsupported(
                f"the built-in tool {kind!r}",
                "Blackbox records function tools only; expose it as a function tool the agent runs",
            )
        if "function" in tool and "name" not in tool:
            raise unsupported("a nested Chat Completions tool in a Responses request", _FLAT_ADVICE)
        out.append(neutral_tool(tool.get("name"), tool.get("description"), tool.get("parameters")))
    return out


_FLAT_ADVICE = "use the flat form {'type': 'function', 'name': ..., 'parameters': ...}"


# ---------------------------------------------------------------------------------------------------------
# response


def normalize_response(body: dict[str, Any], ids: CallIds) -> dict[str, Any]:
    """The neutral `model_output` payload of a Responses object (call ids → `call-N`; ids, usage dropped)."""
    with ids.undo_on_error():
        return _normalize_response(body, ids)


def _normalize_response(body: dict[str, Any], ids: CallIds) -> dict[str, Any]:
    output_items = body.get("output") if isinstance(body, dict) else None
    if not isinstance(output_items, list):
        raise unsupported("a Responses object without an output list", "check the API endpoint")
    if body.get("error"):
        raise unsupported("a failed response", _REPLAY_ADVICE)
    status = body.get("status")
    length = False
    if status == "incomplete":
        reason = (body.get("incomplete_details") or {}).get("reason")
        if reason != "max_output_tokens":
            raise unsupported(f"an incomplete response ({reason!r})", _REPLAY_ADVICE)
        length = True
    elif status not in ("completed", None):
        raise unsupported(f"a response with status {status!r}", "wait for the response to complete")

    text: str | None = None
    refusal: str | None = None
    calls: list[dict[str, Any]] = []
    for item in output_items:
        kind = _item_type(item)
        if kind == "reasoning":
            continue
        if kind == "message":
            for part in item.get("content") or []:
                part_kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                if part_kind == "refusal":
                    refusal = (refusal or "") + (part.get("refusal") or "")
                    continue
                if part_kind != "output_text":
                    raise unsupported(f"{part_kind!r} content in a response", _REPLAY_ADVICE)
                if part.get("annotations"):
                    raise unsupported("annotations in a response", _REPLAY_ADVICE)
                if part.get("logprobs"):
                    raise unsupported("logprobs in a response", "drop top_logprobs for recorded runs")
                if not part.get("text"):
                    continue
                if calls:
                    raise unsupported("text after a function call in a response", _REPLAY_ADVICE)
                if text is not None:
                    raise unsupported("more than one text part in a response", _REPLAY_ADVICE)
                text = part["text"]
        elif kind == "function_call":
            call_id = ids.neutral(_call_id(item))
            ids.note_name(call_id, item.get("name"))
            calls.append(
                {
                    "toolCallId": call_id,
                    "toolName": item.get("name"),
                    "toolInput": parse_tool_arguments(item.get("arguments")),
                }
            )
        else:
            raise unsupported(f"{kind!r} output items", "Blackbox records function tools only")

    if refusal is not None:
        if text is not None or calls:
            raise unsupported("a refusal mixed with text or function calls", _REPLAY_ADVICE)
        return {"type": "final_answer", "text": refusal, "stop": "refusal"}
    if calls:
        output: dict[str, Any] = {"type": "tool_calls", "calls": calls}
        if text:
            output["text"] = text
        if length:
            output["stop"] = "length"
        return output
    output = {"type": "final_answer", "text": text or ""}
    if length:
        output["stop"] = "length"
    return output


# ---------------------------------------------------------------------------------------------------------
# replay


def _arguments(tool_input: Any) -> str:
    """Compact JSON arguments; a raw string that was never JSON goes back unchanged (exact round trip)."""
    if isinstance(tool_input, str) and parse_tool_arguments(tool_input) is tool_input:
        return tool_input
    return compact_json({} if tool_input is None else tool_input)


def synthesize_response(
    output: dict[str, Any], *, step_index: int, timestamp_ms: int, model: str | None
) -> dict[str, Any]:
    """A Responses object carrying a recorded `model_output`, shaped as the SDK expects under strict validation.

    Function calls get `call_id` = their `call-N` (the agent sends it back and it normalizes identically) and
    item ids `fc_blackbox_<step>_<n>`; the message item is `msg_blackbox_<step>`.
    """
    calls, stop, text = answer_of(output)
    items: list[dict[str, Any]] = []
    if stop == "refusal" and not calls:
        part: dict[str, Any] = {"type": "refusal", "refusal": text or ""}
        items.append(_message_item(step_index, part))
    elif text or not calls:
        items.append(_message_item(step_index, {"type": "output_text", "text": text or "", "annotations": []}))
    for number, call in enumerate(calls):
        items.append(
            {
                "id": f"fc_blackbox_{step_index}_{number}",
                "type": "function_call",
                "call_id": call["toolCallId"],
                "name": call["toolName"],
                "arguments": _arguments(call.get("toolInput")),
                "status": "completed",
            }
        )
    length = stop == "length"
    return {
        "id": f"blackbox-replay-{step_index}",
        "object": "response",
        "created_at": timestamp_ms // 1000,
        "model": model if model is not None else "",
        "status": "incomplete" if length else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if length else None,
        "output": items,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 0,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 0,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 0,
        },
    }


def _message_item(step_index: int, part: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"msg_blackbox_{step_index}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [part],
    }
