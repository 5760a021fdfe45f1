"""One MCP server under a session: the client talks to a proxy over in-memory streams, and each request it sends
becomes a tool run of the session, recorded, replayed and forked like a wrapped tool.

The client (a raw `ClientSession`, `mcp.Client`, the Agents SDK's servers, FastMCP's client under pydantic-ai)
is untouched: it gets a `(read, write)` stream pair as from any MCP transport.  The proxy hands each JSON-RPC
request but `ping` to `Session.begin_tool` (the tool sources' door, `live/tool_runs`), named and stored by `wire`:

- a real run (record; a fork after its fork point) is sent to the server, which is connected only when the
  first one needs it (record: at once, where the transport would start without Blackbox), and the answer the
  client gets, a read timeout it gives up on, or the connection closing under it ends the run;
- a recorded run (replay; a fork before its fork point) is answered from the cassette: the server is never
  started or connected.

A fork that goes live makes the client's start-up (`server/discover`, `initialize`, `initialized`) again with the
server it starts, which `--live` starts as soon as the fork point is reached (a slow server then warms up while
the model is asked).  Requests from
the server for the model or the user (sampling, elicitation) are refused with advice: they cannot be replayed.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from blackbox.errors import BlackboxError
from blackbox.format.canonical import canonical_text
from blackbox.live.recorder import ToolSlot
from blackbox.live.replayer import ToolClaim
from blackbox.mcp import wire

if TYPE_CHECKING:
    from blackbox.live.session import Session

__all__ = ["Connect", "Link"]

Connect = Callable[[], AbstractAsyncContextManager[Any]]  # the real transport: yields (read, write, ...)

_REFUSED = {"sampling/createMessage": "sampling (the server asking the client's model)",
            "elicitation/create": "elicitation (the server asking the user)"}
_HANDSHAKE = "blackbox-handshake-"
_START_UP = ("initialize", "server/discover", "notifications/initialized")


class _Pending:
    """A request sent to the live server, waiting for its answer."""

    def __init__(self, slot: ToolSlot, method: str, token: Any) -> None:
        self.slot, self.method, self.token = slot, method, token
        self.progress: list[dict[str, Any]] = []


class Link:
    """A server's name and how to reach it; `streams()` opens one connection of the client through the proxy."""

    def __init__(self, session: Session, name: str, connect: Connect) -> None:
        self.session = session
        self.name = name
        self.connect = connect
        self._parent: dict[tuple[str, str], dict[str, Any]] | None = None
        self._steps: list[Any] | None = None

    def streams(self) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """The `(read, write)` pair a `ClientSession` is built on."""
        return _Proxy(self).open()

    def _parent_steps(self) -> list[Any]:
        from blackbox.format.cassette import load

        if self._steps is None:
            self._steps = load(self.session.settings.cassette or "").steps
        return self._steps

    def parent_result(self, index: int | None) -> Any:
        """The result a fork's parent recorded at step `index` (what a value set there replaces), or None."""
        steps = self._parent_steps()
        payload = steps[index].payload if index is not None and index < len(steps) else None
        if not isinstance(payload, dict):
            return None
        extra = payload.get("mcp")
        return payload["result"] if "result" in payload else extra.get("result") if isinstance(extra, dict) else None

    def parent_answer(self, name: str, tool_input: Any) -> dict[str, Any] | None:
        """A fork's parent's last answer to the same protocol request (not a tool call), or None."""
        if self._parent is None:
            self._parent = {}
            names = {}
            for step in self._parent_steps():
                payload = step.payload if isinstance(step.payload, dict) else {}
                if step.type == "tool_call" and isinstance(payload.get("mcp"), dict):
                    names[payload.get("toolCallId")] = (str(payload.get("toolName")),
                                                        canonical_text(payload.get("toolInput")))
                elif step.type == "tool_result" and payload.get("toolCallId") in names:
                    self._parent[names[payload.get("toolCallId")]] = payload
        return self._parent.get((name, canonical_text(tool_input)))


