"""Anthropic Messages streaming: assemble an event stream into a Messages response, and the reverse.

The stream is `message_start`, then per content block `content_block_start` / `content_block_delta`
(`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`, `citations_delta`) /
`content_block_stop`, then `message_delta` (stop reason, final usage) and `message_stop`. As in the SDK, an
event's name only sorts it (`ping`, no name or no data: skipped; `error`: fails the stream) and its data's
`type` says what it is; types this module does not know are skipped. The SDK reads on after
`message_stop`, and its accumulator applies a later delta too: a content or message event after it refuses the
call (what was completed is not what the agent got).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

from blackbox.format.canonical import decode_json
from blackbox.providers.neutral import compact_json
from blackbox.providers.sse import SSEEvent
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

__all__ = ["CODEC", "AnthropicStreamAssembler"]

# The SDK's message accumulator acts on events of these types (the data's `type`: the event's name only
# decides whether the SDK skips it — `ping`, none — or raises — `error`) after `message_stop` too.
_LATE = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                   "message_delta"})
_TEXT_FIELDS = {"text_delta": ("text", "text"), "thinking_delta": ("thinking", "thinking")}

# Runs read at once (`_runs`), exactly as `_event` reads each of their events; the shapes the API writes.
_PINGS = re.compile(rb'(?:event: ping\ndata: \{"type": ?"ping"\}\n\n)+')
_DELTA_START = b"event: content_block_delta\n"
_TAIL = b'"}}\n\n'
_STRING = rb'[^"\\\r\n]*(?:\\[^\r\n][^"\\\r\n]*)*'  # the inside of a JSON string, lexically
#: A block's type → its delta's type and field; the deltas of the last block read in bulk.
_BULK = {"text": ("text_delta", "text"), "thinking": ("thinking_delta", "thinking"),
         "tool_use": ("input_json_delta", "partial_json")}
_LANES: dict[tuple[int, str], tuple[re.Pattern[bytes], bytes]] = {}
# A `\\u` escape cut short (by the end of its string: looked for in the events, where a `"` follows) or a
# surrogate's; also any `\\u` text after an escaped backslash, which only sends the run the slower way.
_ODD_ESCAPE = re.compile(rb"\\u(?![0-9a-fA-F]{4})|\\u[dD][89a-fA-F]")


def _lane(index: int, kind: str, key: str) -> tuple[re.Pattern[bytes], bytes]:
    """(a run of compact `content_block_delta` events of `kind` for block `index`, the bytes of such an event
    before its string)."""
    lane = _LANES.get((index, kind))
    if lane is None:
        head = (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,'
                b'"delta":{"type":"%s","%s":"' % (index, kind.encode(), key.encode()))
        run = b"(?:" + re.escape(head) + _STRING + re.escape(_TAIL) + b")+"
        lane = _LANES[index, kind] = (re.compile(run), head)
    return lane


def _run_strings(chunk: bytes, start: int, end: int, head: bytes) -> tuple[list[str], int, int]:
    """The decoded strings of the run of events `chunk[start:end]` (a match of its lane), how many events
    they are, and where they end: each string decoded as it would be alone (an event that is not valid JSON
    ends the run before it).

    Joined, the strings decode as one when nothing can differ from decoding them apart: every `\\u` escape
    whole and no surrogate (a pair or an escape's digits split over two events), and valid UTF-8 throughout
    (a character split over two events); else as a JSON array, which checks each one alone."""
    span = chunk[start:end]
    skip = len(head) - len(_DELTA_START)
    # Each event is its `event:` line, its `data:` line and a blank line; a string holds no line end.
    strings = [line[skip:-3] for line in span.split(b"\n")[1::3]]
    joined = b"".join(strings)
    if (b"\\u" not in joined or _ODD_ESCAPE.search(span) is None) and (joined.isascii() or _utf8(span)):
        try:
            return [decode_json(b'"' + joined + b'"')], len(strings), end
        except ValueError:
            pass
    try:
        return decode_json(b'["' + b'","'.join(strings) + b'"]'), len(strings), end
    except ValueError:
        pass
    texts = []
    for string in strings:
        try:
            texts.append(decode_json(b'"' + string + b'"'))
        except ValueError:
            break
    done = len(texts)
    return texts, done, start + done * (len(head) + len(_TAIL)) + sum(map(len, strings[:done]))


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class AnthropicStreamAssembler(BaseAssembler):
    """Rebuilds the Messages response (`type: "message"`) that `message_stop` completes.

    Blocks are kept in arrival order, as the SDK's accumulator keeps them (it appends each started block and
    finds a delta's block by position), so a block index that is not the next position is refused."""

    NOISE = (b'event: ping\ndata: {"type":"ping"}\n\n', b'event: ping\ndata: {"type": "ping"}\n\n')

    def __init__(self) -> None:
        super().__init__()
        self._message: dict[str, Any] | None = None
        self._blocks: list[dict[str, Any]] = []
        self._texts: dict[tuple[int, str], Text] = {}  # (block, field) → its deltas, joined at the end
        self._json: dict[int, Text] = {}  # input_json_delta text per tool_use block, parsed at its stop

    @staticmethod
    def _skipped(event: SSEEvent) -> bool:
        """Events the SDK skips by their name and data: pings, events without a name or without data."""
        return event.event in ("ping", None) or not event.data

    def _event(self, event: SSEEvent) -> StreamResult | None:
        if self._skipped(event):
            return None
        if event.event == "error":  # the SDK raises on the event's name; any other name, the data's type decides
            return StreamResult(StreamStatus.ERROR, None, _error_message(event))
        data = json_data(event)
        kind = data.get("type")
        if kind == "content_block_delta":  # most of a stream: first (no block before message_start)
            self._delta(data)
            return None
        if kind == "message_start":
            if self._message is not None:
                raise StreamFault("a second message_start")
            message = need(data.get("message"), dict, "message_start's message")
            self._message = copy.deepcopy(message)
            for block in need(message.get("content") or [], list, "message_start's content"):
                self._blocks.append(copy.deepcopy(need(block, dict, "a content block")))
        elif kind in _LATE and self._message is None:
            raise StreamFault(f"{kind} before message_start")
        elif kind == "content_block_start":
            if need(data.get("index"), int, "content_block_start's index") != len(self._blocks):
                raise StreamFault(f"content_block_start for block {data['index']}, not {len(self._blocks)}")
            self._blocks.append(copy.deepcopy(need(data.get("content_block"), dict, "content_block")))
        elif kind == "content_block_stop":
            self._stop_block(self._index(data))
        elif kind == "message_delta":
            self._message_delta(data)
        elif kind == "message_stop":
            return StreamResult(StreamStatus.COMPLETE, self._body())
        return None

    def _after(self, event: SSEEvent) -> StreamResult | None:
        if self._skipped(event):
            return None
        if event.event == "error":
            return self.late("error")
        kind = json_data(event).get("type")
        return self.late(kind) if kind in _LATE else None

    def _runs(self, chunk: bytes, pos: int) -> int:
        """Pings (skipped, counted), and the deltas of the last block added to its text, many events at once
        (`_run_strings`)."""
        while True:
            if chunk.startswith(b"event: ping\n", pos):
                pings = _PINGS.match(chunk, pos)
                if pings is None:
                    return pos
                self.events += chunk.count(b"\n\n", pos, pings.end())
                pos = pings.end()
                continue
            if self._result is not None or not chunk.startswith(_DELTA_START, pos) or not self._blocks:
                return pos
            index = len(self._blocks) - 1
            kind_of = self._blocks[index].get("type")
            bulk = _BULK.get(kind_of) if isinstance(kind_of, str) else None  # a type-confused block: one by one
            if bulk is None or index > 255:
                return pos
            kind, key = bulk
            text = self._json.get(index) if key == "partial_json" else self._texts.get((index, key))
            if text is None:  # the block's first delta sets it up
                return pos
            run_pattern, head = _lane(index, kind, key)
            run = run_pattern.match(chunk, pos)
            if run is None:
                return pos
            texts, events, end = _run_strings(chunk, pos, run.end(), head)
            if not events:  # its first string is not valid JSON: read (and refused) as `_event` reads it
                return pos
            text.extend(texts)
            self.events += events
            pos = end

    def _index(self, data: dict[str, Any]) -> int:
        index: int = need(data.get("index"), int, "a block index")
        if not 0 <= index < len(self._blocks):
            raise StreamFault(f"an event for block {index}, which never started")
        return index

    def _delta(self, data: dict[str, Any]) -> None:
        index: Any = data.get("index")
        delta = data.get("delta")
        if type(index) is not int or not 0 <= index < len(self._blocks):
            self._index(data)  # raises, naming what is wrong
        if type(delta) is not dict:
            raise StreamFault(f"a delta of type {type(delta).__name__}")
        kind = delta.get("type")
        if kind in _TEXT_FIELDS:
            field, key = _TEXT_FIELDS[kind]
            text = self._texts.get((index, field))
            if text is None:
                if self._blocks[index].get("type") != field:
                    return  # the SDK adds a text delta to a text block only (a thinking delta to a thinking block)
                text = self._texts[index, field] = Text(need(self._blocks[index].get(field) or "", str, field))
            text.add(delta.get(key) or "")
        elif kind == "input_json_delta":
            self._json.setdefault(index, Text()).add(delta.get("partial_json") or "")
        elif kind == "signature_delta":
            self._blocks[index]["signature"] = delta.get("signature")
        elif kind == "citations_delta":
            self._blocks[index].setdefault("citations", []).append(delta.get("citation"))

    def _stop_block(self, index: int) -> None:
        text = self._json.pop(index, None)
        if not text:
            return
        try:
            self._blocks[index]["input"] = json.loads(text.text())
        except ValueError:
            self._blocks[index]["input"] = text.text()  # what the model sent, kept rather than guessed at

    def _message_delta(self, data: dict[str, Any]) -> None:
        assert self._message is not None
        delta = data.get("delta")
        if delta is not None:
            self._message.update(need(delta, dict, "message_delta's delta"))
        usage = data.get("usage")
        if usage is not None:
            merged = dict(need(self._message.get("usage") or {}, dict, "usage"))
            merged.update({key: value for key, value in need(usage, dict, "usage").items() if value is not None})
            self._message["usage"] = merged

    def _body(self) -> dict[str, Any] | None:
        if self._message is None:
            return None
        body = dict(self._message)
        for index in list(self._json):  # a tool_use block whose stop never came
            self._stop_block(index)
        blocks = [dict(block) for block in self._blocks]
        for (index, field), text in self._texts.items():
            blocks[index][field] = text.text()
        body["content"] = blocks
        return body

    def _ended(self, cut_mid_event: bool) -> StreamResult:
        return self._early(self._body(), cut_mid_event)


def _error_message(event: SSEEvent) -> str:
    try:
        error = json_data(event).get("error")
    except StreamFault:
        error = None
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
