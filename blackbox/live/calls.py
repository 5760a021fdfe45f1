"""What the HTTP transport and the session say to each other about one request.

The transport hands every request of an SDK client to a `CallHandler` (the session) and does what it decides:
`Reply` (answer here, without the network: a replayed response or a Blackbox error) or `Forward` (send it to
the network; with a `ModelCall`, hand the response back through `close_call` so it can be recorded).  This
module is all the transport knows of the session, so the two never import each other.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from blackbox.wire import Request

if TYPE_CHECKING:
    from blackbox.providers import Provider

__all__ = ["JSON", "SSE", "CallHandler", "Forward", "ModelCall", "Reply", "Request", "StreamSink", "now_ms"]

JSON = "application/json"
SSE = "text/event-stream"

_clock = time.time  # seconds since the epoch (a test sets its own clock here)


def now_ms() -> int:
    """Milliseconds since the epoch: the clock every step is stamped with."""
    return int(_clock() * 1000)


class ModelCall(msgspec.Struct):
    """A model request sent to the network whose response is to be recorded."""

    provider: Provider
    model_input: Any  # the neutral model_input payload (blackbox.format.payloads.ModelInput)
    started_at: int
    stream: bool = False  # the request asked for an event stream (so its answer is one, whatever its header)
    # When the answer was whole: a stream's terminal event (recorded later, once the stream is over for the
    # agent); None until then, and for an unstreamed answer, recorded as it arrives.  The model call's
    # latency is its output's timestamp less `started_at`.
    arrived_at: int | None = None
    request: Any = None  # the request body as the provider read it (`Provider.note_answer` pairs it with the answer)


class Reply(msgspec.Struct):
    """Answer the request here, without the network (a replayed response or a Blackbox error).

    A replayed streaming request is answered with the provider's synthesized event stream: `content_type`
    `text/event-stream` and `chunks` (one event each; `body` is their concatenation), sent `pause` seconds
    apart when the replay keeps the recorded pace (0: as fast as the agent reads)."""

    status: int
    body: bytes
    content_type: str = JSON
    chunks: list[bytes] | None = None
    pause: float = 0.0


class StreamSink(Protocol):
    """Where the transport tees a recorded event stream: the raw bytes as they pass on to the agent."""

    def relay(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """The body's chunks passed on to the agent as they come, exactly as they came from the network
        (still content-encoded), and kept for the recording on the way; told when the body ends or breaks."""
        ...

    def arelay(self, chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
        """`relay` for an async body."""
        ...

    def fail(self, reason: str) -> None:
        """The body stopped before its end: the network broke, or the agent closed the stream early."""
        ...


class Forward(msgspec.Struct):
    """Send the request to the network; `call` is set when the response must be recorded.  `body`, when set, is
    sent in place of the request's own body (the whole conversation, where the agent named server state no
    live server issued: `Provider.outgoing`)."""

    call: ModelCall | None = None
    body: bytes | None = None


class CallHandler(Protocol):
    """The transport's view of a session: one decision per request, then the response of a recorded call."""

    def open_call(self, request: Request) -> Reply | Forward:
        """Decide what happens to one request (all of it: the provider may read the host, path, query)."""
        ...

    def close_call(self, call: ModelCall, status: int, content_type: str, body: bytes) -> Reply | None:
        """A forwarded model call came back (its whole body read); None hands the response over as it came."""
        ...

    def stream_call(self, call: ModelCall, content_encoding: str | None, content_type: str = "") -> StreamSink:
        """A forwarded model call came back 2xx as an event stream: the sink its bytes are teed into."""
        ...

    def abort_call(self, call: ModelCall) -> None:
        """The network failed before a response arrived."""
        ...
