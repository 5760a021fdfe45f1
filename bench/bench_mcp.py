"""Benchmark of MCP calls under Blackbox: a recorded call against the same call without Blackbox, and a replayed
call, in one run.

Run: `python bench/bench_mcp.py [--calls 200] [--rounds 7]`.

One process, one event loop, the real MCP server of the tests (tests/mcp_weather_server.py) over stdio.  Three
connections are open at once: plain (`stdio_client` → `ClientSession`, no Blackbox), recorded (the same under
`bb.mcp(...)` of a recording session) and replayed (a replay session over a cassette of the same calls, recorded
first; no server).  Each round times `--calls` `tools/call get_weather` on each connection in turn, so a burst of
load from other jobs on the shared machine hits all three alike; the figures are medians over the rounds, per
call.  The floor is the plain call: the overhead of recording is recorded - plain, and the ratio recorded / plain.
All the calls of a run are one turn (no model call between them), and matching a call within its turn scans the
turn, so keep `--calls` x `--rounds` near what one turn of an agent holds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import blackbox  # noqa: E402
from tests.mcp_servers import NOWHERE, stdio_params  # noqa: E402


async def calls(session: Any, n: int) -> float:
    """Seconds per call of `n` calls on one connection."""
    start = time.perf_counter()
    for _ in range(n):
        await session.call_tool("get_weather", {"city": "Paris"})
    return (time.perf_counter() - start) / n


async def connect(stack: Any, transport: Any) -> Any:
    from mcp import ClientSession

    read, write = await stack.enter_async_context(transport)
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def main(n: int, rounds: int) -> None:
    from contextlib import AsyncExitStack

    from mcp import stdio_client

    with tempfile.TemporaryDirectory() as tmp:
        first = Path(tmp) / "first.json"
        recorded = blackbox.session("record", out=first)  # the cassette the replay answers from
        async with AsyncExitStack() as stack:
            session = await connect(stack, recorded.mcp(stdio_client(stdio_params()), name="weather"))
            for _ in range(rounds):
                await calls(session, n)
        recorded.finish("done")

        recording = blackbox.session("record", out=Path(tmp) / "timed.json")
        replaying = blackbox.session("replay", cassette=first)
        times: dict[str, list[float]] = {"plain": [], "recorded": [], "replayed": []}
        async with AsyncExitStack() as stack:
            connections = {
                "plain": await connect(stack, stdio_client(stdio_params())),
                "recorded": await connect(stack, recording.mcp(stdio_client(stdio_params()), name="weather")),
                "replayed": await connect(stack, replaying.mcp(stdio_client(stdio_params(NOWHERE)), name="weather")),
            }
            for _ in range(rounds):
                for name, session in connections.items():
                    times[name].append(await calls(session, n))
        recording.finish("done")
        replaying.finish("done")

    median = {name: statistics.median(values) for name, values in times.items()}
    plain = median["plain"]
    print(f"MCP tools/call over stdio, {n} calls x {rounds} rounds, median per call")
    print(f"  plain (no Blackbox):   {plain * 1e6:9.1f} us")
    print(f"  recorded (bb.mcp):     {median['recorded'] * 1e6:9.1f} us   overhead "
          f"{(median['recorded'] - plain) * 1e6:+.1f} us, ratio {median['recorded'] / plain:.2f}x plain")
    replayed = median["replayed"]
    print(f"  replayed (no server):  {replayed * 1e6:9.1f} us   ratio {replayed / plain:.2f}x plain")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
