"""MCP tools through a raw `mcp.ClientSession`, a real MCP server (stdio, streamable HTTP and HTTP+SSE on
127.0.0.1) and a model on the fake API: record → verify → replay with the server unrunnable (and its port closed)
and no model request → a changed argument diverges → fork at the MCP result, scripted and live, and the model-only
what-if."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.errors import ReplayDivergenceError
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, anthropic_message, last_tool_results, turn_brain, weather_brain
from tests.mcp_servers import Served, served, served_any, stdio_params

pytest_plugins = ["tests.conftest_fakeapi"]
__all__ = ["served", "served_any"]  # the fixtures of tests/mcp_servers.py
OPENED: list[bool] = []  # per transport a live fork opened: whether its fork point had been reached

SNOWY = {"city": "Paris", "forecast": "snowy"}
PARIS = '{\n  "city": "Paris",\n  "forecast": "sunny, 21°C"\n}'


async def raw_agent(bb: blackbox.Session, fake: FakeAPI, transport: Any, override: dict[str, Any] | None = None,
                    ) -> str:
    """A small agent loop: Anthropic's SDK on Blackbox's client, the tools of an MCP server via ClientSession.
    `override` replaces the model's arguments (a changed argument, for the divergence)."""
    from anthropic import AsyncAnthropic
    from mcp import ClientSession

    client = AsyncAnthropic(base_url=fake.url, api_key="test-key", http_client=bb.async_http_client(), max_retries=0)
    async with client, bb.mcp(transport, name="weather") as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = (await session.list_tools()).tools
        tools = [{"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
                 for t in listed if t.name == "get_weather"]
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        while True:
            reply = await client.messages.create(model="claude-sonnet-4-6", max_tokens=256, tools=tools,
                                                 messages=messages)
            uses = [block for block in reply.content if block.type == "tool_use"]
            if not uses:
                return "".join(block.text for block in reply.content if block.type == "text")
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
            results = []
            for use in uses:
                result = await session.call_tool(use.name, override or dict(use.input))
                text = "".join(getattr(block, "text", "") for block in result.content)
                results.append({"type": "tool_result", "tool_use_id": use.id, "content": text,
                                "is_error": result.is_error})
            messages.append({"role": "user", "content": results})


def transport_of(served: Served, where: str, bb: blackbox.Session | None = None) -> Any:
    """A fresh transport (not yet opened); with `bb` (a fork), notes in `opened` whether its fork point was
    reached when the transport was opened."""
    if served.kind == "stdio":
        from mcp import stdio_client

        inner = stdio_client(stdio_params(where))
    elif served.kind == "sse":
        from mcp.client.sse import sse_client

        inner = sse_client(where)
    else:
        from mcp.client.streamable_http import streamable_http_client

        inner = streamable_http_client(where)
    if bb is None:
        return inner

    @asynccontextmanager
    async def noted() -> AsyncIterator[Any]:
        OPENED.append(bb._engine.reached)  # type: ignore[attr-defined]  # the fork engine's state
        async with inner as streams:
            yield streams

    return noted()


def test_raw_session_record_verify_replay_diverge_fork(fake_api: FakeAPI, tmp_path: Path, served_any: Served) -> None:
    served = served_any
    out = tmp_path / "run.json"
    OPENED.clear()
    fake_api.brain = weather_brain("anthropic", text=None)
    bb = blackbox.session("record", out=out)
    answer = asyncio.run(raw_agent(bb, fake_api, transport_of(served, served.live())))
    assert answer == f"Weather: {PARIS}"
    bb.finish(answer)

    cassette = load(out)
    assert verify(cassette).ok
    steps = [(s.type, s.payload) for s in cassette.steps]
    names = [p["toolName"] for t, p in steps if t == "tool_call"]
    assert names == ["mcp:weather:initialize", "mcp:weather:tools/list", "get_weather"]
    index = next(s.index for s in cassette.steps if s.type == "tool_call" and s.payload["toolName"] == "get_weather")
    call, result = cassette.steps[index].payload, cassette.steps[index + 1].payload
    assert call["toolInput"] == {"city": "Paris"} and call["mcp"] == {"server": "weather", "method": "tools/call"}
    assert cassette.steps[index - 1].payload["calls"][0]["toolCallId"] == call["toolCallId"]  # the model's id
    assert result["result"]["structuredContent"] == {"city": "Paris", "forecast": "sunny, 21°C"}
    assert result["result"]["content"] == [{"type": "text", "text": PARIS}]

    # replay: the server's command cannot run (HTTP: its port is closed), the model is never asked
    served.stop()
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert asyncio.run(raw_agent(bb, fake_api, transport_of(served, served.dead))) == answer
    assert bb.finish(answer).status == "success" and fake_api.requests == []

    # a changed argument diverges at the MCP call's step, with the same report as any tool
    bb = blackbox.session("replay", cassette=out)
    from mcp import MCPError

    with pytest.raises(BaseExceptionGroup) as failed:  # the agent's MCP call fails with the divergence
        asyncio.run(raw_agent(bb, fake_api, transport_of(served, served.dead), override={"city": "Oslo"}))
    assert failed.group_contains(MCPError, match="replay diverged", depth=None)
    with pytest.raises(ReplayDivergenceError) as diverged:
        bb.finish(answer)
    report = str(diverged.value)
    assert f"replay diverged at step {index}, tool get_weather input" in report
    assert '"Paris"' in report and '"Oslo"' in report and fake_api.requests == []

    # --match sequence: the call is matched by name, as any tool, and gets the recorded answer
    bb = blackbox.session("replay", cassette=out, match="sequence")
    assert asyncio.run(raw_agent(bb, fake_api, transport_of(served, served.dead), override={"city": "Oslo"})) == answer
    assert bb.finish(answer).status == "success" and fake_api.requests == []

    # fork at the MCP result, scripted: the server is never started
    at = index + 1
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))
    bb = blackbox.session("fork", cassette=out, out=tmp_path / "fork.json", fork_at=at, fork_set=SNOWY,
                          continue_with="script", script=script)
    assert asyncio.run(raw_agent(bb, fake_api, transport_of(served, served.dead))) == "Snow in Paris."
    bb.finish("Snow in Paris.")
    fork = load(tmp_path / "fork.json")
    assert verify(fork).ok and fork.steps[at].payload["result"] == SNOWY and fake_api.requests == []

    # fork live: the model sees the new value and calls the tool again; the server starts at the fork point
    fake_api.brain = turn_brain([lambda body: anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})]),
                                 lambda body: anthropic_message(tool_uses=[("get_weather", {"city": "Oslo"})]),
                                 lambda body: anthropic_message(text="Weather: " + "; ".join(last_tool_results(body)))])
    bb = blackbox.session("fork", cassette=out, out=tmp_path / "live.json", fork_at=at, fork_set=SNOWY,
                          continue_with="live")
    assert asyncio.run(raw_agent(bb, fake_api, transport_of(served, served.live(), bb))) == \
        'Weather: {\n  "city": "Oslo",\n  "forecast": "snow, -3°C"\n}'
    bb.finish("done")
    assert OPENED == [True]  # once, and only when the fork point had been reached
    live = load(tmp_path / "live.json")
    assert verify(live).ok and len(fake_api.requests) == 2
    assert live.steps[at].payload["result"] == SNOWY
    assert "snowy" in json.dumps(live.steps[at + 1].payload)  # the model was sent the new value
    oslo = [s for s in live.steps if s.type == "tool_result" and s.index > at + 2]
    assert oslo[-1].payload["result"]["structuredContent"]["city"] == "Oslo"


