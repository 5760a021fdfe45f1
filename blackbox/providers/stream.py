"""What every streaming wire format offers the transport: an assembler and a synthesizer.

Recording tees a streamed response: each chunk goes on to the agent the moment it arrives and is also fed to
an assembler, which rebuilds the response the API would have sent unstreamed. That body goes through the
provider's ordinary `normalize_response`, so a streamed and an unstreamed call record the same steps. The
assembler reports its result as soon as the terminal event arrives (an agent that stops reading early or never
closes the stream still has its call recorded), and tells a complete stream from one that ended early or
carried an `error` event (recorded like a failed call, never as a model output).

Replay goes the other way: the synthesizer turns the unstreamed body that `synthesize_response` rebuilt into
the event stream the provider would have sent, which the SDK's own stream helpers assemble to the recorded
message.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from blackbox.format.canonical import decode_json
from blackbox.providers.sse import SIMPLE_EVENT, SSEEvent, SSEParser, encode_event, simple_event

__all__ = [
    "BaseAssembler",
    "ContentDecoder",
    "EventStreamCodec",
    "StreamAssembler",
    "StreamCodec",
    "StreamFault",
    "StreamResult",
    "StreamStatus",
    "Text",
    "iter_chunks",
    "json_data",
    "need",
    "pieces",
]


class StreamStatus(Enum):
    """How a stream ended."""

    COMPLETE = "complete"  #: the terminal event arrived; `body` is the assembled response
    ENDED_EARLY = "ended_early"  #: the bytes stopped before the terminal event (a broken or abandoned stream)
    ERROR = "error"  #: the stream carried an error event (or data the SDK raises on); `error` is its message
    #: Blackbox cannot record exactly what the SDK hands the agent (an event after the terminal one that the
    #: SDK would still act on, a type-confused event, a stream past the recording limit): not recorded
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class StreamResult:
    """The outcome of one stream.

    `body` is the equivalent unstreamed response body when `status` is COMPLETE; otherwise it is what had been
    assembled so far, or None (for diagnostics only: it must not be recorded as a model output). `error` is the
    error event's message (ERROR), where the stream stopped (ENDED_EARLY) or why it cannot be recorded (REFUSED).
    """

    status: StreamStatus
    body: dict[str, Any] | None
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.status is StreamStatus.COMPLETE


class StreamAssembler(Protocol):
    """Fed a response's raw bytes as they arrive; rebuilds the unstreamed body."""

    def feed(self, chunk: bytes) -> StreamResult | None:
        """Take the next bytes; returns the result when they change it, else None: COMPLETE at the terminal
        event, ERROR or REFUSED when the call cannot be recorded (also after COMPLETE: an event the SDK would
        still act on after the terminal one).  Once the result is not COMPLETE, later bytes are ignored."""
        ...

    def skip_noise(self, chunks: list[bytes]) -> int:
        """Read `chunks` at once when every one is exactly one keep-alive event the stream skips wherever it
        comes (a ping, as the API writes it) and the assembler is between events: their size in bytes (they
        count as events and change nothing else), else 0 and nothing was read (`feed` reads them then)."""
        ...

    def finish(self) -> StreamResult:
        """The stream's end (the body was exhausted or closed): the result, ENDED_EARLY if no terminal event
        came. Safe to call more than once and after `feed` returned a result."""
        ...

    @property
    def result(self) -> StreamResult | None:
        """The result so far (COMPLETE once the terminal event arrived), else None."""
        ...


class StreamCodec(Protocol):
    """A provider's streaming wire format."""

    def assembler(self, content_type: str | None = None) -> StreamAssembler:
        """A fresh assembler for one streamed response (its `content-type`, for a format whose SDK decodes the
        body in the charset it names)."""
        ...

    def synthesize(self, body: dict[str, Any], *, piece_size: int | None = None) -> list[bytes]:
        """The SSE chunks (one event each) the provider would send for the unstreamed response `body`.

        Text and tool arguments go in one delta each, unless `piece_size` cuts them into deltas of that many
        characters (more chunks to spread over time when a replay keeps the recorded pace)."""
        ...


Events = Callable[[dict[str, Any], int | None], Iterable[tuple[str | None, dict[str, Any] | str]]]


