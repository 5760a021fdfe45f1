"""The OpenAI Agents SDK's MCP servers (`MCPServerStdio`, `MCPServerStreamableHttp`, `MCPServerSse`) under a
session.

The SDK opens a server by entering `server.create_streams()` and building its MCP client on the streams; the
server object is patched so that call gets the proxy's streams (`link`) instead, and the real `create_streams`
runs only when a real call needs the server (record, or a fork after its fork point).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blackbox.mcp.link import Link

if TYPE_CHECKING:
    from blackbox.live.session import Session

__all__ = ["attach_server"]


def attach_server(session: Session, server: Any, name: str | None = None) -> Any:
    """The same server, its connections going through the session (unchanged with the session off)."""
    if session.mode == "off":
        return server
    link = Link(session, name or str(server.name), server.create_streams)
    server.create_streams = link.streams  # the instance attribute shadows the class's method
    return server