class _Proxy:
    """One connection: the client's streams on one side, the server (maybe never started) on the other."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.session = link.session
        self.pending: dict[Any, _Pending] = {}
        self.to_server: Any = None  # the live server's write stream
        self.to_client: Any = None
        self.handshake: list[Any] = []  # the client's start-up messages, made again with a server started late
        self._tg: Any = None
        self._answers: dict[str, Any] = {}  # handshake id → the event its answer sets
        self._live: Any = None  # set once a late server is connected (or failed to)
        self._live_error: BaseException | None = None
        self.closed = False

    @asynccontextmanager
    async def open(self) -> AsyncIterator[tuple[Any, Any]]:
        import anyio

        client_send, server_side_recv = anyio.create_memory_object_stream[Any](math.inf)
        to_client, client_recv = anyio.create_memory_object_stream[Any](math.inf)
        self.to_client = to_client
        async with AsyncExitStack() as stack:
            for stream in (client_send, server_side_recv, to_client, client_recv):  # closed last, as a transport's
                stack.callback(stream.close)
            live = self.session.mode == "record"  # (a fork's late server is `_serve_live`'s)
            if live:  # where the transport would start without Blackbox, and failing the same way
                pair = await stack.enter_async_context(self.link.connect())
            async with anyio.create_task_group() as tg:
                self._tg = tg
                if live:
                    self.to_server = pair[1]
                    tg.start_soon(self._from_server, pair[0])
                tg.start_soon(self._from_client, server_side_recv)
                try:
                    yield client_recv, client_send
                finally:
                    tg.cancel_scope.cancel()

    # -- the client's messages ----------------------------------------------------------------------

    async def _from_client(self, stream: Any) -> None:
        from mcp_types import JSONRPCNotification, JSONRPCRequest

        async with stream:
            async for item in stream:
                message = item.message
                if isinstance(message, JSONRPCRequest | JSONRPCNotification) and message.method in _START_UP:
                    self.handshake.append(item)
                if isinstance(message, JSONRPCRequest):
                    await self._request(item, message)
                    continue
                if isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
                    self._cancelled(message.params or {})
                if self.to_server is not None:  # notifications and answers to the server's requests
                    await self.to_server.send(item)

    async def _request(self, item: Any, message: Any) -> None:
        method, params = message.method, message.params or {}
        if self.closed:  # the connection ended: the client's own dispatcher answers from now on
            return
        if method == "ping":
            if self.to_server is None:
                await self._reply(message.id, "result", {})
            else:
                await self.to_server.send(item)
            return
        name, tool_input = wire.step_name(self.link.name, method, params), wire.step_input(method, params)
        try:
            ticket = self.session.begin_tool(name, tool_input)
        except BlackboxError as exc:  # a divergence, a finished session: the client's request fails with it
            await self._reply(message.id, "error", {"code": wire.INTERNAL_ERROR, "message": str(exc)})
            return
        if isinstance(ticket, ToolClaim):
            settings, template = self.session.settings, None
            if settings.mode == "fork" and ticket.result_index == settings.fork_at:  # the new value
                template = self.link.parent_result(ticket.result_index)
                if settings.continue_with == "live":
                    self._start_live()
            await self._claimed(message, ticket.outcome, template)
            return
        ticket.call_extra = {"mcp": {"server": self.link.name, "method": method}}
        if method != "tools/call" and self.session.mode == "fork":
            recorded = self.link.parent_answer(name, tool_input)
            if recorded is not None:  # a fork answers start-up requests as its parent did, server or not
                extra = recorded.get("mcp")
                self._finish(ticket, {k: recorded[k] for k in ("result", "error") if k in recorded},
                             extra if isinstance(extra, dict) else {})
                await self._claimed(message, recorded)
                return
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        self.pending[message.id] = _Pending(ticket, method, token)
        try:
            await self._go_live()
        except Exception as exc:  # the server cannot be started: the call fails as the connection would
            self.pending.pop(message.id, None)
            error = {**wire.closed_error(), "message": f"[blackbox] the MCP server {self.link.name!r} could not "
                     f"be started for the fork: {type(exc).__name__}: {exc}"}
            self._finish(ticket, *wire.error_outcome(error))
            await self._reply(message.id, "error", error)
            return
        await self.to_server.send(item)

    async def _claimed(self, message: Any, outcome: dict[str, Any] | None, template: Any = None) -> None:
        """Answer from the cassette: the recorded progress, then the recorded answer (a closed connection closes)."""
        from mcp.shared.message import SessionMessage
        from mcp_types import JSONRPCNotification

        meta = (message.params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        for progress in wire.progress_of(outcome) if token is not None else []:
            await self.to_client.send(SessionMessage(JSONRPCNotification(
                jsonrpc="2.0", method="notifications/progress", params={**progress, "progressToken": token})))
        kind, value = wire.answer_of(message.method, outcome, template)
        if kind == "error" and value == wire.closed_error() and self.to_server is None:
            self.closed = True  # the recorded server died here: the client sees its end, as it did
            await self.to_client.aclose()
            return
        await self._reply(message.id, kind, value)

    async def _reply(self, request_id: Any, kind: str, value: dict[str, Any]) -> None:
        from mcp.shared.message import SessionMessage
        from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse

        message = (JSONRPCResponse(jsonrpc="2.0", id=request_id, result=value) if kind == "result"
                   else JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData.model_validate(value)))
        await self.to_client.send(SessionMessage(message))

    def _cancelled(self, params: dict[str, Any]) -> None:
        """The client gave up on a request (its read timeout, or its caller cancelled): that is the outcome."""
        pending = self.pending.pop(params.get("requestId"), None)
        if pending is None:
            return
        reason = str(params.get("reason") or "")
        error = (wire.timeout_error(pending.method) if reason.startswith("timed out")
                 else {"code": wire.INTERNAL_ERROR, "message": f"the client cancelled the request ({reason})"})
        self._finish(pending.slot, *wire.error_outcome(error), pending.progress)

    # -- the live server ----------------------------------------------------------------------------

    def _start_live(self) -> None:
        """Start connecting the server in a task of its own, which owns the connection until the proxy closes."""
        import anyio

        if self._live is None and self.to_server is None:
            self._live = anyio.Event()
            self._tg.start_soon(self._serve_live)

    async def _go_live(self) -> None:
        """The server, connected the first time a real run needs it (a fork after its fork point)."""
        if self._live is None and self.to_server is not None:
            return  # record: connected from the start
        self._start_live()
        await self._live.wait()  # connected and its start-up made again
        if self._live_error is not None:
            raise self._live_error

    async def _serve_live(self) -> None:
        import anyio
        from mcp.shared.message import SessionMessage
        from mcp_types import JSONRPCRequest

        try:
            async with self.link.connect() as pair, anyio.create_task_group() as tg:
                self.to_server = pair[1]
                tg.start_soon(self._from_server, pair[0])
                for n, item in enumerate(self.handshake):  # the client's start-up, made again
                    if isinstance(item.message, JSONRPCRequest):
                        answered = self._answers[f"{_HANDSHAKE}{n}"] = anyio.Event()
                        await self.to_server.send(SessionMessage(JSONRPCRequest(
                            jsonrpc="2.0", id=f"{_HANDSHAKE}{n}", method=item.message.method,
                            params=item.message.params)))
                        await answered.wait()
                    else:
                        await self.to_server.send(item)
                self._live.set()
                await anyio.sleep_forever()
        except Exception as exc:  # the server cannot be started: the calls waiting for it fail
            self._live_error = exc
            self.to_server = None
            self._live.set()

    async def _from_server(self, stream: Any) -> None:
        import anyio

        try:
            async with stream:
                async for item in stream:
                    await self._from_server_item(item)
        except anyio.ClosedResourceError:  # closed under us (the connection's owner is closing it): an end too
            pass
        for pending in list(self.pending.values()):  # the server closed under these: as the client sees it
            self._finish(pending.slot, *wire.error_outcome(wire.closed_error()), pending.progress)
        self.pending.clear()
        self.closed = True
        await self.to_client.aclose()

    async def _from_server_item(self, item: Any) -> None:
        from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

        message = item if isinstance(item, Exception) else item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            if isinstance(message.id, str) and message.id in self._answers:
                self._answers.pop(message.id).set()
                return
            self._answered(message)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/progress":
            self._progress(message.params or {})
        elif isinstance(message, JSONRPCRequest) and message.method in _REFUSED:
            await self._refuse(message)
            return
        await self.to_client.send(item)

    def _answered(self, message: Any) -> None:
        from mcp_types import JSONRPCResponse

        pending = self.pending.pop(message.id, None)
        if pending is None:
            return
        if isinstance(message, JSONRPCResponse):
            outcome = wire.result_outcome(pending.method, message.result)
        else:
            outcome = wire.error_outcome(message.error.model_dump(mode="json", exclude_none=True))
        self._finish(pending.slot, *outcome, pending.progress)

    def _progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        for pending in self.pending.values():
            if token is not None and pending.token == token:
                pending.progress.append({k: v for k, v in params.items() if k != "progressToken"})

    async def _refuse(self, message: Any) -> None:
        from mcp.shared.message import SessionMessage
        from mcp_types import ErrorData, JSONRPCError

        what = _REFUSED[message.method]
        text = (f"[blackbox] the MCP server {self.link.name!r} asked for {what}, which Blackbox cannot replay; "
                "record this server without sampling or elicitation, or wrap the tools that need them instead")
        await self.to_server.send(SessionMessage(JSONRPCError(
            jsonrpc="2.0", id=message.id, error=ErrorData(code=wire.INTERNAL_ERROR, message=text))))

    def _finish(self, slot: ToolSlot, outcome: dict[str, Any], extra: dict[str, Any],
                progress: list[dict[str, Any]] | None = None) -> None:
        """End a real run with what the client received (`wire`'s step layout)."""
        extra = {**extra, **({"progress": progress} if progress else {})}
        slot.result_extra = {"mcp": extra} if extra else None
        if "error" in outcome:
            self.session.end_tool(slot, error=str(outcome["error"]))
        else:
            self.session.end_tool(slot, outcome.get("result"))
