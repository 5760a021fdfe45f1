"""Anthropic Messages streaming: assemble an event stream into a Messages response, and the reverse.

The stream is `message_start`, then per content block `content_block_start` / `content_block_delta`
(`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`, `citations_delta`) /
`content_block_stop`, then `message_delta` (stop reason, final usage) and `message_stop`. `ping` events and
event types this module does not know are skipped; an `error` event fails the stream.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from blackbox.providers.neutral import compact_json
from blackbox.providers.sse import SSEEvent
from blackbox.providers.stream import BaseAssembler, EventStreamCodec, StreamResult, StreamStatus, json_data, pieces

__all__ = ["CODEC", "AnthropicStreamAssembler"]


class AnthropicStreamAssembler(BaseAssembler):
    """Rebuilds the Messages response (`type: "message"`) that `message_stop` completes."""

    def __init__(self) -> None:
        super().__init__()
        self._message: dict[str, Any] | None = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, str] = {}  # input_json_delta text per tool_use block, parsed at its stop

    def _event(self, event: SSEEvent) -> StreamResult | None:
        name = event.event
        if name == "ping" or name is None:
            return None
        if name == "error":
            return StreamResult(StreamStatus.ERROR, self._body(), _error_message(event))
        data = json_data(event)
        if data is None:
            return None
        if name == "message_start":
            message = data.get("message")
            if isinstance(message, dict):
                self._message = copy.deepcopy(message)
                for index, block in enumerate(message.get("content") or []):
                    self._blocks[index] = copy.deepcopy(block)
        elif name == "content_block_start":
            block = data.get("content_block")
            if isinstance(block, dict) and isinstance(data.get("index"), int):
                self._blocks[data["index"]] = copy.deepcopy(block)
        elif name == "content_block_delta":
            self._delta(data)
        elif name == "content_block_stop":
            self._stop_block(data.get("index"))
        elif name == "message_delta":
            self._message_delta(data)
        elif name == "message_stop":
            return StreamResult(StreamStatus.COMPLETE, self._body())
        return None

    def _delta(self, data: dict[str, Any]) -> None:
        block = self._blocks.get(data.get("index"))  # type: ignore[arg-type]
        delta = data.get("delta")
        if block is None or not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = (block.get("text") or "") + (delta.get("text") or "")
        elif kind == "input_json_delta":
            index = data["index"]
            self._json[index] = self._json.get(index, "") + (delta.get("partial_json") or "")
        elif kind == "thinking_delta":
            block["thinking"] = (block.get("thinking") or "") + (delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))

    def _stop_block(self, index: Any) -> None:
        block = self._blocks.get(index)
        text = self._json.pop(index, None)
        if block is None or not text:
            return
        try:
            block["input"] = json.loads(text)
        except ValueError:
            block["input"] = text  # what the model sent, kept rather than guessed at

    def _message_delta(self, data: dict[str, Any]) -> None:
        if self._message is None:
            self._message = {}
        delta = data.get("delta")
        if isinstance(delta, dict):
            self._message.update(delta)
        usage = data.get("usage")
        if isinstance(usage, dict):
            merged = dict(self._message.get("usage") or {})
            merged.update({key: value for key, value in usage.items() if value is not None})
            self._message["usage"] = merged

    def _body(self) -> dict[str, Any] | None:
        if self._message is None:
            return None
        body = dict(self._message)
        for index in list(self._json):  # a tool_use block whose stop never came
            self._stop_block(index)
        body["content"] = [self._blocks[index] for index in sorted(self._blocks)]
        return body

    def _ended(self, cut_mid_event: bool) -> StreamResult:
        return self._early(self._body(), cut_mid_event)


def _error_message(event: SSEEvent) -> str:
    data = json_data(event)
    error = data.get("error") if data is not None else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        kind = error.get("type")
        return f"{kind}: {error['message']}" if isinstance(kind, str) else error["message"]
    return event.data or "an error event with no data"


def _events(body: dict[str, Any], size: int | None) -> Iterator[tuple[str | None, dict[str, Any] | str]]:
    usage = body.get("usage") or {}
    start = {key: value for key, value in body.items() if key not in ("content", "usage")}
    start.update(
        content=[],
        stop_reason=None,
        stop_sequence=None,
        usage={"input_tokens": usage.get("input_tokens", 0), "output_tokens": 0},
    )
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(body.get("content") or []):
        kind = block.get("type")
        if kind == "text":
            yield _start(index, {"type": "text", "text": ""})
            for piece in pieces(block.get("text") or "", size):
                yield _delta(index, {"type": "text_delta", "text": piece})
        elif kind == "tool_use":
            yield _start(index, {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}})
            tool_input = block.get("input")
            for piece in pieces(compact_json(tool_input or {}), size):
                yield _delta(index, {"type": "input_json_delta", "partial_json": piece})
        elif kind == "thinking":
            yield _start(index, {"type": "thinking", "thinking": "", "signature": ""})
            for piece in pieces(block.get("thinking") or "", size):
                yield _delta(index, {"type": "thinking_delta", "thinking": piece})
            yield _delta(index, {"type": "signature_delta", "signature": block.get("signature") or ""})
        else:
            yield _start(index, block)
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    delta = {"stop_reason": body.get("stop_reason"), "stop_sequence": body.get("stop_sequence")}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": delta,
            "usage": {"output_tokens": usage.get("output_tokens", 0)},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _start(index: int, block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


# The Messages API's event stream: one event per chunk, every event with its `event:` line.
CODEC = EventStreamCodec(AnthropicStreamAssembler, _events)
