"""pydantic-ai's MCP toolsets (`MCPToolset`, built on FastMCP's `Client`) under a session.

FastMCP connects through its client's transport (`connect_session` yields a `ClientSession` it built on the
transport's streams).  The toolset's client gets a transport of Blackbox's: its sessions are built on the
proxy's streams (`link`), and the real transport is opened only when a real call needs the server, with a
stand-in session class that hands over its streams and runs nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

from blackbox.mcp.link import Link

if TYPE_CHECKING:
    from blackbox.live.session import Session

__all__ = ["attach_toolset"]


class _Streams:
    """Stands in for FastMCP's session class: keeps the transport's streams and starts nothing."""

    def __init__(self, read: Any, write: Any, **_: Any) -> None:
        self.streams = (read, write)

    async def __aenter__(self) -> _Streams:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


@cache
def _transport_class() -> type:
    from fastmcp.client.transports import ClientTransport
    from fastmcp.client.transports.base import TransportOptions

    class BlackboxTransport(ClientTransport):
        """A FastMCP transport whose sessions talk to the proxy; `real` is opened only when needed."""

        def __init__(self, session: Session, name: str, real: Any) -> None:
            self.session, self.name, self.real = session, name, real
            self.legacy_only = getattr(real, "legacy_only", False)

        @asynccontextmanager
        async def connect_session(self, *, transport_options: Any = None, **session_kwargs: Any
                                  ) -> AsyncIterator[Any]:
            options = transport_options or TransportOptions()

            @asynccontextmanager
            async def real_streams() -> AsyncIterator[tuple[Any, Any]]:
                grab = dataclasses.replace(options, session_class=_Streams)
                async with self.real.connect_session(transport_options=grab, **session_kwargs) as streams:
                    yield streams.streams

            async with Link(self.session, self.name, real_streams).streams() as (read, write), \
                    options.session_class(read, write, **session_kwargs) as client_session:
                yield client_session

        async def close(self) -> None:
            await self.real.close()

    return BlackboxTransport


def attach_toolset(session: Session, toolset: Any, name: str | None = None) -> Any:
    """The same toolset, its client's connections going through the session (unchanged with the session off)."""
    if session.mode == "off":
        return toolset
    server = name or toolset.id or getattr(toolset.client, "name", None) or "mcp"
    toolset.client.transport = _transport_class()(session, str(server), toolset.client.transport)
    return toolset
