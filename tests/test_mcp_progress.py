"""MCP progress notifications reach only the call they belong to (issue 34), with a real MCP server
(`tests/mcp_progress_server.py`) whose tool reports progress while a second call of it is in flight: two
concurrent `tools/call`s, each with its own progress token and callback.  Recorded, each call's step keeps only
its own notifications; replayed (the server unrunnable), each callback is handed only its own, whichever order
the agent starts the calls in, under `--match strict` and `--match sequence` alike."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from tests.mcp_servers import NOWHERE

pytest.importorskip("mcp")

SERVER = str(Path(__file__).with_name("mcp_progress_server.py"))
EXPECTED = {label: (f"{label} counted to 3", [f"{label} 1", f"{label} 2", f"{label} 3"]) for label in ("a", "b")}


def params(command: str = sys.executable) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=command, args=[SERVER])


async def two_tallies(transport: Any, order: tuple[str, str] = ("a", "b")) -> dict[str, Any]:
    """Two calls of `tally` at once, each with its own progress callback: what each caller saw."""
    import anyio
    from mcp import ClientSession

    seen: dict[str, list[str | None]] = {label: [] for label in order}
    results: dict[str, str] = {}
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def one(label: str) -> None:
            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                seen[label].append(message)

            result = await session.call_tool("tally", {"label": label, "steps": 3}, progress_callback=on_progress)
            results[label] = result.content[0].text

        async with anyio.create_task_group() as group:
            for label in order:
                group.start_soon(one, label)
    return {label: (results[label], seen[label]) for label in sorted(order)}


def record(out: Path) -> None:
    from mcp import stdio_client

    bb = blackbox.session("record", out=out)
    assert asyncio.run(two_tallies(bb.mcp(stdio_client(params()), name="progress"))) == EXPECTED
    bb.finish("done")


def test_each_call_records_only_its_own_progress(tmp_path: Path) -> None:
    from mcp import stdio_client

    assert asyncio.run(two_tallies(stdio_client(params()))) == EXPECTED  # the server, without Blackbox
    out = tmp_path / "run.json"
    record(out)
    cassette = load(out)
    assert verify(cassette).ok
    calls = {s.payload["toolCallId"]: s.payload["toolInput"]["label"] for s in cassette.steps if s.type == "tool_call"
             and s.payload["toolName"] == "tally"}
    kept = {calls[s.payload["toolCallId"]]: [p["message"] for p in s.payload["mcp"]["progress"]]
            for s in cassette.steps if s.type == "tool_result" and s.payload["toolName"] == "tally"}
    assert kept == {label: seen for label, (_, seen) in EXPECTED.items()}


@pytest.mark.parametrize("match", ["strict", "sequence"])
@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")], ids=["recorded-order", "other-order"])
def test_each_replayed_call_is_handed_only_its_own_progress(tmp_path: Path, match: str,
                                                            order: tuple[str, str]) -> None:
    from mcp import stdio_client

    out = tmp_path / "run.json"
    record(out)
    bb = blackbox.session("replay", cassette=out, match=match)  # the server cannot even start
    assert asyncio.run(two_tallies(bb.mcp(stdio_client(params(NOWHERE)), name="progress"), order)) == EXPECTED
    assert bb.finish("done").status == "success"
