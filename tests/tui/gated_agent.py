"""A real agent (the Anthropic SDK against the tests' fake API) whose one tool runs until a gate file exists:
`tui --follow` can be watched while the tool is running, then while the run ends.

    GATE=<path> ANTHROPIC_BASE_URL=<fake API> blackbox record --out run.json -- python gated_agent.py
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anthropic

import blackbox

TOOLS = [{"name": "wait_for_gate", "description": "Wait until the operator opens the gate.",
          "input_schema": {"type": "object", "properties": {"gate": {"type": "string"}}}}]
PATIENCE = 600.0  # seconds before the tool gives up (only if the test that opens the gate died first)


def wait_for_gate(gate: str) -> dict[str, Any]:
    deadline = time.monotonic() + PATIENCE
    while not Path(os.environ["GATE"]).exists():
        if time.monotonic() > deadline:
            raise TimeoutError("the gate was never opened")
        time.sleep(0.05)
    return {"gate": gate, "open": True}


def main() -> None:
    bb = blackbox.session()
    client = anthropic.Anthropic(http_client=bb.http_client())
    tool = bb.tool("wait_for_gate", wait_for_gate)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Open the gate, then say done."}]
    for _ in range(4):
        response = client.messages.create(model="claude-sonnet-4-5", max_tokens=256, tools=TOOLS,
                                          messages=messages)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
        uses = [b for b in response.content if b.type == "tool_use"]
        if not uses:
            bb.finish(result="".join(b.text for b in response.content if b.type == "text"))
            return
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": str(tool(**u.input))} for u in uses]})
    bb.finish(error=RuntimeError("the agent did not finish in 4 turns"))


if __name__ == "__main__":
    main()
