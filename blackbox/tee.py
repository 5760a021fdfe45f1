"""A recorded event stream, teed: the transport feeds it each chunk as the chunk passes on to the agent.

The chunks are decoded (a server may compress an event stream) and fed to the provider's stream assembler.
The call's outcome is reported to the session exactly once, the moment it is known:

- the terminal event arrived (`COMPLETE`): the assembled body, the response the API would have sent
  unstreamed; the session records it like any 2xx JSON response, before the agent reads that last chunk;
- an `error` event arrived (`ERROR`), or the body stopped before its terminal event (`ENDED_EARLY`: the
  network broke, or the agent closed or abandoned the stream): recorded like a failed call, that is not at
  all (never as a model output, never half a step).

Bytes after the outcome are passed on to the agent and otherwise ignored.  Nothing here depends on the agent
closing the stream.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable

from blackbox.calls import ModelCall
from blackbox.providers.stream import ContentDecoder, StreamCodec, StreamResult, StreamStatus

__all__ = ["OpenStreams", "StreamRecording"]

Done = Callable[[ModelCall, StreamResult], None]


class StreamRecording:
    """One recorded stream (a `calls.StreamSink`): assembles the bytes, reports the outcome once to `done`."""

    def __init__(self, call: ModelCall, codec: StreamCodec, content_encoding: str | None, done: Done,
                 streams: OpenStreams | None = None) -> None:
        self._call = call
        self._streams = streams
        self._assembler = codec.assembler()
        self._done = done
        self._lock = threading.Lock()
        self._over = False
        self._decoder: ContentDecoder | None = None
        try:
            self._decoder = ContentDecoder(content_encoding)
        except ValueError as exc:
            self._report(StreamResult(StreamStatus.ENDED_EARLY, None, f"the stream cannot be decoded: {exc}"))

    def feed(self, chunk: bytes) -> None:
        if self._over or self._decoder is None:
            return
        try:
            result = self._assembler.feed(self._decoder.decode(chunk))
        except (ValueError, zlib.error) as exc:  # a corrupt compressed body
            result = StreamResult(StreamStatus.ENDED_EARLY, None, f"the stream cannot be decoded: {exc}")
        if result is not None:
            self._report(result)

    def end(self) -> None:
        if self._over or self._decoder is None:
            return
        try:
            tail = self._decoder.flush()
        except (ValueError, zlib.error) as exc:
            self._report(StreamResult(StreamStatus.ENDED_EARLY, None, f"the stream cannot be decoded: {exc}"))
            return
        if tail:
            self.feed(tail)
        if not self._over:
            self._report(self._assembler.finish())

    def fail(self, reason: str) -> None:
        if not self._over:
            self._report(StreamResult(StreamStatus.ENDED_EARLY, None, reason))

    def _report(self, result: StreamResult) -> None:
        with self._lock:
            if self._over:
                return
            self._over = True
        if self._streams is not None:
            self._streams.closed(self)
        self._done(self._call, result)


class OpenStreams:
    """The session's recorded streams still open, so `finish()` can end those the agent abandoned."""

    def __init__(self) -> None:
        self._open: set[StreamRecording] = set()
        self._lock = threading.Lock()

    def open(self, call: ModelCall, codec: StreamCodec, content_encoding: str | None, done: Done) -> StreamRecording:
        """A new recorded stream, open until its outcome is reported."""
        stream = StreamRecording(call, codec, content_encoding, done, self)
        with self._lock:
            if not stream._over:
                self._open.add(stream)
        return stream

    def closed(self, stream: StreamRecording) -> None:
        with self._lock:
            self._open.discard(stream)

    def abandon_all(self) -> None:
        """The run is over: a stream still open was abandoned by the agent and is not recorded."""
        with self._lock:
            streams = list(self._open)
        for stream in streams:
            stream.fail("the run finished before the agent read the stream to its end")