def test_model_only_what_if_serves_recorded_mcp_results(fake_api: FakeAPI, tmp_path: Path) -> None:
    """What-if at an MCP tool result with no agent and no server: a repeated MCP call is answered from the
    recording (and still says which server it came from); a new one stops and asks for its result."""
    from blackbox.fork.whatif import NO_RESULT, ScriptedModel, what_if

    out = tmp_path / "run.json"
    fake_api.brain = weather_brain("anthropic", text=None)
    bb = blackbox.session("record", out=out)
    answer = asyncio.run(raw_agent(bb, fake_api, transport_of(Served("stdio"), sys.executable)))
    bb.finish(answer)
    parent = load(out)
    at = next(s.index for s in parent.steps if s.type == "tool_result" and s.payload["toolName"] == "get_weather")
    recorded = parent.steps[at].payload["result"]

    again = [{"type": "tool_calls", "calls": [{"toolName": "get_weather", "toolInput": {"city": "Paris"}}]},
             {"type": "final_answer", "text": "Snow, then sun."}]
    fork, reason = what_if(parent, at, SNOWY, ScriptedModel(again), trace_id="wi")
    assert reason == "final answer" and verify(fork).ok
    assert fork.steps[at].payload["result"] == SNOWY
    call = next(s for s in fork.steps[at + 1:] if s.type == "tool_call")
    assert call.payload["mcp"] == {"server": "weather", "method": "tools/call"}
    assert fork.steps[call.index + 1].payload["result"] == recorded  # the server's recorded answer, not a new call
    assert "snowy" in json.dumps(fork.steps[at + 1].payload)  # the model was given the new value

    new = [{"type": "tool_calls", "calls": [{"toolName": "get_weather", "toolInput": {"city": "Lima"}}]}]
    fork, reason = what_if(parent, at, SNOWY, ScriptedModel(new), trace_id="wi", tool_results=lambda c: NO_RESULT)
    assert "never made: get_weather" in reason and verify(fork).ok
    assert "mcp" not in fork.steps[-1].payload  # an unmade call claims no server
