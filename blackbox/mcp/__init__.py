"""MCP servers under a session: `bb.mcp(...)` brings one in, whatever the client.

    async with ClientSession(*await stack.enter_async_context(bb.mcp(stdio_client(params), name="weather"))) ...
    server = bb.mcp(MCPServerStdio(params={...}, name="weather"))      # the OpenAI Agents SDK
    toolset = bb.mcp(MCPToolset(StdioTransport(...), id="weather"))    # pydantic-ai

Each MCP request becomes a tool step (`link`, stored as `wire` says); replay answers from the cassette and never
starts the server.  Nothing here imports `mcp` or a framework until it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blackbox.errors import UsageError

if TYPE_CHECKING:
    from blackbox.live.session import Session

__all__ = ["attach"]


def attach(session: Session, server: Any, name: str | None = None) -> Any:
    """`server` under `session`: an Agents SDK MCP server or a pydantic-ai `MCPToolset` comes back patched (the
    same object); a transport (an async context manager yielding MCP streams) comes back as one."""
    module = type(server).__module__
    if module.startswith("agents.") and hasattr(server, "create_streams"):
        from blackbox.mcp.agents_sdk import attach_server

        return attach_server(session, server, name)
    if module.startswith("pydantic_ai.") and hasattr(server, "client"):
        from blackbox.mcp.pydantic_ai import attach_toolset

        return attach_toolset(session, server, name)
    if not (hasattr(server, "__aenter__") and hasattr(server, "__aexit__")):
        raise UsageError(f"bb.mcp() takes an MCP transport (stdio_client(...), streamable_http_client(...)), an "
                         f"Agents SDK MCP server or a pydantic-ai MCPToolset, not a {type(server).__name__}")
    if not name:
        raise UsageError("bb.mcp(transport) needs the server's name: bb.mcp(stdio_client(params), name=\"weather\")")
    if session.mode == "off":
        return server
    from blackbox.mcp.link import Link

    used = [False]

    def connect() -> Any:
        if used[0]:
            raise UsageError(f"the transport of MCP server {name!r} was already opened; call bb.mcp() again for "
                             "another connection")
        used[0] = True
        return server

    return Link(session, name, connect).streams()
