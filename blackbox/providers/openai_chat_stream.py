"""OpenAI Chat Completions streaming: assemble `chat.completion.chunk` events into a `chat.completion`, and back.

Each event is a `data:` line holding a chunk whose choices carry deltas: `role`, `content` and `refusal` text,
and `tool_calls` entries keyed by `index` (the first one for a call brings its `id`, `type` and function
`name`, later ones more `arguments`), then a chunk with the `finish_reason`; a usage chunk (no choices) may
follow, then `data: [DONE]`. A chunk holding an `error` object fails the stream (the SDK raises on it too).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from blackbox.providers.openai_compat import REASONING_FIELDS
from blackbox.providers.sse import DONE, SSEEvent
from blackbox.providers.stream import (
    BaseAssembler,
    EventStreamCodec,
    StreamFault,
    StreamResult,
    StreamStatus,
    Text,
    json_data,
    need,
    pieces,
)

__all__ = ["CODEC", "ChatStreamAssembler", "codec", "refuse_thread_event"]

_TOP_LEVEL = ("id", "created", "model", "system_fingerprint", "service_tier")


class _Choice:
    """One choice being assembled: its text fields and tool calls as pieces."""

    __slots__ = ("calls", "finish_reason", "logprobs", "role", "text")

    def __init__(self) -> None:
        self.role: Any = None
        self.text: dict[str, Text] = {}  # content, refusal, reasoning
        self.calls: dict[int, dict[str, Any]] = {}  # index → {"type": …, "id"/"name"/"arguments": Text}
        self.finish_reason: Any = None
        self.logprobs: dict[str, list[Any]] | None = None


class ChatStreamAssembler(BaseAssembler):
    """Rebuilds the `chat.completion` a stream of chunks adds up to (the way the SDK's helper accumulates it).

    The SDK stops reading at `[DONE]`, so nothing after it changes what the agent gets.  `reasoning` names the
    delta fields that carry a compatible server's reasoning text (its provider's `reasoning_fields`)."""

    def __init__(self, reasoning: tuple[str, ...] = REASONING_FIELDS) -> None:
        super().__init__()
        self._reasoning = reasoning
        # text fields a delta carries: the answer, a refusal, and the reasoning
        self._texts = ("content", "refusal", *reasoning)
        self._top: dict[str, Any] = {}
        self._choices: dict[int, _Choice] = {}
        self._usage: Any = None
        self._chunks = 0

    def _event(self, event: SSEEvent) -> StreamResult | None:
        if event.is_done:
            self.stop()
            return StreamResult(StreamStatus.COMPLETE, self._body())
        refuse_thread_event(event)
        data = json_data(event)
        error = data.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else None
            text = message if isinstance(message, str) and message else "an error event in the stream"
            return StreamResult(StreamStatus.ERROR, None, text)
        self._chunks += 1  # whatever the event's name: the SDK reads every event's data as a chunk
        for key in _TOP_LEVEL:
            if data.get(key) is not None and key not in self._top:
                self._top[key] = data[key]
        if data.get("usage") is not None:
            self._usage = data["usage"]
        for choice in need(data.get("choices") or [], list, "choices"):
            self._choice(need(choice, dict, "a choice"))
        return None

    def _after(self, event: SSEEvent) -> StreamResult | None:
        return None  # unreachable: the result comes with `[DONE]`, where reading stops

    def _choice(self, choice: dict[str, Any]) -> None:
        index = need(choice.get("index", 0), int, "a choice index")
        state = self._choices.get(index)
        if state is None:
            state = self._choices[index] = _Choice()
        delta = need(choice.get("delta") or {}, dict, "a delta")
        if delta.get("role") is not None:
            state.role = delta["role"]
        for key in self._texts:
            value = delta.get(key)
            if value is not None:
                state.text.setdefault(key, Text()).add(value)
        for call in need(delta.get("tool_calls") or [], list, "tool_calls"):
            call = need(call, dict, "a tool call")
            entry = state.calls.setdefault(need(call.get("index", 0), int, "a tool call index"), {})
            if call.get("type"):
                entry["type"] = call["type"]
            if call.get("id"):
                entry.setdefault("id", Text()).add(call["id"])
            function = need(call.get("function") or {}, dict, "a tool call's function")
            for key in ("name", "arguments"):
                if function.get(key) is not None:
                    entry.setdefault(key, Text()).add(function[key])
        if choice.get("finish_reason") is not None:
            state.finish_reason = choice["finish_reason"]
        logprobs = choice.get("logprobs")
        if isinstance(logprobs, dict):
            merged = state.logprobs if state.logprobs is not None else {}
            for key, value in logprobs.items():
                if isinstance(value, list):
                    merged.setdefault(key, []).extend(value)
            state.logprobs = merged

    def _body(self) -> dict[str, Any] | None:
        if not self._chunks:
            return None
        choices = []
        for index in sorted(self._choices):
            state = self._choices[index]
            texts = {key: text.text() for key, text in state.text.items()}
            message: dict[str, Any] = {
                "role": state.role if state.role is not None else "assistant",
                "content": texts.get("content"),
                "refusal": texts.get("refusal"),
            }
            message.update((key, texts[key]) for key in self._reasoning if texts.get(key))
            calls = [state.calls[key] for key in sorted(state.calls)]
            if calls:
                message["tool_calls"] = [
                    {
                        "id": call["id"].text() if "id" in call else "",
                        "type": call.get("type", "function"),
                        "function": {
                            "name": call["name"].text() if "name" in call else "",
                            "arguments": call["arguments"].text() if "arguments" in call else "",
                        },
                    }
                    for call in calls
                ]
                if message["content"] == "":
                    message["content"] = None  # the opening role chunk's "": unstreamed, no text is null
            elif message["content"] is None and message["refusal"] is None:
                message["content"] = ""  # no content deltas at all: the answer was empty
            choices.append(
                {
                    "index": index,
                    "message": message,
                    "finish_reason": state.finish_reason,
                    "logprobs": state.logprobs,
                }
            )
        body: dict[str, Any] = {"object": "chat.completion", **self._top, "choices": choices}
        if self._usage is not None:
            body["usage"] = self._usage
        return body

    def _ended(self, cut_mid_event: bool) -> StreamResult:
        body = self._body()
        finished = bool(self._choices) and all(state.finish_reason is not None for state in self._choices.values())
        if finished:  # `[DONE]` is optional; the finish reason is not (an event cut short never reaches the SDK)
            return StreamResult(StreamStatus.COMPLETE, body)
        return self._early(body, cut_mid_event)


def refuse_thread_event(event: SSEEvent) -> None:
    """The openai SDK hands an event named `thread.…` over wrapped with its name (the Assistants API's
    shape), which no chat or Responses stream helper reads as the API's own event: refused."""
    if event.event is not None and event.event.startswith("thread."):
        raise StreamFault(f"a {event.event[:40]!r} event, which the SDK hands over in the Assistants shape")


