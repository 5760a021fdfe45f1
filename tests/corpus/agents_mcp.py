"""The OpenAI Agents SDK with an MCP server over stdio (its `tool_filter` keeping the tool the agent needs).

`bb.mcp(server)` puts the server under the session: every MCP request is recorded, replay never starts the
server, and a live fork starts it only once the fork point is reached.
"""

import asyncio
import os
import sys

from agents import Agent, Runner
from agents.mcp import MCPServerStdio, create_static_tool_filter

import blackbox
from tests.corpus._agents_sdk import on_blackbox

CORPUS = {"needs": ["agents", "mcp"], "fork_at": "get_weather"}
SERVER = os.path.join(os.path.dirname(__file__), "..", "mcp_weather_server.py")

bb = blackbox.session()
on_blackbox(bb)  # the SDK's default client on the session (tests/corpus/_agents_sdk.py)


async def main() -> None:
    async with bb.mcp(MCPServerStdio(
        name="weather",
        params={"command": sys.executable, "args": [SERVER, "stdio"]},
        tool_filter=create_static_tool_filter(allowed_tool_names=["get_weather"]),
    )) as server:
        agent = Agent(
            name="Assistant",
            instructions="Use the tools to answer the questions.",
            model="gpt-5.1",
            mcp_servers=[server],
        )
        result = await Runner.run(agent, "What's the weather in Paris?")
        print(result.final_output)
    bb.finish(result=result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