class EventStreamCodec:
    """A `StreamCodec` made of a wire format's assembler class and its event writer (`events(body, piece_size)`
    yields each event's name and data)."""

    def __init__(self, assembler: Callable[[], StreamAssembler], events: Events) -> None:
        self._assembler = assembler
        self._events = events

    def assembler(self, content_type: str | None = None) -> StreamAssembler:
        """A fresh assembler; the charset is not asked: the anthropic and openai SDKs read bytes as UTF-8."""
        return self._assembler()

    def synthesize(self, body: dict[str, Any], *, piece_size: int | None = None) -> list[bytes]:
        return iter_chunks(self._events(body, piece_size))


class StreamFault(ValueError):
    """An event the assembler cannot follow exactly (a value of the wrong type, a delta for a block that never
    began): the call is refused rather than recorded as a guess."""


class BaseAssembler:
    """The shared half of the assemblers: SSE parsing, the result, the end-of-stream rule, containment.

    A subclass implements `_event` (return a result when the event ends the stream), `_after` (an event after
    the terminal one: a REFUSED result when the SDK would still act on it, else None) and `_ended` (the result
    when the bytes stop with no terminal event, e.g. a chat stream whose `[DONE]` was never sent).  Any
    exception an event raises in them refuses the call: the recorder's troubles never reach the agent.
    Text is gathered as lists of pieces joined once (`Text`), so assembling is linear in the stream's size.

    Bytes are read event by event where they have the shape the APIs write (`sse.SIMPLE_EVENT`: an optional
    `event:` line, one `data:` line, a blank line), and a subclass may read a run of such events at once in
    `_runs` (keep-alive pings, the text deltas of one block); anything else goes through the general SSE rules
    (`SSEParser`), and back to the fast reading at the next event boundary.  Both read the same events.
    """

    def __init__(self) -> None:
        self._parser = SSEParser()
        self._carry = b""  # the start of an event, completed by the next bytes
        self._result: StreamResult | None = None
        self._stopped = False  # the SDK reads no further (a failure, or OpenAI's `[DONE]`)
        self.events = 0  #: events seen (pings and unknown types included)

    #: Chunks that are exactly one whole event `_event` and `_after` both skip (a keep-alive ping in each
    #: spelling the API writes), so `skip_noise` counts a batch of them without parsing it.
    NOISE: tuple[bytes, ...] = ()

    def skip_noise(self, chunks: list[bytes]) -> int:
        noise = self.NOISE
        if not noise or self._carry or not self._parser.idle:
            return 0
        counts = [chunks.count(event) for event in noise]  # equal bytes: a compare each, no parse
        if sum(counts) != len(chunks):
            return 0
        if not self._stopped:
            self.events += len(chunks)
        return sum(count * len(event) for count, event in zip(counts, noise, strict=True))

    @property
    def result(self) -> StreamResult | None:
        return self._result

    def feed(self, chunk: bytes) -> StreamResult | None:
        if self._stopped or not chunk:
            return None
        if self._carry:
            chunk, self._carry = self._carry + chunk, b""
        changed: StreamResult | None = None
        pos, end = 0, len(chunk)
        while not self._parser.idle and pos < end and not self._stopped:  # an event the general rules read
            stop = end if b"\r" in chunk else _through_blank_line(chunk, pos)
            changed = self._parse(chunk[pos:stop] if pos or stop < end else chunk) or changed
            pos = stop
        while pos < end and not self._stopped:
            pos = self._runs(chunk, pos)
            if pos >= end or self._stopped:
                break
            one = SIMPLE_EVENT.match(chunk, pos)
            event = None if one is None else simple_event(one, self._parser.last_id)
            if one is None or event is None:  # not of the simple shape, or not UTF-8: the general rules read it
                rest = chunk[pos:] if pos else chunk
                if one is None and len(rest) < _CARRY_LIMIT and b"\n\n" not in rest and b"\r" not in rest:
                    self._carry = rest  # an event (of the simple shape or not) whose end comes later
                else:
                    changed = self._parse(rest) or changed
                break
            pos = one.end()
            result = self._read_one(event)
            if result is not None:
                changed = result
        return changed

    def _parse(self, data: bytes) -> StreamResult | None:
        """`data` read by the general rules: the result its events set, or ERROR at a line that is not UTF-8
        (the SDK decodes each line strictly and raises there, after handing over the events before it)."""
        changed = self._read(self._parser.feed(data))
        return self._broken() or changed

    def _broken(self) -> StreamResult | None:
        """ERROR when the parser met a line that is not UTF-8 (unless the SDK stopped reading before it)."""
        error = self._parser.error
        if error is None or self._stopped:
            return None
        self.events += 1
        self._result = StreamResult(StreamStatus.ERROR, None, error)
        self._stopped = True
        return self._result

    def _runs(self, chunk: bytes, pos: int) -> int:
        """Read a run of events of a shape the subclass reads in bulk, starting at the event boundary `pos`;
        return where the run ended (`pos` when there is none).  It must read exactly what `_event` would."""
        return pos

    def _read(self, events: list[SSEEvent]) -> StreamResult | None:
        changed = None
        for event in events:
            result = self._read_one(event)
            if result is not None:
                changed = result
            if self._stopped:
                break
        return changed

    def _read_one(self, event: SSEEvent) -> StreamResult | None:
        """One event: the result it sets (and the stream stops at one that is not COMPLETE), else None."""
        if self._stopped:
            return None
        self.events += 1
        try:
            result = self._event(event) if self._result is None else self._after(event)
        except Exception as exc:  # a type-confused event: refused, never raised into the agent's read
            result = self.refused(exc)
        if result is not None:
            self._result = result
            if not result.complete:
                self._stopped = True
        return result

    def finish(self) -> StreamResult:
        if not self._stopped:
            if self._carry:
                carry, self._carry = self._carry, b""
                self._parse(carry)  # it holds no blank line: the parser keeps it as pending
            cut = self._parser.pending
            self._parser.close()  # the SDKs decode an unfinished last line too: not UTF-8, they raise
            if self._broken() is None and self._result is None:
                try:
                    self._result = self._ended(cut)
                except Exception as exc:
                    self._result = self.refused(exc)
        assert self._result is not None  # the SDK stops reading only at a result
        return self._result

    def stop(self) -> None:
        """The SDK stops reading at this event (OpenAI's `[DONE]`): later bytes change nothing it hands over."""
        self._stopped = True

    def refused(self, why: Exception | str) -> StreamResult:
        """The call cannot be recorded as the agent received it (at the current event)."""
        if isinstance(why, Exception):
            detail = str(why) if isinstance(why, StreamFault) else f"{type(why).__name__}"
            why = f"event {self.events} could not be assembled ({detail})"
        return StreamResult(StreamStatus.REFUSED, None, why)

    def late(self, kind: object) -> StreamResult:
        """An event after the terminal one that the SDK would still hand over or act on."""
        return self.refused(f"a {kind!s:.60} event came after the stream's final event (event {self.events}); "
                            "the SDK would hand the agent a different answer than the one completed")

    def _event(self, event: SSEEvent) -> StreamResult | None:
        raise NotImplementedError

    def _after(self, event: SSEEvent) -> StreamResult | None:
        raise NotImplementedError

    def _ended(self, cut_mid_event: bool) -> StreamResult:
        raise NotImplementedError

    def _early(self, body: dict[str, Any] | None, cut_mid_event: bool) -> StreamResult:
        where = "in the middle of an event" if cut_mid_event else "before its final event"
        return StreamResult(StreamStatus.ENDED_EARLY, body, f"the stream ended {where} ({self.events} events)")


