"""MCP servers of the frameworks, under a session with one line: the OpenAI Agents SDK's `MCPServerStdio` /
`MCPServerStreamableHttp` (Responses API on the fake API) and pydantic-ai's `MCPToolset` (Anthropic model on the
fake API), against the real MCP server over stdio and streamable HTTP on 127.0.0.1.  Record → verify → replay
with the server unrunnable (its port closed) and no model request → fork at the MCP result, scripted (the server
never started) and live (started only for the call after the fork point)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blackbox
from blackbox.format.cassette import Cassette, load
from blackbox.format.secrets import PLACEHOLDER_KEYS
from blackbox.format.verify import verify
from tests.fakeapi import (
    FakeAPI,
    anthropic_message,
    last_tool_results,
    response_object,
    turn_brain,
    weather_brain,
)
from tests.mcp_servers import SERVER, Served, served
from tests.test_frameworks import agents_sdk

pytest_plugins = ["tests.conftest_fakeapi"]
__all__ = ["agents_sdk", "served"]  # fixtures shared with tests/test_frameworks.py and tests/mcp_servers.py

NO_KEY = next(iter(PLACEHOLDER_KEYS.values()))
SNOWY = {"city": "Paris", "forecast": "snowy"}
CITIES = ("Paris", "Rome")
READ_TIMEOUT = 120  # the clients' read timeout: a bound against a hang, far above a server's start-up here


def agents_server(kind: str, where: str) -> Any:
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    if kind == "stdio":
        return MCPServerStdio(params={"command": where, "args": [SERVER, "stdio"]}, name="weather",
                              client_session_timeout_seconds=READ_TIMEOUT)
    return MCPServerStreamableHttp(params={"url": where}, name="weather", client_session_timeout_seconds=READ_TIMEOUT)


async def run_agents_sdk(agents: Any, bb: blackbox.Session, fake: FakeAPI, key: str, server: Any) -> str:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=fake.openai_url, api_key=key, http_client=bb.async_http_client(), max_retries=0)
    agents.set_default_openai_client(client)
    agents.set_default_openai_api("responses")
    async with client, bb.mcp(server) as weather:  # the Blackbox line for the MCP server
        agent = agents.Agent(name="weather", instructions="Be brief.", model="gpt-5.1", mcp_servers=[weather])
        return str((await agents.Runner.run(agent, "Weather in Paris and Rome?")).final_output)


def pydantic_toolset(kind: str, where: str) -> Any:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    if kind == "stdio":
        return MCPToolset(StdioTransport(command=where, args=[SERVER, "stdio"]), id="weather",
                          init_timeout=READ_TIMEOUT, read_timeout=READ_TIMEOUT)
    return MCPToolset(where, id="weather", init_timeout=READ_TIMEOUT, read_timeout=READ_TIMEOUT)


async def run_pydantic_ai(bb: blackbox.Session, fake: FakeAPI, key: str, toolset: Any) -> str:
    from anthropic import AsyncAnthropic
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = AsyncAnthropic(base_url=fake.url, api_key=key, http_client=bb.async_http_client(), max_retries=0)
    model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model, instructions="Be brief.", toolsets=[bb.mcp(toolset)])  # the Blackbox line
    async with client, agent:
        return str((await agent.run("Weather in Paris and Rome?")).output)


def mcp_call_steps(cassette: Cassette) -> list[Any]:
    return [s for s in cassette.steps if s.type == "tool_call" and s.payload.get("toolName") == "get_weather"]


def check_lifecycle(tmp_path: Path, fake: FakeAPI, served: Served, provider: str,
                    run: Callable[[blackbox.Session, str, str], str], live_brain: Any) -> None:
    """Record, verify, replay offline, fork scripted and live: the same for every framework."""
    out = tmp_path / "run.json"
    fake.brain = weather_brain(provider, cities=CITIES, text=None)
    bb = blackbox.session("record", out=out)
    answer = run(bb, "test-key", served.live())
    bb.finish(answer)
    assert "sunny, 21" in answer and "Rome" in answer
    cassette = load(out)
    assert verify(cassette).ok
    calls = mcp_call_steps(cassette)
    assert [c.payload["toolInput"] for c in calls] == [{"city": "Paris"}, {"city": "Rome"}]  # the model's order
    assert all(c.payload["mcp"] == {"server": "weather", "method": "tools/call"} for c in calls)
    model_ids = [c["toolCallId"] for s in cassette.steps if s.type == "model_output"
                 for c in s.payload.get("calls", [])]
    assert [c.payload["toolCallId"] for c in calls] == model_ids

    served.stop()  # replay: no server to run or reach, and no model request
    fake.reset()
    bb = blackbox.session("replay", cassette=out)
    assert run(bb, NO_KEY, served.dead) == answer
    assert bb.finish(answer).status == "success" and fake.requests == []

    at = calls[-1].index + 1  # the turn's last MCP result: nothing after it in the turn needs the server
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))
    bb = blackbox.session("fork", cassette=out, out=tmp_path / "fork.json", fork_at=at, fork_set=SNOWY,
                          continue_with="script", script=script)
    assert run(bb, NO_KEY, served.dead) == "Snow in Paris."
    bb.finish("Snow in Paris.")
    fork = load(tmp_path / "fork.json")
    assert verify(fork).ok and fork.steps[at].payload["result"] == SNOWY and fake.requests == []
    assert not any("error" in s.payload for s in fork.steps if s.type == "tool_result")

    fake.brain = live_brain
    bb = blackbox.session("fork", cassette=out, out=tmp_path / "live.json", fork_at=at, fork_set=SNOWY,
                          continue_with="live")
    final = run(bb, "test-key", served.live())
    bb.finish(final)
    assert "snow, -3" in final and "snowy" in json.dumps(fake.requests[0].body)  # the model saw the new value
    live = load(tmp_path / "live.json")
    assert verify(live).ok and live.steps[at].payload["result"] == SNOWY and len(fake.requests) == 2
    assert mcp_call_steps(live)[-1].payload["toolInput"] == {"city": "Oslo"}  # run by the server started after N


def test_agents_sdk_mcp_server(agents_sdk: Any, fake_api: FakeAPI, tmp_path: Path, served: Served) -> None:
    def run(bb: blackbox.Session, key: str, where: str) -> str:
        return asyncio.run(run_agents_sdk(agents_sdk, bb, fake_api, key, agents_server(served.kind, where)))

    live = turn_brain([lambda b: response_object(tool_calls=[("get_weather", {"city": c}) for c in CITIES]),
                       lambda b: response_object(tool_calls=[("get_weather", {"city": "Oslo"})]),
                       lambda b: response_object(text="Weather: " + "; ".join(last_tool_results(b)))])
    check_lifecycle(tmp_path, fake_api, served, "responses", run, live)


def test_pydantic_ai_mcp_toolset(fake_api: FakeAPI, tmp_path: Path, served: Served) -> None:
    def run(bb: blackbox.Session, key: str, where: str) -> str:
        return asyncio.run(run_pydantic_ai(bb, fake_api, key, pydantic_toolset(served.kind, where)))

    live = turn_brain([lambda b: anthropic_message(tool_uses=[("get_weather", {"city": c}) for c in CITIES]),
                       lambda b: anthropic_message(tool_uses=[("get_weather", {"city": "Oslo"})]),
                       lambda b: anthropic_message(text="Weather: " + "; ".join(last_tool_results(b)))])
    check_lifecycle(tmp_path, fake_api, served, "anthropic", run, live)
