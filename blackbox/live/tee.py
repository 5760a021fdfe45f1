"""A recorded event stream, teed: the agent reads the body through `StreamRecording.relay`, which holds each
chunk for the recording as it passes on.

The chunks are decoded (a server may compress an event stream) and fed to the provider's stream assembler.
The call's outcome is reported to the session exactly once:

- the terminal event arrived and nothing the SDK would still act on came after it (`COMPLETE`): the
  assembled body, the response the API would have sent unstreamed, recorded like any 2xx JSON response once
  the stream is over for the agent: its body ended, the agent closed or dropped it, or the agent went on
  (`OpenStreams.settle`: its next model call, a wrapped tool, `finish()`, the process's exit).  Recording
  at the terminal event itself would miss what the SDK still reads after it;
- an `error` event arrived, or the body stopped before its terminal event (the network broke, or the agent
  closed or abandoned the stream): recorded like a failed call, that is not at all (never as a model output,
  never half a step);
- Blackbox cannot record exactly what the agent got (`REFUSED`: an event after the terminal one, an event of
  the wrong shape, a stream past `RECORD_LIMIT`, or any error of the recorder's own): not recorded, with a
  warning on stderr.  The agent's bytes never depend on the recorder: nothing raised here reaches its read.

Bytes after the outcome are passed on to the agent and otherwise ignored (not even decoded).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from itertools import islice

from blackbox.live import calls
from blackbox.live.calls import ModelCall
from blackbox.providers.stream import ContentDecoder, StreamCodec, StreamResult, StreamStatus

__all__ = ["BATCH", "RECORD_LIMIT", "OpenStreams", "StreamRecording", "not_recorded"]

Done = Callable[[ModelCall, StreamResult], None]

#: Decoded bytes of one event stream past which Blackbox stops recording it (the agent's bytes flow on).
#: A 1.6 MB answer in 4-character deltas is ~45 MB of events; an endless stream stops costing anything here.
RECORD_LIMIT = 256 * 1024 * 1024


def not_recorded(reason: str) -> None:
    """Say on stderr that a model call the agent received is missing from the recording, and why."""
    print(f"[blackbox] a model call was not recorded: {reason}; the agent got the response as it came, and "
          "a replay of this recording will not find the call", file=sys.stderr)


#: Chunks held before they are read together: the agent's thread pays one list append per chunk, and the
#: decoding, parsing and assembling run over many events at once (one network read is at most ~64 KiB, so
#: at most a few MiB wait here).  Everything held is read before the outcome is looked at.
BATCH = 128

#: A batch that took at least this long (seconds) came at a pace where reading the clock at every chunk
#: costs nothing that matters (under 0.5% of the time between chunks): the next batch stamps each chunk.
#: A faster batch is stamped as it begins and as it ends (`StreamRecording.relay`).
SLOW_BATCH = BATCH * 20e-6


def _why_it_ended(exc: BaseException) -> str:
    """Why a recorded stream ended early: the agent stopped reading (the generator was closed), or reading
    it raised."""
    if isinstance(exc, GeneratorExit):
        return "the agent stopped reading the stream before its end"
    return f"the stream broke ({type(exc).__name__})"


class StreamRecording:
    """One recorded stream (a `calls.StreamSink`): assembles the bytes, reports the outcome once to `done`.

    `relay` (or `feed`) only holds the chunk (the agent's read goes on at once); every `BATCH` chunks, and before the
    outcome is asked for (`end`, `fail`, `settle`), the held chunks are decoded and assembled in one go, under
    a lock of their own: `settle` may come from another thread than the agent's read.  The outcome is
    reported outside that lock (reporting takes the session's)."""

    def __init__(self, call: ModelCall, codec: StreamCodec, content_encoding: str | None, done: Done,
                 streams: OpenStreams | None = None, content_type: str = "") -> None:
        self._call = call
        self._streams = streams
        self._done = done
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        self._held: list[bytes] = []
        self._fed_at = 0.0  # when the latest chunk came (`calls._clock`): the answer was whole by then
        self._over = False
        self._size = 0
        self._decoder: ContentDecoder | None = None
        self._assembler = codec.assembler(content_type)
        try:
            self._decoder = ContentDecoder(content_encoding)
        except Exception as exc:  # an unknown encoding, or brotli not installed
            self._refuse(f"the stream cannot be decoded: {exc}")

    def relay(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """The body as the agent reads it: each chunk passed on as it comes, held for the recorder on the way.

        The agent's read pays one list append a chunk: the chunks are taken `BATCH` at a time by `islice`
        (no count kept), and the clock is read at each chunk only while they come slowly enough for it not
        to matter (`SLOW_BATCH`); a fast batch is stamped as it begins and where it is read, so an answer
        completed inside it is dated no later than its last chunk came and no earlier than its first.  Once
        the outcome is reported the rest is passed on untouched."""
        held = self._held
        hold = held.append
        clock = calls._clock
        rest = iter(chunks)
        each = True  # the pace is not known yet
        try:
            while not self._over:
                began = self._fed_at = clock()
                if each:
                    for chunk in islice(rest, BATCH - 1):
                        hold(chunk)
                        self._fed_at = clock()
                        yield chunk
                else:
                    for chunk in islice(rest, BATCH - 1):
                        hold(chunk)
                        yield chunk
                last = next(rest, None)  # the batch's last chunk, or the end of the body
                if last is None:
                    break
                hold(last)
                self._fed_at = clock()
                each = self._fed_at - began >= SLOW_BATCH
                self._report_failure(self._read())
                yield last
            else:
                yield from rest
        except BaseException as exc:
            self.fail(_why_it_ended(exc))
            raise
        self.end()

    async def arelay(self, chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
        """`relay` for an async body (a chunk at a time: the event loop costs far more than the tee here)."""
        feed = self.feed
        try:
            async for chunk in chunks:
                feed(chunk)
                yield chunk
        except BaseException as exc:
            self.fail(_why_it_ended(exc))
            raise
        self.end()

    def feed(self, chunk: bytes) -> None:
        """Hold one chunk of the body (read with the others every `BATCH` chunks)."""
        self._fed_at = calls._clock()
        held = self._held
        held.append(chunk)
        if len(held) >= BATCH:
            self._report_failure(self._read())

    def _read(self, *, last: bool = False) -> StreamResult | None:
        """Decode and assemble what is held (and, `last`, what the decoder still has): a result that stops
        the recording (ERROR, REFUSED), else None."""
        with self._reading:
            held = self._held
            count = len(held)  # the agent's thread may append meanwhile: those wait for the next read
            if self._over or self._decoder is None or not (count or last):
                del held[:count]  # bytes after the outcome are passed on to the agent, not even decoded
                return None
            chunks = held[:count]
            del held[:count]
            try:
                if not self._decoder.decodes and (skipped := self._assembler.skip_noise(chunks)):
                    data = b""  # keep-alive pings only: counted, not parsed
                    self._size += skipped
                else:
                    data = chunks[0] if count == 1 else b"".join(chunks)  # b"" when none
                    if self._decoder.decodes:
                        data = self._decoder.decode(data) + (self._decoder.flush() if last else b"")
                    self._size += len(data)
                if self._size > RECORD_LIMIT:
                    return StreamResult(StreamStatus.REFUSED, None,
                                        f"the stream passed {RECORD_LIMIT:,} bytes, Blackbox's recording limit")
                result = self._assembler.feed(data) if data else None
                if last and (result is None or result.complete):
                    result = self._assembler.finish()
                whole = self._assembler.result
                if whole is not None and whole.complete and self._call.arrived_at is None:
                    # the answer was whole when its last chunk came, however late it is read or recorded
                    self._call.arrived_at = int(self._fed_at * 1000) if self._fed_at else calls.now_ms()
            except Exception as exc:  # a corrupt compressed body, or any trouble of the recorder's
                return StreamResult(StreamStatus.REFUSED, None,
                                    f"the stream could not be read ({type(exc).__name__}: {exc})")
        return result

    def _report_failure(self, result: StreamResult | None) -> None:
        if result is not None and not result.complete:
            self._report(result)

    def end(self) -> None:
        """The body ended: the terminal event's result, else why the stream is incomplete (with a warning:
        the server ended a stream the agent read whole)."""
        result = self._read(last=True)
        if result is not None:
            self._report(result, warn=result.status is StreamStatus.ENDED_EARLY)

    def fail(self, reason: str) -> None:
        """The agent closed or dropped the stream, or the network broke: recorded if its terminal event had
        arrived (the agent got the whole answer), else not at all."""
        self._report_failure(self._read())
        if not self._over and not self.settle():
            self._report(StreamResult(StreamStatus.ENDED_EARLY, None, reason))

    def settle(self) -> bool:
        """The agent went on: record the stream now if its terminal event has arrived (True)."""
        self._report_failure(self._read())
        result = self._assembler.result
        if self._over or result is None or not result.complete:
            return False
        self._report(result)
        return True

    def _refuse(self, reason: str) -> None:
        self._report(StreamResult(StreamStatus.REFUSED, None, reason))

    def _report(self, result: StreamResult, *, warn: bool = False) -> None:
        with self._lock:
            if self._over:
                return
            self._over = True
        if self._streams is not None:
            self._streams.closed(self)
        if warn or result.status is StreamStatus.REFUSED:
            not_recorded(f"a streamed answer: {result.error}")
        try:
            self._done(self._call, result)
        except Exception as exc:  # never into the agent's read
            not_recorded(f"a streamed answer could not be recorded ({type(exc).__name__}: {exc})")


class OpenStreams:
    """The session's recorded streams still open, so the session can settle them when the agent goes on and
    `finish()` can end those the agent abandoned."""

    def __init__(self) -> None:
        self._open: set[StreamRecording] = set()
        self._lock = threading.Lock()

    def open(self, call: ModelCall, codec: StreamCodec, content_encoding: str | None, done: Done,
             content_type: str = "") -> StreamRecording:
        """A new recorded stream, open until its outcome is reported (`content_type`: the response's header)."""
        stream = StreamRecording(call, codec, content_encoding, done, self, content_type)
        with self._lock:
            if not stream._over:
                self._open.add(stream)
        return stream

    def closed(self, stream: StreamRecording) -> None:
        with self._lock:
            self._open.discard(stream)

    def settle(self) -> None:
        """The agent went on (another call, a tool, the end of the run): every open stream whose terminal
        event has arrived is recorded now."""
        if self._open:
            with self._lock:
                streams = list(self._open)
            for stream in streams:
                stream.settle()

    def abandon_all(self) -> None:
        """The run is over: a stream still open is recorded if complete, else it was abandoned by the agent."""
        with self._lock:
            streams = list(self._open)
        for stream in streams:
            stream.fail("the run finished before the agent read the stream to its end")