#: The longest start of an event kept to be completed by the next bytes; a longer one is read by the general
#: rules, which gather a long line's pieces once (so a huge event arriving in small chunks stays linear).
_CARRY_LIMIT = 1 << 15


def _through_blank_line(chunk: bytes, pos: int) -> int:
    """Where the first line end that may close an event lies after `pos` (a "\\n" at `pos` itself ends the
    line before it), so the general parser finishes its event and the rest is read fast again."""
    if chunk[pos : pos + 1] == b"\n":
        return pos + 1
    at = chunk.find(b"\n\n", pos)
    return len(chunk) if at < 0 else at + 2


class Text:
    """Text or JSON arriving in deltas: the pieces are kept and joined once (`old + delta` is quadratic)."""

    __slots__ = ("_pieces",)

    def __init__(self, first: str = "") -> None:
        self._pieces = [first] if first else []

    def add(self, piece: object) -> None:
        if type(piece) is not str:
            raise StreamFault(f"a delta of type {type(piece).__name__}, not text")
        self._pieces.append(piece)

    def extend(self, texts: list[str]) -> None:
        """Many deltas at once (each a str: decoded from JSON strings)."""
        self._pieces.extend(texts)

    def set(self, whole: object) -> None:
        self._pieces = []
        self.add(whole)

    def __bool__(self) -> bool:
        return any(self._pieces)

    def text(self) -> str:
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""


