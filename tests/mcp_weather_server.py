"""A real MCP server for the MCP tests (the `mcp` package's MCPServer, formerly FastMCP).

    python tests/mcp_weather_server.py stdio
    python tests/mcp_weather_server.py http PORT      # streamable HTTP on 127.0.0.1:PORT/mcp
    python tests/mcp_weather_server.py sse PORT       # the older HTTP+SSE transport on 127.0.0.1:PORT/sse

Its tools cover what the tests need: a plain text + structured result, an `isError` result, a 5 MB
result, a crash in the middle of a call (the process exits), a call that never answers, progress
notifications, a question to the user (elicitation), and a resource and a prompt.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("weather", instructions="Ask me about the weather.")
FORECASTS = {"Paris": "sunny, 21°C", "Oslo": "snow, -3°C", "Lima": "cloudy, 18°C"}


@server.tool()
def get_weather(city: str) -> dict[str, str]:
    """The forecast for one city."""
    return {"city": city, "forecast": FORECASTS.get(city, "unknown")}


@server.tool()
def fail(reason: str) -> str:
    """Always fails: the client gets an `isError` result."""
    raise ToolError(f"cannot comply: {reason}")


@server.tool()
def big(megabytes: int) -> str:
    """A large text result."""
    return "x" * (megabytes * 1024 * 1024)


@server.tool()
def crash() -> str:
    """The server process dies in the middle of the call."""
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answers."""
    await anyio.sleep_forever()
    return "never"


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Reports progress n times, then answers."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return f"counted to {n}"


class Confirm(BaseModel):
    ok: bool


@server.tool()
async def confirm(question: str, ctx: Context) -> str:
    """Asks the user (elicitation), which Blackbox refuses: it could not be replayed."""
    try:
        answer = await ctx.elicit(question, Confirm)
    except Exception as exc:
        raise ToolError(f"the client did not answer: {exc}") from None
    return f"answered {answer.action}"


@server.resource("notes://today")
def today() -> str:
    """A resource the agent reads."""
    return "Bring an umbrella."


@server.prompt()
def forecast_prompt(city: str) -> str:
    """A prompt template."""
    return f"What is the weather in {city}?"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    elif sys.argv[1] == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
