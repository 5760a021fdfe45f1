"""Server-sent events: an incremental parser fed bytes as they arrive, and a writer.

The parser follows the WHATWG event-stream rules the SDKs' own decoders follow: lines end with `\\r\\n`, `\\n`
or `\\r` (a `\\r\\n` split across two chunks is one line end), `:` starts a comment, several `data:` lines join
with `\\n`, one space after the colon is dropped, and a blank line dispatches the event. Like the SDKs'
decoders (and unlike the browser rule) an event with an `event:` line but no data is still dispatched. It
never waits for more input than the event it is in, so a transport that tees chunks to the agent can assemble
the message with no added latency.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

__all__ = ["DONE", "SIMPLE_EVENT", "SSEEvent", "SSEParser", "encode_event", "parse_all"]

#: The data of OpenAI's end-of-stream sentinel event (`data: [DONE]`).
DONE = "[DONE]"


# One event as the APIs write it: an optional `event:` line, one `data:` line, a blank line (one space after
# each colon dropped, as the general rules drop it).
SIMPLE_EVENT = re.compile(rb"(?:event: ?([^\r\n]*)\n)?data: ?([^\r\n]*)\n\n")


class SSEEvent(NamedTuple):
    """One dispatched event: its `event:` name (None when the stream gave none) and its joined data (a tuple:
    a long stream makes one per event, and a frozen dataclass costs several times more to build)."""

    event: str | None
    data: str
    id: str | None = None
    retry: int | None = None

    @property
    def is_done(self) -> bool:
        """True for OpenAI's `data: [DONE]` sentinel (its SDK stops at any data starting with it)."""
        return self.data.startswith(DONE)

    def json(self) -> Any:
        """The data parsed as JSON (raises ValueError when it is not JSON)."""
        return json.loads(self.data)


class SSEParser:
    """Feed bytes in chunks of any size with `feed`; each call returns the events those bytes completed."""

    __slots__ = ("_buffer", "_data", "_event", "_id", "_retry", "_seen_field", "_skip_lf")

    def __init__(self) -> None:
        self._buffer: list[bytes] = []  # an unfinished line's pieces
        self._skip_lf = False  # the last chunk ended with "\r": a leading "\n" of the next one ends no line
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None
        self._seen_field = False

    @property
    def idle(self) -> bool:
        """Between events: the next bytes start a new one (and no "\\r" waits for its "\\n")."""
        return not self._buffer and not self._seen_field and not self._skip_lf

    @property
    def pending(self) -> bool:
        """True when bytes were fed that have not yet formed a whole event (a stream cut mid-event)."""
        return bool(self._buffer) or self._seen_field

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events completed by `chunk` (possibly none), in stream order."""
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    return []
        if not self._buffer and not self._seen_field and chunk.endswith(b"\n\n"):
            one = SIMPLE_EVENT.fullmatch(chunk)  # one event a chunk, as servers flush them
            if one is not None:
                name, data = one.groups()
                return [SSEEvent(None if name is None else name.decode("utf-8", "replace"),
                                 data.decode("utf-8", "replace"))]
            whole = self._whole_events(chunk)
            if whole is not None:
                return whole
        if b"\n" not in chunk and b"\r" not in chunk:  # the middle of a line: kept until its end comes
            self._buffer.append(chunk)
            return []
        if self._buffer:
            self._buffer.append(chunk)
            data = b"".join(self._buffer)  # a long line is joined once, not once per chunk
            self._buffer = []
        else:
            data = chunk
        lines = data.splitlines(keepends=True)
        if not lines[-1].endswith((b"\n", b"\r")):
            self._buffer.append(lines.pop())
        if data.endswith(b"\r"):
            self._skip_lf = True
        events: list[SSEEvent] = []
        for raw in lines:
            event = self._line(raw.rstrip(b"\r\n").decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
        return events

    def _whole_events(self, chunk: bytes) -> list[SSEEvent] | None:
        """The fast path, exact for the common shape: whole events of an optional `event:` line and one
        `data:` line each (what the APIs send).  None when the chunk holds anything else: the general rules
        read it then (nothing was consumed)."""
        events = []
        position, end = 0, len(chunk)
        while position < end:
            match = SIMPLE_EVENT.match(chunk, position)
            if match is None:
                return None
            name, data = match.groups()
            events.append(SSEEvent(None if name is None else name.decode("utf-8", "replace"),
                                   data.decode("utf-8", "replace")))
            position = match.end()
        return events

    def close(self) -> None:
        """End of stream: an event never ended by a blank line is discarded (the WHATWG rule, which the SDKs
        follow too); check `pending` first to learn that the stream was cut mid-event."""
        self._buffer = []
        self._skip_lf = False
        self._reset()

    def _reset(self) -> None:
        self._event, self._data, self._id, self._retry, self._seen_field = None, [], None, None, False

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            if not self._seen_field:
                return None
            event = SSEEvent(self._event, "\n".join(self._data), self._id, self._retry)
            self._reset()
            return event
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isdigit():
                self._retry = int(value)
        else:
            return None  # an unknown field is ignored and does not make an event
        self._seen_field = True
        return None


def parse_all(data: bytes) -> list[SSEEvent]:
    """Every complete event of a whole stream (a trailing unterminated event is dropped)."""
    parser = SSEParser()
    events = parser.feed(data)
    parser.close()
    return events


def encode_event(data: Any, event: str | None = None) -> bytes:
    """One event as the APIs write it: an optional `event:` line, then `data:` (compact JSON unless a string,
    one `data:` line per line of text), then a blank line."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    head = f"event: {event}\n" if event is not None else ""
    body = "".join(f"data: {line}\n" for line in text.split("\n"))
    return (head + body + "\n").encode()