def json_data(event: SSEEvent) -> dict[str, Any]:
    """The event's data as a JSON object (decoded as the unstreamed body is, `canonical.decode_json`).

    Data that is not a JSON object makes the SDKs raise (they parse every event they do not skip), so it is a
    `StreamFault` here too."""
    try:
        value = decode_json(event.data)
    except ValueError:
        raise StreamFault("an event whose data is not JSON") from None
    if type(value) is not dict:
        raise StreamFault("an event whose data is not a JSON object")
    return value


def need(value: object, kind: type | tuple[type, ...], what: str) -> Any:
    """`value` when it has the type the wire format gives it, else a `StreamFault` naming `what`."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise StreamFault(f"{what} of type {type(value).__name__}")
    return value


def pieces(text: str, size: int | None) -> list[str]:
    """`text` cut into deltas of `size` characters (one delta when `size` is None); no delta for ""."""
    if not text:
        return []
    if size is None or size <= 0 or len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def iter_chunks(events: Iterable[tuple[str | None, dict[str, Any] | str]]) -> list[bytes]:
    """Encode `(event name, data)` pairs, one chunk per event."""
    return [encode_event(data, name) for name, data in events]


class ContentDecoder:
    """Undoes a response's `content-encoding` chunk by chunk, for a tee that reads the raw (still encoded) body.

    An assembler wants event-stream text; a server may compress it (gzip, deflate, br, or a comma list of them,
    applied in order). Each `decode` returns what the chunk completed (possibly b""); `flush` the rest.
    """

    def __init__(self, content_encoding: str | None) -> None:
        names = [name.strip().lower() for name in (content_encoding or "").split(",") if name.strip()]
        self._steps: list[Any] = [self._step(name) for name in reversed(names) if name != "identity"]
        self.decodes = bool(self._steps)  #: False: the bytes pass as they are

    @staticmethod
    def _step(name: str) -> Any:
        if name in ("gzip", "x-gzip"):
            return zlib.decompressobj(zlib.MAX_WBITS | 16)
        if name == "deflate":
            return _Deflate()
        if name == "br":
            import brotli  # only a brotli-encoded stream needs it

            return _Brotli(brotli.Decompressor())
        raise ValueError(f"unknown content-encoding {name!r}")

    def decode(self, chunk: bytes) -> bytes:
        for step in self._steps:
            chunk = step.decompress(chunk) if chunk else b""
        return chunk

    def flush(self) -> bytes:
        out = b""
        for step in self._steps:
            out = (step.decompress(out) if out else b"") + step.flush()
        return out


class _Deflate:
    """`deflate` is zlib-wrapped by the standard, raw in practice from some servers: try zlib, fall back to raw."""

    def __init__(self) -> None:
        self._inner: Any = None
        self._first = b""

    def decompress(self, data: bytes) -> bytes:
        if self._inner is None:
            self._first += data
            if len(self._first) < 2:
                return b""
            zlib_header = (self._first[0] & 0x0F) == 8 and int.from_bytes(self._first[:2], "big") % 31 == 0
            self._inner = zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
            data, self._first = self._first, b""
        return bytes(self._inner.decompress(data))

    def flush(self) -> bytes:
        if self._inner is None:
            return b""
        return bytes(self._inner.flush())


class _Brotli:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def decompress(self, data: bytes) -> bytes:
        process = getattr(self._inner, "process", None) or self._inner.decompress
        return bytes(process(data))

    def flush(self) -> bytes:
        return b""
