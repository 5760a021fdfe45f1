"""HTTP transports that hand every request of an SDK client to a session (a `calls.CallHandler`).

The SDKs moved from `httpx` to its fork `httpx2`; both define the same transport interface
(`handle_request` / `handle_async_request`) but separate classes, so the transport classes are built once
per module.  A transport asks the session what to do with a request: answer it here (a replayed response,
a Blackbox error as an HTTP 400 the SDK will not retry) or forward it to the real network transport, reading
the whole response so the session can record it, then hand the agent that same response object, already
read (its headers, status and extensions untouched; `read()` later returns the body it already holds).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import importlib
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

from blackbox.live.calls import SSE, CallHandler, Forward, ModelCall, Reply, Request, StreamSink

__all__ = ["http_module", "make_client", "transport_classes"]

def http_module(flavor: str | None) -> ModuleType:
    """httpx2 when importable (what current SDKs use), else httpx; `flavor` forces one."""
    if flavor not in (None, "httpx", "httpx2"):
        raise ValueError(f"flavor must be 'httpx2' or 'httpx', not {flavor!r}")
    if flavor is not None:
        return importlib.import_module(flavor)
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return importlib.import_module("httpx")


def _reply(http: ModuleType, request: Any, reply: Reply) -> Any:
    headers = [("content-type", reply.content_type), ("x-should-retry", "false")]
    if reply.chunks is not None and reply.pause > 0:
        return http.Response(reply.status, headers=headers, request=request,
                             stream=stream_classes(http)[2](reply.chunks, reply.pause))
    if _answers_read(http):
        return _read_answer(http, reply.status, headers, reply.body, request)
    return http.Response(reply.status, headers=headers, content=reply.body, request=request)


def _read_answer(http: ModuleType, status: int, headers: list[tuple[str, str]], body: bytes, request: Any) -> Any:
    """`http.Response(status, headers=headers, content=body, request=request)`, built without its reading pass:
    `content=` makes the response read its own in-memory body through the decoder and chunker machinery (the
    larger part of a replayed call's cost inside the transport); the body is set as read instead, exactly as
    that pass leaves it.  Used only where `_answers_read` found the two the same."""
    if body:
        headers = [*headers, ("Content-Length", str(len(body)))]
    response = http.Response(status, headers=headers, stream=http.ByteStream(body), request=request)
    response._content = body
    response.is_stream_consumed = True
    response.is_closed = True
    return response


@functools.cache
def _answers_read(http: ModuleType) -> bool:
    """Whether `_read_answer` builds what `http.Response(content=...)` builds, in this version of the module."""
    request = http.Request("POST", "http://blackbox.invalid/")
    try:
        for body in (b'{"a":1}', b""):
            slow = http.Response(200, headers=[("x", "1")], content=body, request=request)
            fast = _read_answer(http, 200, [("x", "1")], body, request)
            mine, theirs = vars(fast), vars(slow)
            if set(theirs) - set(mine) - {"_decoder"} or set(mine) - set(theirs) or any(
                    mine[k] != theirs[k] for k in mine if k not in ("stream", "headers")) or \
                    fast.headers.raw != slow.headers.raw or list(fast.iter_bytes()) != list(slow.iter_bytes()):
                return False
    except Exception:
        return False
    return True


def _is_stream(response: Any, content_type: str, call: ModelCall) -> bool:
    """A 2xx event stream, teed as it passes instead of read whole: the request asked for one (the SDK then
    reads the body as events whatever its header says: none, or `application/json`), or the header says so."""
    return 200 <= response.status_code < 300 and (call.stream or SSE in content_type.lower())


class _Tee:
    """What the sync and async tee streams share: the stream they read, the sink they feed, and the word to
    the sink when the agent drops the stream unread (neither read to the end nor closed)."""

    def __init__(self, inner: Any, sink: StreamSink) -> None:
        self.inner = inner
        self.sink = sink

    def __del__(self) -> None:
        self.sink.fail("the agent abandoned the stream before its end")


@functools.cache
def stream_classes(http: ModuleType) -> tuple[type, type, type]:
    """The (sync tee, async tee, paced replay) byte streams for the `httpx` or `httpx2` module."""

    class TeeStream(_Tee, http.SyncByteStream):  # type: ignore[name-defined,misc]
        """Passes each chunk of a recorded stream on to the agent, through the sink's relay."""

        def __iter__(self) -> Iterator[bytes]:
            return self.sink.relay(self.inner)

        def close(self) -> None:
            self.sink.fail("the agent closed the stream before its end")
            self.inner.close()

    class AsyncTeeStream(_Tee, http.AsyncByteStream):  # type: ignore[name-defined,misc]
        """The async counterpart of `TeeStream`."""

        def __aiter__(self) -> AsyncIterator[bytes]:
            return self.sink.arelay(self.inner)

        async def aclose(self) -> None:
            self.sink.fail("the agent closed the stream before its end")
            await self.inner.aclose()

    class PacedStream(http.SyncByteStream, http.AsyncByteStream):  # type: ignore[name-defined,misc]
        """A replayed event stream sent one chunk every `pause` seconds (the recorded call's pace)."""

        def __init__(self, chunks: list[bytes], pause: float) -> None:
            self.chunks = chunks
            self.pause = pause

        def __iter__(self) -> Iterator[bytes]:
            for index, chunk in enumerate(self.chunks):
                if index:
                    time.sleep(self.pause)
                yield chunk

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for index, chunk in enumerate(self.chunks):
                if index:
                    await asyncio.sleep(self.pause)
                yield chunk

    return TeeStream, AsyncTeeStream, PacedStream


def _request(request: Any, body: bytes) -> Request:
    """The neutral request value, built once: the session and the provider read it, never the httpx object.
    What only a few readers need (the URL, the query decoded, the headers decoded) is left to `Request`."""
    url, headers = request.url, request.headers
    # httpx and httpx2 keep each header as (name, lower-case name, value) bytes: copied as they are
    listed = getattr(headers, "_list", None)
    raw = list(listed) if isinstance(listed, list) else [(k, k.lower(), v) for k, v in headers.raw]
    return Request.sent(request.method, lambda: f"{url.scheme}://{url.netloc.decode('ascii')}", url.host, url.path,
                        url.query, raw, body)


def _read(response: Any, started: float) -> bytes:
    """The whole body, decoded; the response keeps it, so the agent's client reads it from memory.

    Read here, the body's stream is closed before the client wraps it to time the call, so the response's
    `elapsed` is set here, as the client would have set it."""
    try:
        body: bytes = response.read()
        return body
    finally:
        _set_elapsed(response, started)


async def _aread(response: Any, started: float) -> bytes:
    try:
        body: bytes = await response.aread()
        return body
    finally:
        _set_elapsed(response, started)


def _set_elapsed(response: Any, started: float) -> None:
    if response.is_closed:
        response.elapsed = datetime.timedelta(seconds=time.perf_counter() - started)


def _replaced(http: ModuleType, request: Any, body: bytes | None) -> Any:
    """`request` with `body` in place of its own (headers, extensions and all else kept, the length set anew)."""
    if body is None:
        return request
    headers = [(k, v) for k, v in request.headers.raw if k.lower() not in (b"content-length", b"transfer-encoding")]
    return http.Request(request.method, request.url, headers=[*headers, (b"content-length", str(len(body)).encode())],
                        content=body, extensions=request.extensions)


def _recorded(http: ModuleType, handler: CallHandler, call: ModelCall, request: Any, response: Any,
              content_type: str, body: bytes) -> Any:
    """Hand the response to the session; the agent gets it as it came, unless the session answers instead."""
    instead = handler.close_call(call, response.status_code, content_type, body)
    return response if instead is None else _reply(http, request, instead)


@functools.cache
def transport_classes(http: ModuleType) -> tuple[type, type]:
    """The (sync, async) Blackbox transport classes for the `httpx` or `httpx2` module.

    Both ask `open_call` and answer through `_reply` / `_recorded`; only the network I/O differs."""

    class BlackboxTransport(http.BaseTransport):  # type: ignore[name-defined,misc]
        """Sync transport: asks the session, forwards through `inner`."""

        def __init__(self, handler: CallHandler, inner: Any) -> None:
            self.session = handler
            self.inner = inner

        def handle_request(self, request: Any) -> Any:
            decision = self.session.open_call(_request(request, request.read()))
            if isinstance(decision, Reply):
                return _reply(http, request, decision)
            return self._forward(request, decision)

        def _forward(self, request: Any, decision: Forward) -> Any:
            call = decision.call
            if call is None:
                return self.inner.handle_request(request)
            started = time.perf_counter()
            try:
                response = self.inner.handle_request(_replaced(http, request, decision.body))
                content_type = response.headers.get("content-type", "")
                if _is_stream(response, content_type, call):
                    sink = self.session.stream_call(call, response.headers.get("content-encoding"), content_type)
                    response.stream = stream_classes(http)[0](response.stream, sink)
                    return response
                body = _read(response, started)
            except BaseException:
                self.session.abort_call(call)
                raise
            return _recorded(http, self.session, call, request, response, content_type, body)

        def close(self) -> None:
            self.inner.close()

    class AsyncBlackboxTransport(http.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        """Async transport: the same decisions; overlapping calls are the session's to refuse."""

        def __init__(self, handler: CallHandler, inner: Any) -> None:
            self.session = handler
            self.inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            decision = self.session.open_call(_request(request, await request.aread()))
            if isinstance(decision, Reply):
                return _reply(http, request, decision)
            return await self._forward(request, decision)

        async def _forward(self, request: Any, decision: Forward) -> Any:
            call = decision.call
            if call is None:
                return await self.inner.handle_async_request(request)
            started = time.perf_counter()
            try:
                response = await self.inner.handle_async_request(_replaced(http, request, decision.body))
                content_type = response.headers.get("content-type", "")
                if _is_stream(response, content_type, call):
                    sink = self.session.stream_call(call, response.headers.get("content-encoding"), content_type)
                    response.stream = stream_classes(http)[1](response.stream, sink)
                    return response
                body = await _aread(response, started)
            except BaseException:
                self.session.abort_call(call)
                raise
            return _recorded(http, self.session, call, request, response, content_type, body)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return BlackboxTransport, AsyncBlackboxTransport


def _close_transports(transports: list[Any]) -> None:
    """Close a collected client's transports (closing twice is harmless: the pool is simply empty)."""
    for transport in transports:
        with contextlib.suppress(Exception):  # as the SDKs do: a half-built or closing transport is let be
            transport.close()


def _close_when_collected(client: Any) -> None:
    """Close the sync client's connections when it is collected unclosed: it replaces the SDK's default client,
    which does the same, so an agent that never closes its SDK client leaks no socket.  (An async client cannot
    close without its event loop, gone by then: the agent closes it, as the SDK's own.)

    A weakref callback, not `__del__`: the client usually dies in a reference cycle with the SDK's, and the
    collector runs the finalizers of a cycle's objects in no set order, so a `__del__` could come after the
    socket's own (its "unclosed socket" ResourceWarning).  The callback runs before any finalizer of the
    garbage, and holds the transports (never the client), so their sockets are not garbage at all.
    """
    transports = [client._transport, *(mounted for mounted in client._mounts.values() if mounted is not None)]
    weakref.finalize(client, _close_transports, transports).atexit = False


def make_client(handler: CallHandler, flavor: str | None, *, asynchronous: bool, **kwargs: Any) -> Any:
    """A client of the right HTTP module, built as the module builds it (environment proxies, certificates),
    then with every transport it would use (the default one, `mounts`, proxies) wrapped by the handler."""
    http = http_module(flavor)
    sync_cls, async_cls = transport_classes(http)
    wrap = async_cls if asynchronous else sync_cls
    kwargs.setdefault("follow_redirects", True)
    kwargs.setdefault("timeout", http.Timeout(600.0, connect=5.0))
    client = (http.AsyncClient if asynchronous else http.Client)(**kwargs)
    client._transport = wrap(handler, client._transport)
    client._mounts = {pattern: None if mounted is None else wrap(handler, mounted)
                      for pattern, mounted in client._mounts.items()}
    if not asynchronous:
        _close_when_collected(client)
    return client
