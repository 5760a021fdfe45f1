"""Server-sent events as the anthropic and openai SDKs decode them: an incremental parser fed bytes as they
arrive, and a writer.

The parser follows the decoder both SDKs share, which is the WHATWG event-stream reading with its own edges:
lines end with `\\r\\n`, `\\n` or `\\r` (a `\\r\\n` split across two chunks is one line end); each line is
decoded as strict UTF-8 (a line that is not makes the SDK raise: `SSEParser.error`, nothing after it is read);
`:` starts a comment; several `data:` lines join with `\\n`; one space after the colon is dropped; a blank line
dispatches the event when it has a name, data, a retry (a value `int()` reads) or an id — and the id, unlike the
name, data and retry, is kept for every later event, so after an `id:` line every blank line dispatches one (with
no data: the openai SDK then raises on it).  No byte-order mark is stripped.  An event never ended by a blank line
is never dispatched.  The parser never waits for more input than the event it is in, so a transport that tees
chunks to the agent can assemble the message with no added latency.  (google-genai reads its streams by other
rules: `providers/gemini_frames`.)
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, NamedTuple

__all__ = ["DONE", "SIMPLE_EVENT", "SSEEvent", "SSEParser", "encode_event", "parse_all", "simple_event"]

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

    __slots__ = ("_buffer", "_data", "_event", "_id", "_retry", "_seen_field", "_skip_lf", "error", "lines")

    def __init__(self) -> None:
        self._buffer: list[bytes] = []  # an unfinished line's pieces
        self._skip_lf = False  # the last chunk ended with "\r": a leading "\n" of the next one ends no line
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None  # the last event id: kept across events, as the SDKs keep it
        self._retry: int | None = None
        self._seen_field = False  # a field line since the last blank line (the event is unfinished)
        self.lines = 0  #: whole lines read by the general rules (the fast path counts none)
        #: Why the SDK raises reading this stream (a line that is not UTF-8), else None; set, nothing more is read.
        self.error: str | None = None

    @property
    def idle(self) -> bool:
        """Between events: the next bytes start a new one (and no "\\r" waits for its "\\n")."""
        return not self._buffer and not self._seen_field and not self._skip_lf

    @property
    def last_id(self) -> str | None:
        """The id every event dispatched now carries (the last `id:` line's, kept across events)."""
        return self._id

    @property
    def pending(self) -> bool:
        """True when bytes were fed that have not yet formed a whole event (a stream cut mid-event)."""
        return bool(self._buffer) or self._seen_field

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events completed by `chunk` (possibly none), in stream order; those before a line that is not
        UTF-8 only (then `error` is set and later bytes are ignored)."""
        if not chunk or self.error is not None:
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
                event = simple_event(one, self._id)
                if event is not None:
                    return [event]
            else:
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
            try:
                line = raw.rstrip(b"\r\n").decode("utf-8")
            except UnicodeDecodeError:
                self.error = f"line {self.lines + 1} of the stream is not UTF-8"
                self._buffer = []
                break
            self.lines += 1
            event = self._line(line)
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
            event = None if match is None else simple_event(match, self._id)
            if match is None or event is None:
                return None
            events.append(event)
            position = match.end()
        return events

    def close(self) -> None:
        """End of stream: an event never ended by a blank line is discarded (the WHATWG rule, which the SDKs
        follow too); check `pending` first to learn that the stream was cut mid-event.  The SDKs still decode an
        unfinished last line: one that is not UTF-8 sets `error`."""
        if self._buffer and self.error is None:
            try:
                b"".join(self._buffer).decode("utf-8")
            except UnicodeDecodeError:
                self.error = f"line {self.lines + 1} of the stream is not UTF-8"
        self._buffer = []
        self._skip_lf = False
        self._reset()

    def _reset(self) -> None:
        self._event, self._data, self._retry, self._seen_field = None, [], None, False

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            self._seen_field = False
            if not self._event and not self._data and not self._id and self._retry is None:
                return None  # nothing to dispatch (an empty name counts as none, as in the SDKs)
            event = SSEEvent(self._event or None, "\n".join(self._data), self._id, self._retry)  # "" is no name
            self._reset()
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            with contextlib.suppress(ValueError):  # what the SDKs accept ("+7", " 7", "7_0"), not only digits
                self._retry = int(value)
        else:
            return None  # an unknown field is ignored and does not make an event
        self._seen_field = True
        return None


def simple_event(match: re.Match[bytes], last_id: str | None = None) -> SSEEvent | None:
    """The event a `SIMPLE_EVENT` match holds (with the stream's `last_id`); None when a line of it is not UTF-8
    (the general rules then read it, to the line the SDK raises at)."""
    name, data = match.groups()
    try:
        return SSEEvent(name.decode("utf-8") if name else None, data.decode("utf-8"), last_id)  # "" is no name
    except UnicodeDecodeError:
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
