"""MCP calls that go wrong, through a raw `ClientSession` and a real server over stdio: a tool that returns
`isError`, a 5 MB result, progress notifications, a resource and a prompt, a server that never answers (the
client's read timeout) and one that crashes in the middle of a call.  The agent sees the same with Blackbox
recording as without it, and the same again in replay with the server unrunnable; the cassette says what
happened."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from blackbox.mcp.wire import CONNECTION_CLOSED, REQUEST_TIMEOUT
from tests.mcp_servers import NOWHERE, stdio_params


def seen(result: Any) -> Any:
    """What the agent gets from a call, as plain data."""
    return result.model_dump(mode="json", exclude_none=True)


async def faulty_agent(transport: Any) -> list[Any]:
    from mcp import ClientSession, MCPError

    got: list[Any] = []
    progress: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        got.append(seen(await session.call_tool("fail", {"reason": "no umbrella"})))
        big = await session.call_tool("big", {"megabytes": 5})
        got.append((len(big.content[0].text), big.is_error))
        got.append(seen(await session.call_tool("count", {"n": 3}, progress_callback=on_progress)))
        got.append(list(progress))
        got.append(seen(await session.read_resource("notes://today")))
        got.append(seen(await session.get_prompt("forecast_prompt", {"city": "Paris"})))
        for name, timeout in (("hang", 1.0), ("crash", None), ("get_weather", None)):
            try:
                await session.call_tool(name, {"city": "Paris"} if name == "get_weather" else {},
                                        read_timeout_seconds=timeout)
            except MCPError as exc:
                got.append((name, exc.code, exc.message))
    return got


def test_faults_are_seen_the_same_recorded_and_replayed(tmp_path: Path) -> None:
    from mcp import stdio_client

    plain = asyncio.run(faulty_agent(stdio_client(stdio_params())))
    assert plain[0]["is_error"] is True
    assert plain[0]["content"][0]["text"] == "Error executing tool fail: cannot comply: no umbrella"
    assert plain[1] == (5 * 1024 * 1024, False) and plain[3] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert plain[-3:] == [("hang", REQUEST_TIMEOUT, "Request 'tools/call' timed out"),
                          ("crash", CONNECTION_CLOSED, "Connection closed"),
                          ("get_weather", CONNECTION_CLOSED, "Connection closed")]

    out = tmp_path / "faults.json"
    bb = blackbox.session("record", out=out)
    assert asyncio.run(faulty_agent(bb.mcp(stdio_client(stdio_params()), name="weather"))) == plain
    bb.finish("done")
    cassette = load(out)
    assert verify(cassette).ok
    results = {s.payload["toolName"]: s.payload for s in cassette.steps if s.type == "tool_result"}
    assert results["fail"]["error"] == "Error executing tool fail: cannot comply: no umbrella"
    assert results["fail"]["mcp"]["result"]["isError"] is True
    assert len(results["big"]["result"]["content"][0]["text"]) == 5 * 1024 * 1024
    assert [p["progress"] for p in results["count"]["mcp"]["progress"]] == [1, 2, 3]
    assert results["hang"]["error"] == "Request 'tools/call' timed out"
    assert results["hang"]["mcp"]["error"]["code"] == REQUEST_TIMEOUT
    assert results["crash"]["mcp"]["error"] == {"code": CONNECTION_CLOSED, "message": "Connection closed"}
    assert "get_weather" not in results  # the client refused it itself: the connection was closed
    assert results["mcp:weather:resources/read"]["result"]["contents"][0]["text"] == "Bring an umbrella."

    bb = blackbox.session("replay", cassette=out)
    assert asyncio.run(faulty_agent(bb.mcp(stdio_client(stdio_params(NOWHERE)), name="weather"))) == plain
    assert bb.finish("done").status == "success"


async def asks_the_user(transport: Any) -> Any:
    """An agent whose client answers elicitation (it would ask its user): the server's question reaches Blackbox."""
    from mcp import ClientSession

    asked: list[str] = []

    async def on_elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        from mcp_types import ElicitResult

        return ElicitResult(action="accept", content={"ok": True})

    async with transport as (read, write), ClientSession(read, write, elicitation_callback=on_elicit) as session:
        await session.initialize()
        result = await session.call_tool("confirm", {"question": "Book it?"})
    return asked, seen(result)


def test_elicitation_is_refused_with_advice(tmp_path: Path) -> None:
    from mcp import stdio_client

    asked, plain = asyncio.run(asks_the_user(stdio_client(stdio_params())))
    assert asked == ["Book it?"] and plain["content"][0]["text"] == "answered accept"  # without Blackbox

    out = tmp_path / "asked.json"
    bb = blackbox.session("record", out=out)
    asked, got = asyncio.run(asks_the_user(bb.mcp(stdio_client(stdio_params()), name="weather")))
    bb.finish("done")
    assert asked == []  # the question never reached the client: its answer could not be replayed
    assert got["is_error"] is True and "Blackbox cannot replay" in got["content"][0]["text"]
    result = next(s.payload for s in load(out).steps if s.type == "tool_result" and s.payload["toolName"] == "confirm")
    assert "elicitation (the server asking the user)" in result["error"]
