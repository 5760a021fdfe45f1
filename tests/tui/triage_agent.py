"""The fleet-triage agent of the fixtures, rebuilt: a real Anthropic SDK loop whose tools answer from the
recorded incident (so `blackbox replay|fork … -- python triage_agent.py` runs offline).

A tool asked something the recording never saw (after a fork) answers deterministically too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic

import blackbox

CASSETTE = Path(__file__).resolve().parents[1] / "fixtures" / "fleet-triage" / "cassettes" / "triage-incident.json"
RECORDED = json.loads(CASSETTE.read_text(encoding="utf-8"))
REQUEST = RECORDED["steps"][0]["payload"]
TOOLS = [{"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
         for t in REQUEST["tools"]]


def _key(name: str, arguments: dict[str, Any]) -> str:
    return name + json.dumps(arguments, sort_keys=True)


def _recorded_results() -> dict[str, Any]:
    calls = {s["payload"]["toolCallId"]: s["payload"] for s in RECORDED["steps"] if s["type"] == "tool_call"}
    return {_key(calls[s["payload"]["toolCallId"]]["toolName"], calls[s["payload"]["toolCallId"]]["toolInput"]):
            s["payload"]["result"] for s in RECORDED["steps"] if s["type"] == "tool_result"}


RESULTS = _recorded_results()


def fixture_tool(name: str) -> Callable[..., Any]:
    def tool(**arguments: Any) -> Any:
        found = RESULTS.get(_key(name, arguments))
        if found is not None:
            return found
        return {"work_order_id": "WO-FORKED", **arguments, "status": "open"}

    return tool


def main() -> None:
    bb = blackbox.session()
    client = anthropic.Anthropic(http_client=bb.http_client())
    tools = bb.tools({t["name"]: fixture_tool(t["name"]) for t in TOOLS})
    messages: list[dict[str, Any]] = [{"role": "user", "content": REQUEST["messages"][0]["content"]}]
    for _ in range(8):
        response = client.messages.create(model=REQUEST["model"], max_tokens=REQUEST["params"]["maxTokens"],
                                          system=REQUEST["systemPrompt"], tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
        uses = [b for b in response.content if b.type == "tool_use"]
        if not uses:
            answer = "".join(b.text for b in response.content if b.type == "text")
            print(answer)
            bb.finish(result=answer)
            return
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id,
             "content": json.dumps(tools[u.name](**u.input), separators=(",", ":"), ensure_ascii=False)}
            for u in uses
        ]})
    bb.finish(error=RuntimeError("the agent did not finish in 8 turns"))


if __name__ == "__main__":
    main()