def _events(body: dict[str, Any], size: int | None,
            reasoning: tuple[str, ...] = REASONING_FIELDS) -> Iterator[tuple[str | None, dict[str, Any] | str]]:
    top = {
        "id": body.get("id", ""),
        "object": "chat.completion.chunk",
        "created": body.get("created", 0),
        "model": body.get("model", ""),
    }
    for key in ("system_fingerprint", "service_tier"):
        if body.get(key) is not None:
            top[key] = body[key]

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
        choice = {"index": index, "delta": delta, "finish_reason": finish, "logprobs": None}
        return None, {**top, "choices": [choice]}

    for choice in body.get("choices") or []:
        index = choice.get("index", 0)
        message = choice.get("message") or {}
        content = message.get("content")
        calls = message.get("tool_calls") or []
        yield chunk(index, {"role": "assistant", "content": "" if content is not None else None, "refusal": None})
        for key in reasoning:
            for piece in pieces(message.get(key) or "", size):
                yield chunk(index, {key: piece})
        for piece in pieces(content or "", size):
            yield chunk(index, {"content": piece})
        for piece in pieces(message.get("refusal") or "", size):
            yield chunk(index, {"refusal": piece})
        for position, call in enumerate(calls):
            function = call.get("function") or {}
            opening = {
                "index": position,
                "id": call.get("id"),
                "type": "function",
                "function": {"name": function.get("name"), "arguments": ""},
            }
            yield chunk(index, {"tool_calls": [opening]})
            for piece in pieces(function.get("arguments") or "", size):
                yield chunk(index, {"tool_calls": [{"index": position, "function": {"arguments": piece}}]})
        yield chunk(index, {}, choice.get("finish_reason") or "stop")
    yield None, DONE


def codec(reasoning: tuple[str, ...]) -> EventStreamCodec:
    """The chunk stream of a chat dialect whose reasoning text comes in the delta fields `reasoning`."""
    return EventStreamCodec(partial(ChatStreamAssembler, reasoning), partial(_events, reasoning=reasoning))


# The Chat Completions chunk stream, ending in `data: [DONE]` (no usage chunk: it is opt-in).
CODEC = EventStreamCodec(ChatStreamAssembler, _events)
