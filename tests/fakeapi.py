"""A fake Anthropic / OpenAI API for tests: a real HTTP/1.1 server on 127.0.0.1 that the real SDKs talk to.

Why a real server rather than a mock transport: Blackbox *is* the transport, so tests must exercise it with
the SDKs' own HTTP clients, retries, content decoding and response parsing, exactly as in production.

Usage (see `tests/conftest_fakeapi.py` for the `fake_api` fixture)::

    fake.queue(anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})]))  # 200 JSON
    fake.queue(error_reply("anthropic", 429))                                        # an API error
    fake.queue(json_reply(body, encoding="br"))                                      # brotli-encoded
    fake.queue(sse_reply([...]))                                                     # an event stream
    fake.queue(stream_reply(body, error_after=3))          # a body streamed the provider's way, with a fault
    fake.stream_knobs = {"unknown_event": True}            # faults for every JSON body sent to a stream request
    fake.brain = weather_brain("openai")   # or any callable(body) -> reply; answers when the queue is empty
    ...
    fake.requests[-1].body, fake.requests[-1].header("x-api-key"), fake.paths()

Replies are served in FIFO order across the endpoints; when the queue is empty the `brain` answers; with
neither, the server answers a 400 in the provider's error shape (never retried) and notes the request in
`unanswered`.

Streaming: a request with `stream: true` answered with a 200 JSON body (a queued dict or `json_reply`, or what
the brain returns) gets that body as the provider's event stream instead, built the way each API streams:
Anthropic `message_start`, a `ping`, `content_block_*` with the text and the tool input split into several
deltas, `message_delta`, `message_stop`; chat chunks (role chunk, content pieces, tool-call deltas keyed by
index, the finish-reason chunk, a usage chunk when `stream_options.include_usage`, `data: [DONE]`); Responses
`response.created` … `response.completed` with sequence numbers. `fake.stream_knobs` (the keyword arguments of
`stream_reply`) adds faults to every such stream; `stream_reply(body, ...)` queues one explicitly.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import json
import random
import socket
import string
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests import fakeapi_gemini as gemini

__all__ = [
    "SAMPLES",
    "FakeAPI",
    "ReceivedRequest",
    "Reply",
    "anthropic_message",
    "chat_completion",
    "error_reply",
    "json_reply",
    "last_tool_results",
    "provider_of",
    "response_object",
    "sample",
    "sse_reply",
    "stream_events",
    "stream_reply",
    "turn_brain",
    "weather_brain",
]

# The SDK samples (request bodies the real SDKs sent, responses they accepted), kept in the repository.
SAMPLES = Path(__file__).parent / "sdk_samples"
MAX_BODY = 16 * 1024 * 1024
HOLD_LIMIT = 120.0  # a held stream goes on after this long even if the test never released it (no hang)

Brain = Callable[[Any], "Reply | dict[str, Any]"]


# ---------------------------------------------------------------------------------------------------------
# replies


@dataclass
class Reply:
    """One scripted HTTP answer. `chunks` (SSE) are sent one by one with chunked transfer-encoding."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = "application/json"  # None: no content-type header at all
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] | None = None
    encoding: str | None = None  # "gzip" or "br": the body is sent content-encoded
    delay: float = 0.0  # seconds to wait before answering (or between SSE chunks)
    drop: bool = False  # after the chunks, close the connection without ending the body (a broken stream)
    hold: threading.Event | None = None  # after the first chunk, send the rest only once this is set


def json_reply(
    body: Any,
    status: int = 200,
    *,
    headers: Iterable[tuple[str, str]] = (),
    encoding: str | None = None,
    delay: float = 0.0,
) -> Reply:
    """A JSON body with a status code, optionally gzip- or brotli-encoded."""
    raw = json.dumps(body, ensure_ascii=False).encode()
    return Reply(status=status, body=raw, headers=list(headers), encoding=encoding, delay=delay)


def sse_reply(
    events: Iterable[Any] | str | bytes,
    *,
    encoding: str | None = None,
    delay: float = 0.0,
    status: int = 200,
) -> Reply:
    """A `text/event-stream` body.

    `events` is either raw SSE text (e.g. a sample `.sse` file) or a list whose items are `(event, data)`
    pairs (Anthropic style, `event:` line included), bare `data` values (OpenAI chat style), or the string
    "[DONE]". Dict and list data are JSON-encoded.
    """
    if isinstance(events, str | bytes):
        text = events.decode() if isinstance(events, bytes) else events
        chunks = [(block.strip("\n") + "\n\n").encode() for block in text.split("\n\n") if block.strip()]
    else:
        chunks = []
        for item in events:
            if isinstance(item, tuple):
                name, data = item
                chunks.append(f"event: {name}\ndata: {_sse_data(data)}\n\n".encode())
            else:
                chunks.append(f"data: {_sse_data(item)}\n\n".encode())
    return Reply(status=status, content_type="text/event-stream", chunks=chunks, encoding=encoding, delay=delay)


