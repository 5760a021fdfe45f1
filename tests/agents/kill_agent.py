"""A recording agent run as a subprocess by tests/test_process_exit.py, which stops it at a chosen point.

    python -m tests.agents.kill_agent <point>     (BLACKBOX_MODE/OUT set by the test, FAKE_URL = the fake API;
                                                   AGENT_SIGNALS=default: SIGINT/TERM/HUP reset first)

Points: `tool` (inside a wrapped tool), `between` (after a tool turn, before the next model call), `model`
(waiting for a slow model reply), `exit0` / `exit3` / `exit_false` / `raise` (end without finish(): normally,
sys.exit(3), sys.exit(False), an uncaught exception), and the other ways out: `raise_exit4`, `builtin_exit5`,
`builtin_quit6`, `exit_message`, `caught_exit`, `main_returns8`. It prints a marker line when it reaches the point, then
waits to be killed.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import anthropic

import blackbox
from tests.agents import default_signals
from tests.agents.loops import anthropic_tools, get_weather, result_text


def mark(text: str) -> None:
    print(text, flush=True)


def main(point: str) -> None:
    bb = blackbox.session()
    client = anthropic.Anthropic(http_client=bb.http_client(), base_url=os.environ["FAKE_URL"],
                                 api_key="sk-ant-subprocess-key-0000", max_retries=0)

    def weather(city: str) -> dict[str, Any]:
        if point == "tool":
            mark("IN_TOOL")
            time.sleep(600)  # until the test kills it
        if point == "between_float":  # a whole float: its place is kept (origin.floats) in the journal too
            return {**get_weather(city), "temp_f": 64.0}
        return get_weather(city)

    tools = bb.tools({"get_weather": weather})
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
    for turn in range(4):
        if point == "model" and turn == 1:
            mark("CALLING")
        reply = client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=messages,
                                       tools=anthropic_tools(["get_weather"]))
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            break
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": result_text(tools[u.name](**u.input))}
            for u in uses]})
        if point in ("between", "between_float"):
            mark("BETWEEN")
            time.sleep(600)  # until the test kills it
    mark("DONE")
    if point == "exit3":
        sys.exit(3)
    if point == "exit_false":
        sys.exit(False)  # exits 0, like sys.exit(0)
    if point == "raise":
        raise RuntimeError("the agent crashed")
    if point == "raise_exit4":
        raise SystemExit(4)
    if point == "builtin_exit5":
        exit(5)  # the site builtin, not sys.exit
    if point == "builtin_quit6":
        quit(6)
    if point == "exit_message":
        raise SystemExit("the agent gave up")
    if point == "caught_exit":
        try:
            sys.exit(7)
        except SystemExit as caught:
            assert caught.code == 7  # the program reads the code itself: not the process's exit


def exit_code() -> int:
    """`raise SystemExit(main())`: what main() returns is the exit code."""
    return 8 if sys.argv[1] == "main_returns8" else 0


if __name__ == "__main__":
    if os.environ.get("AGENT_SIGNALS") == "default":
        default_signals()
    main(sys.argv[1])
    if sys.argv[1] == "main_returns8":
        raise SystemExit(exit_code())
