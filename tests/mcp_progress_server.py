"""A real MCP server (the `mcp` package's MCPServer, formerly FastMCP) whose tool reports progress while other
calls of it are in flight, for the test that progress reaches only the call it belongs to.

    python tests/mcp_progress_server.py

`tally(label, steps)` reports `steps` progress notifications (`"<label> <i>"`), waiting after its first until
every call of the pair has started and before answering until every one has reported all of its progress, so
each notification is sent while the other call is still waiting for its answer.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("progress")
PAIR = 2
_started = 0
_finished = 0
_all_started = anyio.Event()
_all_finished = anyio.Event()
HANG_GUARD = 60  # seconds: only a bound against a hang if a test ever sends one call alone


@server.tool()
async def tally(label: str, steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting each step as progress."""
    global _started, _finished
    await ctx.report_progress(1, steps, f"{label} 1")
    _started += 1
    if _started == PAIR:
        _all_started.set()
    with anyio.move_on_after(HANG_GUARD):
        await _all_started.wait()
    for step in range(2, steps + 1):
        await ctx.report_progress(step, steps, f"{label} {step}")
        await anyio.sleep(0)  # let the other call report between two of ours
    _finished += 1
    if _finished == PAIR:
        _all_finished.set()
    with anyio.move_on_after(HANG_GUARD):
        await _all_finished.wait()
    return f"{label} counted to {steps}"


if __name__ == "__main__":
    server.run("stdio")
