"""Agents run as subprocesses by tests/test_live_faults.py, which kill them or grep what they leave.

    python -m tests.agents.hostile_agent <point>     (BLACKBOX_* set by the test or the launcher, FAKE_URL)

Points: `parallel` (one turn of four parallel tools that finish in reverse order; prints `GOT <city>` once the
agent holds each result, then waits to be killed), `early_key` / `early_piece` (a tool run before the first
model request returns the client's key, or 95% of it; prints `TOOL_DONE`, waits for a line on stdin, then
runs a short conversation and finishes), `early_wrapped` (the same with the whole key wrapped every 16
characters, so no 20 characters of it stand together), `full_disk` (every journal write fails with ENOSPC; a short
conversation, then finish()).
"""

from __future__ import annotations

import concurrent.futures
import errno
import os
import sys
import time
from typing import Any

import anthropic

import blackbox
from tests.agents.loops import anthropic_tools, get_weather, result_text

KEY = "sk-ant-api03-" + "hostileClientOnlyKey0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-" * 1
CITIES = ["Paris", "Oslo", "Lisbon", "Rome"]


def mark(text: str) -> None:
    print(text, flush=True)


def _full_disk(fd: int, data: Any) -> int:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def main(point: str) -> None:
    if point == "full_disk":
        from blackbox.live.journal import Journal

        Journal._os_write = staticmethod(_full_disk)  # type: ignore[method-assign]  # only the journal's writes
    bb = blackbox.session()
    client = anthropic.Anthropic(http_client=bb.http_client(), base_url=os.environ["FAKE_URL"], api_key=KEY,
                                 max_retries=0)
    if point in ("early_key", "early_piece", "early_wrapped"):
        secret = {"early_key": KEY, "early_piece": KEY[: len(KEY) * 95 // 100],
                  "early_wrapped": "\n".join(KEY[i:i + 16] for i in range(0, len(KEY), 16))}[point]
        lookup = bb.tool("lookup", lambda name: {"name": name, "value": secret})
        lookup("config")
        mark("TOOL_DONE")
        sys.stdin.readline()

    def weather(city: str) -> dict[str, Any]:
        if point == "parallel":
            time.sleep(0.4 * (len(CITIES) - CITIES.index(city)))  # the last asked finishes first
        return get_weather(city)

    tools = bb.tools({"get_weather": weather})
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
    for _ in range(3):
        reply = client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=messages,
                                       tools=anthropic_tools(["get_weather"]))
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            break
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        results: dict[str, Any] = {}
        with concurrent.futures.ThreadPoolExecutor(len(uses)) as pool:
            futures = {pool.submit(tools[u.name], **u.input): u for u in uses}
            for future in concurrent.futures.as_completed(futures):
                use = futures[future]
                results[use.id] = future.result()
                if point == "parallel":
                    mark(f"GOT {use.input['city']}")
        if point == "parallel":
            mark("ALL")
            time.sleep(600)  # until the test kills it
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": result_text(results[u.id])} for u in uses]})
    bb.finish()
    mark("DONE")


if __name__ == "__main__":
    main(sys.argv[1])