def _sse_data(data: Any) -> str:
    return data if isinstance(data, str) else json.dumps(data, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------------
# streaming: a JSON body sent the way each API streams it (written independently of Blackbox's codecs, from
# the APIs' documented event streams, so the tests check one against the other)

Event = tuple[str | None, Any]


def _pieces(text: str, size: int = 7) -> list[str]:
    """Text cut the way a model streams it: a few characters at a time (never splitting nothing)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def _provider_of_body(body: Any) -> str:
    if isinstance(body, dict):
        if body.get("type") == "message":
            return "anthropic"
        if body.get("object") == "chat.completion":
            return "openai"
        if body.get("object") == "response":
            return "responses"
        if "candidates" in body:
            return "gemini"
    raise ValueError("stream_reply: not a Messages, chat.completion, Responses or Gemini body")


def _anthropic_events(body: dict[str, Any], *, pings: bool) -> list[Event]:
    usage = dict(body.get("usage") or {})
    start = {key: value for key, value in body.items() if key != "content"}
    start.update(content=[], stop_reason=None, stop_sequence=None, usage={**usage, "output_tokens": 1})
    events: list[Event] = [("message_start", {"type": "message_start", "message": start})]
    if pings:
        events.append(("ping", {"type": "ping"}))

    def delta(index: int, value: dict[str, Any]) -> Event:
        return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": value}

    for index, block in enumerate(body.get("content") or []):
        kind = block.get("type")
        if kind == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [delta(index, {"type": "text_delta", "text": piece}) for piece in _pieces(block["text"])]
        elif kind == "tool_use":
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block.get("input") or {}, ensure_ascii=False)  # the API's JSON has spaces
            deltas = [delta(index, {"type": "input_json_delta", "partial_json": ""})]
            deltas += [delta(index, {"type": "input_json_delta", "partial_json": p}) for p in _pieces(raw, 9)]
        elif kind == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [delta(index, {"type": "thinking_delta", "thinking": p}) for p in _pieces(block["thinking"])]
            deltas.append(delta(index, {"type": "signature_delta", "signature": block.get("signature", "")}))
        else:
            opening, deltas = block, []
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
        )
        if pings and index == 0:
            events.append(("ping", {"type": "ping"}))
        events += deltas
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": body.get("stop_reason"), "stop_sequence": body.get("stop_sequence")},
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _chat_events(body: dict[str, Any], *, include_usage: bool) -> list[Event]:
    top = {key: body[key] for key in ("id", "created", "model", "service_tier", "system_fingerprint") if key in body}
    top["object"] = "chat.completion.chunk"
    events: list[Event] = []

    def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> Event:
        return None, {**top, "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    for choice in body.get("choices") or []:
        index = choice.get("index", 0)
        message = choice.get("message") or {}
        calls = message.get("tool_calls") or []
        content = message.get("content")
        if content is None and calls:
            first = calls[0]
            opening = {
                "index": 0,
                "id": first["id"],
                "type": "function",
                "function": {"name": first["function"]["name"], "arguments": ""},
            }
            events.append(chunk({"role": "assistant", "content": None, "tool_calls": [opening], "refusal": None}))
        else:
            events.append(chunk({"role": "assistant", "content": "", "refusal": None}, index=index))
        events += [chunk({"content": piece}, index=index) for piece in _pieces(content or "")]
        events += [chunk({"refusal": piece}, index=index) for piece in _pieces(message.get("refusal") or "")]
        for position, call in enumerate(calls):
            if position or content is not None:
                opening = {
                    "index": position,
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["function"]["name"], "arguments": ""},
                }
                events.append(chunk({"tool_calls": [opening]}, index=index))
            for piece in _pieces(call["function"].get("arguments") or "", 9):
                events.append(
                    chunk({"tool_calls": [{"index": position, "function": {"arguments": piece}}]}, index=index)
                )
        events.append(chunk({}, choice.get("finish_reason"), index=index))
    if include_usage:
        events.append((None, {**top, "choices": [], "usage": body.get("usage")}))
    events.append((None, "[DONE]"))
    return events


def _responses_events(body: dict[str, Any]) -> list[Event]:
    events: list[Event] = []

    def add(kind: str, **fields: Any) -> None:
        events.append((kind, {"type": kind, **fields, "sequence_number": len(events)}))

    opening = {**body, "status": "in_progress", "output": [], "usage": None}
    add("response.created", response=opening)
    add("response.in_progress", response=opening)
    for output_index, item in enumerate(body.get("output") or []):
        if item.get("type") == "message":
            add(
                "response.output_item.added",
                output_index=output_index,
                item={**item, "status": "in_progress", "content": []},
            )
            for content_index, part in enumerate(item.get("content") or []):
                where = {"item_id": item["id"], "output_index": output_index, "content_index": content_index}
                if part.get("type") == "output_text":
                    add("response.content_part.added", **where, part={**part, "text": ""})
                    for piece in _pieces(part.get("text") or ""):
                        add("response.output_text.delta", **where, delta=piece, logprobs=[])
                    add("response.output_text.done", **where, text=part.get("text") or "", logprobs=[])
                elif part.get("type") == "refusal":
                    add("response.content_part.added", **where, part={**part, "refusal": ""})
                    for piece in _pieces(part.get("refusal") or ""):
                        add("response.refusal.delta", **where, delta=piece)
                    add("response.refusal.done", **where, refusal=part.get("refusal") or "")
                add("response.content_part.done", **where, part=part)
        elif item.get("type") == "function_call":
            add(
                "response.output_item.added",
                output_index=output_index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            where = {"item_id": item["id"], "output_index": output_index}
            for piece in _pieces(item.get("arguments") or "", 9):
                add("response.function_call_arguments.delta", **where, delta=piece)
            add(
                "response.function_call_arguments.done",
                **where,
                name=item["name"],
                arguments=item.get("arguments") or "",
            )
        else:
            add("response.output_item.added", output_index=output_index, item=item)
        add("response.output_item.done", output_index=output_index, item=item)
    add("response.incomplete" if body.get("status") == "incomplete" else "response.completed", response=body)
    return events


def stream_events(body: dict[str, Any], *, include_usage: bool = False, pings: bool = True) -> list[Event]:
    """The `(event name, data)` pairs the API would stream for the unstreamed `body`."""
    provider = _provider_of_body(body)
    if provider == "anthropic":
        return _anthropic_events(body, pings=pings)
    if provider == "openai":
        return _chat_events(body, include_usage=include_usage)
    if provider == "gemini":
        return [(None, frame) for frame in gemini.gemini_frames(body)]
    return _responses_events(body)


_STREAM_ERRORS = {
    "anthropic": (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_011x"},
    ),
    "openai": (
        None,
        {"error": {"message": "The server had an error", "type": "server_error", "param": None, "code": None}},
    ),
    "responses": (
        "error",
        {"type": "error", "code": "server_error", "message": "The server had an error", "param": None},
    ),
    "gemini": (None, gemini.gemini_error(500, "The server had an error")),
}
_UNKNOWN_EVENTS = {
    "anthropic": ("content_block_future", {"type": "content_block_future", "index": 0}),
    # chat streams have no event names: an unknown field in a chunk is what a newer API adds
    "openai": None,
    "responses": ("response.future_event", {"type": "response.future_event"}),
    "gemini": None,  # frames have no names either: a part of a kind no SDK knows yet
}


# Events after the terminal one (hostile: no API sends them, every SDK but OpenAI's chat reads them on).
_AFTER_END = {
    "anthropic": [
        ("content_block_delta",
         {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " AFTER-STOP"}}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
                           "usage": {"output_tokens": 99}}),
        ("message_stop", {"type": "message_stop"}),
    ],
    "openai": [(None, {"id": "chatcmpl-late", "object": "chat.completion.chunk", "created": 0, "model": "m",
                       "choices": [{"index": 0, "delta": {"content": " AFTER-DONE"}, "finish_reason": None}]})],
    "responses": [
        ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_late",
                                        "output_index": 0, "content_index": 0, "delta": " AFTER-STOP",
                                        "logprobs": []}),
    ],
}


def _confused(provider: str, events: list[Event], kind: str) -> list[Event]:
    """One event of the stream with a value of the wrong type: `index` a list, a text delta a number, or the
    content a number."""
    events = copy.deepcopy(events)
    for position, (name, data) in enumerate(events):
        if not isinstance(data, dict):
            continue
        if provider == "anthropic" and name == "content_block_delta":
            if kind == "index":
                data["index"] = [0]
            elif kind == "text":
                data["delta"] = {"type": "text_delta", "text": 7}
            else:
                start = ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": 7})
                return [*events[:position], start, *events[position:]]
            return events
        if provider == "openai" and data.get("choices"):
            delta = data["choices"][0]["delta"]
            if kind == "index":
                data["choices"][0]["index"] = [0]
            elif kind == "text":
                delta["content"] = 7
            else:
                data["choices"] = 7
            return events
        if provider == "responses" and name == "response.output_text.delta":
            if kind == "index":
                data["output_index"] = [0]
            elif kind == "text":
                data["delta"] = 7
            else:
                events[position - 1][1]["part"] = 7  # the content_part.added before it
            return events
    raise ValueError(f"no event to confuse in this {provider} stream")


def stream_reply(
    body: dict[str, Any],
    *,
    include_usage: bool = False,
    pings: bool = True,
    unknown_event: bool = False,
    error_after: int | None = None,
    cut_after: int | None = None,
    drop: bool = False,
    delay: float = 0.0,
    after_end: bool = False,
    confused: str | None = None,
    content_type: str | None = "text/event-stream",
    hold: threading.Event | None = None,
) -> Reply:
    """`body` (a Messages, chat.completion or Responses body) as the provider's event stream, with faults.

    `unknown_event` adds an event type no SDK knows after the first event (chat: an unknown chunk field;
    note the anthropic SDK rejects unknown events only under `_strict_response_validation`);
    `error_after=N` sends N events then the provider's mid-stream error event and stops; `cut_after=N` sends N
    events and half of the next one, then ends the body (or, with `drop`, closes the connection without
    ending it); `delay` waits before each event.  Hostile: `after_end` sends events after the terminal one
    (Anthropic: a text delta " AFTER-STOP", a `message_delta` with `max_tokens`, `message_stop` again);
    `confused` ("index", "text" or "content") gives one event a value of the wrong type; `content_type` is the
    header sent (None: none); `hold` waits after the first event until the test sets it.
    """
    provider = _provider_of_body(body)
    events = stream_events(body, include_usage=include_usage, pings=pings)
    if after_end:
        events += copy.deepcopy(_AFTER_END[provider])
    if confused is not None:
        events = _confused(provider, events, confused)
    if unknown_event:
        unknown = _UNKNOWN_EVENTS[provider]
        if unknown is None:
            name, first = events[0]
            first = copy.deepcopy(first)
            if provider == "gemini":
                first["candidates"][0]["content"]["parts"].append({"futurePart": {"x": 1}})
            else:
                first["choices"][0]["delta"]["future_field"] = {"x": 1}
            events[0] = (name, first)
        else:
            events.insert(1, unknown)
    tail: list[bytes] = []
    write = _gemini_bytes if provider == "gemini" else _event_bytes
    if error_after is not None:
        name, data = _STREAM_ERRORS[provider]
        if provider == "responses":
            data = {**data, "sequence_number": error_after}
        events = [*events[:error_after], (name, data)]
    elif cut_after is not None:
        following = write(events[cut_after]) if cut_after < len(events) else b""
        tail = [following[: len(following) // 2]] if following else []
        events = events[:cut_after]
    chunks = [write(event) for event in events] + tail
    return Reply(content_type=content_type, chunks=chunks, delay=delay, drop=drop, hold=hold)


def _gemini_bytes(event: Event) -> bytes:
    return gemini.frame_bytes(event[1])


def _event_bytes(event: Event) -> bytes:
    name, data = event
    head = f"event: {name}\n" if name is not None else ""
    return f"{head}data: {_sse_data(data)}\n\n".encode()


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_reply(
    provider: str,
    status: int,
    message: str | None = None,
    *,
    error_type: str | None = None,
    encoding: str | None = None,
    retry_after_ms: int | None = None,
) -> Reply:
    """An API error in the provider's shape (`provider` is "anthropic", "openai" or "responses").

    `retry_after_ms` adds the header both SDKs obey, so a retry test does not wait for the default backoff.
    """
    kind = error_type or _ERROR_TYPES.get(status, "api_error")
    text = message or f"fake {kind} ({status})"
    if provider == "anthropic":
        body: dict[str, Any] = {
            "type": "error",
            "error": {"type": kind, "message": text},
            "request_id": new_id("req_011"),
        }
        headers = [("request-id", body["request_id"])]
    elif provider in ("openai", "responses"):
        code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
        body = {"error": {"message": text, "type": kind, "param": None, "code": code}}
        headers = [("x-request-id", new_id("req_"))]
    elif provider == "gemini":
        body, headers = gemini.gemini_error(status, message), []
    else:
        raise ValueError(f"unknown provider {provider!r}")
    if retry_after_ms is not None:
        headers.append(("retry-after-ms", str(retry_after_ms)))
    return json_reply(body, status, headers=headers, encoding=encoding)


def sample(name: str) -> Any:
    """A file of the shared SDK samples: parsed JSON for `.json`, text otherwise (e.g. `anthropic/x.sse`)."""
    path = SAMPLES / name
    text = path.read_text()
    return json.loads(text) if path.suffix == ".json" else text


# ---------------------------------------------------------------------------------------------------------
# realistic response bodies

_ALNUM = string.ascii_letters + string.digits
_rng = random.Random(1729)
_rng_lock = threading.Lock()


def new_id(prefix: str, length: int = 22) -> str:
    """A provider-looking id (`msg_01…`, `toolu_01…`, `chatcmpl-…`, `call_…`); they differ on every call."""
    with _rng_lock:
        return prefix + "".join(_rng.choice(_ALNUM) for _ in range(length))


def _tool_use_block(use: Any) -> dict[str, Any]:
    if isinstance(use, dict):
        block = {"type": "tool_use", "id": use.get("id") or new_id("toolu_01"), "name": use["name"]}
        block["input"] = use.get("input", {})
        return block
    name, tool_input = use
    return {"type": "tool_use", "id": new_id("toolu_01"), "name": name, "input": tool_input}


def anthropic_message(
    *,
    text: str | Sequence[str] | None = None,
    tool_uses: Sequence[Any] = (),
    stop_reason: str | None = None,
    model: str = "claude-sonnet-4-6",
    thinking: str | None = None,
    extra_blocks: Sequence[dict[str, Any]] = (),
    **extra: Any,
) -> dict[str, Any]:
    """A Messages API response as the API sends it: `msg_01…` id, `toolu_01…` ids, usage, stop fields.

    `tool_uses` items are `(name, input)` pairs or dicts with `name`, `input` and optionally `id`; `text` may
    be a list for several text blocks; `thinking` adds a signed thinking block first. The stop reason
    defaults to `tool_use` when there are tool uses, else `end_turn`.
    """
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": "EqQBCkYIBxgCKkBzaWc="})
    texts = [text] if isinstance(text, str) else list(text or [])
    content += [{"type": "text", "text": piece} for piece in texts]
    content += [_tool_use_block(use) for use in tool_uses]
    content += list(extra_blocks)
    body: dict[str, Any] = {
        "id": new_id("msg_01"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool_uses else "end_turn"),
        "stop_sequence": None,
        "usage": {
            "input_tokens": 120,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 17,
            "service_tier": "standard",
        },
    }
    body.update(extra)
    return body


def _tool_call_entry(call: Any) -> dict[str, Any]:
    if isinstance(call, dict):
        name, arguments, call_id = call["name"], call.get("arguments", {}), call.get("id")
    else:
        (name, arguments), call_id = call, None
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, separators=(",", ":"))
    return {
        "id": call_id or new_id("call_", 24),
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def chat_completion(
    *,
    content: str | None = None,
    tool_calls: Sequence[Any] = (),
    finish_reason: str | None = None,
    refusal: str | None = None,
    model: str = "gpt-5.1",
    created: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A `chat.completion` as the API sends it: `chatcmpl-…` id, `call_…` ids, usage, fingerprint.

    `tool_calls` items are `(name, arguments)` pairs (arguments dict or raw string) or dicts with `name`,
    `arguments` and optionally `id`. The finish reason defaults to `tool_calls` when there are calls, else
    `stop`.
    """
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal, "annotations": []}
    if tool_calls:
        message["tool_calls"] = [_tool_call_entry(call) for call in tool_calls]
    body: dict[str, Any] = {
        "id": new_id("chatcmpl-", 29),
        "object": "chat.completion",
        "created": created if created is not None else int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": 82,
            "completion_tokens": 17,
            "total_tokens": 99,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": "fp_" + new_id("", 10).lower(),
    }
    body.update(extra)
    return body


def response_object(
    *,
    text: str | None = None,
    tool_calls: Sequence[Any] = (),
    refusal: str | None = None,
    status: str = "completed",
    model: str = "gpt-5.1",
    reasoning: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A Responses API object as the API sends it: `resp_…`, `msg_…`, `fc_…` and `call_…` ids, usage.

    `tool_calls` items are like `chat_completion`'s; `reasoning` puts an encrypted reasoning item first;
    `status="incomplete"` means cut at max_output_tokens.
    """
    output: list[dict[str, Any]] = []
    if reasoning:
        output.append({"id": new_id("rs_"), "type": "reasoning", "summary": [], "encrypted_content": "gAAAAB=="})
    if text is not None or refusal is not None:
        part: dict[str, Any] = (
            {"type": "refusal", "refusal": refusal}
            if refusal is not None
            else {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        )
        output.append(
            {"id": new_id("msg_"), "type": "message", "role": "assistant", "status": "completed", "content": [part]}
        )
    for call in tool_calls:
        entry = _tool_call_entry(call)
        output.append(
            {
                "id": new_id("fc_"),
                "type": "function_call",
                "call_id": entry["id"],
                "name": entry["function"]["name"],
                "arguments": entry["function"]["arguments"],
                "status": "completed",
            }
        )
    body: dict[str, Any] = {
        "id": new_id("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "store": True,
        "usage": {
            "input_tokens": 40,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 12,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 52,
        },
    }
    body.update(extra)
    return body


# ---------------------------------------------------------------------------------------------------------
# agent brains: deterministic multi-turn replies computed from the conversation in the request


def provider_of(path: str) -> str | None:
    """Which API a request path belongs to (the same rule as the session's, docs/format.md, "Recording")."""
    if gemini.is_gemini(path):
        return "gemini"
    if path.split("?", 1)[0].rstrip("/").endswith("/v1/messages"):
        return "anthropic"
    if path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
        return "openai"
    if path.split("?", 1)[0].rstrip("/").endswith("/v1/responses"):
        return "responses"
    return None


def _assistant_turns(body: dict[str, Any]) -> int:
    if "messages" not in body and isinstance(body.get("input"), list):
        # Responses: a run of assistant messages and function_call items is one model turn
        turns, inside = 0, False
        for item in body["input"]:
            assistant = item.get("type") == "function_call" or item.get("role") == "assistant"
            if assistant and not inside:
                turns += 1
            inside = assistant or (inside and item.get("type") == "reasoning")
        return turns
    return sum(1 for message in body.get("messages") or [] if message.get("role") == "assistant")


def last_tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results the request sends back for the last turn, as text, for every provider."""
    if "messages" not in body and isinstance(body.get("input"), list):
        outputs: list[str] = []
        for item in reversed(body["input"]):
            if item.get("type") != "function_call_output":
                break
            value = item.get("output")
            outputs.insert(0, value if isinstance(value, str) else json.dumps(value))
        return outputs
    messages = body.get("messages") or []
    results: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "tool":
            content = message.get("content")
            results.insert(0, content if isinstance(content, str) else json.dumps(content))
            continue
        if message.get("role") == "user" and isinstance(message.get("content"), list) and not results:
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    if isinstance(content, list):
                        content = "\n\n".join(part.get("text", "") for part in content)
                    results.append("" if content is None else content)
        break
    return results


def turn_brain(turns: Sequence[Any]) -> Brain:
    """A brain answering the k-th model call of a conversation (k = assistant turns already in its history).

    Each entry is a response body, a `Reply`, or a callable `(body) -> body | Reply`. Because the answer
    depends only on the request, a retried or replayed call gets the same answer.
    """

    def brain(body: dict[str, Any]) -> Any:
        turn = _assistant_turns(body)
        if turn >= len(turns):
            raise AssertionError(f"turn_brain: no scripted answer for turn {turn}")
        answer = turns[turn]
        return answer(body) if callable(answer) else answer

    return brain


def weather_brain(
    provider: str,
    *,
    cities: Sequence[str] = ("Paris",),
    text: str | None = "Let me check.",
    model: str | None = None,
) -> Brain:
    """A two-turn weather agent: first `get_weather` for each city (parallel calls when several), then a final
    answer quoting the tool results it was sent back."""

    def first(body: dict[str, Any]) -> dict[str, Any]:
        calls = [("get_weather", {"city": city}) for city in cities]
        if provider == "anthropic":
            return anthropic_message(text=text, tool_uses=calls, model=model or body.get("model") or "x")
        if provider == "responses":
            return response_object(text=text, tool_calls=calls, model=model or body.get("model") or "x")
        return chat_completion(content=text, tool_calls=calls, model=model or body.get("model") or "x")

    def final(body: dict[str, Any]) -> dict[str, Any]:
        answer = "Weather: " + "; ".join(last_tool_results(body))
        if provider == "anthropic":
            return anthropic_message(text=answer, model=model or body.get("model") or "x")
        if provider == "responses":
            return response_object(text=answer, model=model or body.get("model") or "x")
        return chat_completion(content=answer, model=model or body.get("model") or "x")

    return turn_brain([first, final])


# ---------------------------------------------------------------------------------------------------------
# the server


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    raw: bytes
    body: Any  # parsed JSON, or None when the body was not JSON

    def header(self, name: str) -> str | None:
        """The first value of a header (case-insensitive)."""
        name = name.lower()
        return next((value for key, value in self.headers if key.lower() == name), None)

    @property
    def provider(self) -> str | None:
        return provider_of(self.path)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-request (the fault tests' agents do) is no error of the server: the
        default report prints to a stderr pytest may have closed by then (a `ValueError` in the thread)."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeAPI:
    """The fake API server. Start with `start()` (or as a context manager); `close()` stops it."""

    def __init__(self) -> None:
        self.requests: list[ReceivedRequest] = []
        self.unanswered: list[ReceivedRequest] = []
        self.brain_errors: list[BaseException] = []
        self.brain: Brain | None = None
        self.stream_knobs: dict[str, Any] = {}  # `stream_reply` faults for JSON bodies sent to stream requests
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._clients: list[Any] = []  # sync clients (`anthropic()`, `openai()`, `closes`): closed with the server

    # -- control -------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` — Anthropic's `base_url`; OpenAI's is `url + "/v1"`."""
        if self._server is None:
            raise RuntimeError("the fake API is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    def queue(self, *replies: Reply | dict[str, Any]) -> FakeAPI:
        """Queue replies (a dict is a 200 JSON body); they are served first-in first-out."""
        with self._lock:
            self._queue.extend(_as_reply(reply) for reply in replies)
        return self

    @property
    def pending(self) -> int:
        """How many queued replies have not been served yet."""
        with self._lock:
            return len(self._queue)

    def paths(self) -> list[str]:
        return [request.path for request in self.requests]

    def bodies(self) -> list[Any]:
        return [request.body for request in self.requests]

    def reset(self) -> None:
        """Forget received requests, queued replies and the brain."""
        with self._lock:
            self.requests.clear()
            self.unanswered.clear()
            self.brain_errors.clear()
            self._queue.clear()
            self.brain = None

    def start(self) -> FakeAPI:
        server = _Server(("127.0.0.1", 0), _Handler, bind_and_activate=True)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fakeapi", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, drop open keep-alive connections and free the port."""
        while self._clients:
            self._clients.pop().close()
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- SDK clients wired to this server (SDKs are imported lazily: they are slow to import) ---------

    def anthropic(self, **kwargs: Any) -> Any:
        """A sync `anthropic.Anthropic` on this server: strict validation, no retries unless asked."""
        import anthropic
        import httpx2

        kwargs.setdefault("http_client", httpx2.Client())
        client = anthropic.Anthropic(**_client_defaults(kwargs, self.url))
        self._clients.append(client)
        return client

    def closes(self, client: Any) -> Any:
        """`client` (a sync SDK or HTTP client a test made for this server), closed with the server."""
        self._clients.append(client)
        return client

    def async_anthropic(self, **kwargs: Any) -> Any:
        import anthropic
        import httpx2

        kwargs.setdefault("http_client", httpx2.AsyncClient())
        return anthropic.AsyncAnthropic(**_client_defaults(kwargs, self.url))

    def openai(self, **kwargs: Any) -> Any:
        import openai

        client = openai.OpenAI(**_client_defaults(kwargs, self.openai_url))
        self._clients.append(client)
        return client

    def async_openai(self, **kwargs: Any) -> Any:
        import openai

        return openai.AsyncOpenAI(**_client_defaults(kwargs, self.openai_url))

    # -- called by the handler -----------------------------------------------------------------------

    def _answer(self, request: ReceivedRequest) -> Reply:
        reply = self._pick(request)
        body = request.body
        streamed = isinstance(body, dict) and (body.get("stream") or gemini.is_gemini_stream(request.path))
        if streamed and reply.chunks is None and reply.status == 200:
            return self._as_stream(reply, body)
        return reply

    def _as_stream(self, reply: Reply, request_body: dict[str, Any]) -> Reply:
        """A JSON answer to a stream request, sent as the provider streams it (with `stream_knobs` faults)."""
        try:
            answer = json.loads(_decode(reply.body, reply.encoding))
            _provider_of_body(answer)
        except ValueError:
            return reply  # not a model response: sent as it is
        options = request_body.get("stream_options") or {}
        knobs = {"include_usage": bool(options.get("include_usage")), "delay": reply.delay, **self.stream_knobs}
        streamed = stream_reply(answer, **knobs)
        streamed.headers = list(reply.headers)
        return streamed

    def _pick(self, request: ReceivedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
            brain = self.brain
        if brain is not None and request.provider is not None:
            try:
                return _as_reply(brain(request.body))
            except Exception as exc:  # surfaced by the fixture's teardown
                with self._lock:
                    self.brain_errors.append(exc)
                return error_reply(request.provider, 400, f"fakeapi: the brain failed: {exc!r}")
        with self._lock:
            self.unanswered.append(request)
        if request.provider is None:
            return json_reply({"error": {"message": f"fakeapi: no route {request.path}"}}, 404)
        return error_reply(request.provider, 400, f"fakeapi: no reply queued for {request.method} {request.path}")


def _client_defaults(kwargs: dict[str, Any], base_url: str) -> dict[str, Any]:
    kwargs.setdefault("base_url", base_url)
    kwargs.setdefault("api_key", "test-key")
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("_strict_response_validation", True)
    return kwargs


def _as_reply(reply: Reply | dict[str, Any]) -> Reply:
    if isinstance(reply, Reply):
        return reply
    if isinstance(reply, dict):
        return json_reply(reply)
    raise TypeError(f"a reply must be a Reply or a dict, not {type(reply).__name__}")


def _decode(data: bytes, encoding: str | None) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "br":
        import brotli

        return brotli.decompress(data)
    return data


def _encode(data: bytes, encoding: str | None) -> bytes:
    if encoding is None:
        return data
    if encoding == "gzip":
        return gzip.compress(data)
    if encoding == "br":
        import brotli

        return brotli.compress(data)
    raise ValueError(f"unknown content encoding {encoding!r}")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # an idle keep-alive connection is dropped after this many seconds
    server_version = "fakeapi/1"

    def setup(self) -> None:
        super().setup()
        fake: FakeAPI = self.server.fake  # type: ignore[attr-defined]
        with fake._lock:
            fake._connections.add(self.connection)

    def finish(self) -> None:
        fake: FakeAPI = self.server.fake  # type: ignore[attr-defined]
        with fake._lock:
            fake._connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(data)
                if len(data) + size > MAX_BODY:
                    raise ValueError("request body too large")
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY:
            raise ValueError("request body too large")
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        raw = self._read_body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = ReceivedRequest(
            method=self.command,
            path=self.path,
            headers=tuple((key.lower(), value) for key, value in self.headers.items()),
            raw=raw,
            body=body,
        )
        reply = self.server.fake._answer(request)  # type: ignore[attr-defined]
        self._send(reply)

    do_POST = _handle
    do_GET = _handle
    do_PUT = _handle
    do_DELETE = _handle

    def _send(self, reply: Reply) -> None:
        if reply.delay and not reply.chunks:
            time.sleep(reply.delay)
        self.send_response(reply.status)
        if reply.content_type is not None:
            self.send_header("content-type", reply.content_type)
        for key, value in reply.headers:
            self.send_header(key, value)
        if reply.chunks is not None and reply.encoding is None:
            self.send_header("transfer-encoding", "chunked")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            for position, chunk in enumerate(reply.chunks):
                if reply.delay:
                    time.sleep(reply.delay)
                if position == 1 and reply.hold is not None:
                    reply.hold.wait(HOLD_LIMIT)
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            if reply.drop:  # the server goes away mid-body: no terminating chunk, the connection closes
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        data = b"".join(reply.chunks) if reply.chunks is not None else reply.body
        data = _encode(data, reply.encoding)
        if reply.encoding is not None:
            self.send_header("content-encoding", reply.encoding)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
