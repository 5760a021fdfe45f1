"""Deterministic synthetic cassettes of any length, for the UI's large-file tests and its benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from blackbox.format.cassette import Cassette, StepChain, save

BASE_TIME = 1_700_000_000_000
TOOLS = ("search", "lookup", "fetch_page")


def _round_messages(history: list[Any], calls: list[dict[str, Any]], results: list[Any]) -> None:
    history.append({"role": "assistant", "content": [
        {"type": "tool_use", "toolCallId": c["toolCallId"], "toolName": c["toolName"], "toolInput": c["toolInput"]}
        for c in calls
    ]})
    history.append({"role": "user", "content": results})
    del history[1:-8]  # keep the prompt and the last four rounds: requests stay a few KB


def synthetic_cassette(steps: int, *, trace_id: str = "synthetic", change_at: int | None = None,
                       result_text: int = 0) -> Cassette:
    """About `steps` steps of two-call tool rounds; every seventh result is an error.

    `change_at` alters the tool result at that index (if it is one), as a fork would; `result_text` adds that
    many characters of text to each successful result (a larger file of the same steps).
    """
    chain = StepChain(trace_id)
    changed = False
    history: list[Any] = [{"role": "user", "content": "Summarise the incidents of the fleet, one by one."}]
    tools = [{"name": name, "description": f"The {name} tool."} for name in TOOLS]
    call = 0
    round_no = 0
    while len(chain.steps) + 8 < steps:
        t = BASE_TIME + len(chain.steps) * 100
        chain.append("model_input", t, {"messages": list(history), "tools": tools, "model": "fake-model"})
        calls = []
        for k in range(2):
            name = TOOLS[(round_no + k) % len(TOOLS)]
            calls.append({"toolCallId": f"call-{call}", "toolName": name,
                          "toolInput": {"query": f"incident {round_no}-{k}", "limit": 5}})
            call += 1
        chain.append("model_output", t + 10, {"type": "tool_calls", "calls": calls})
        parts = []
        for c in calls:
            chain.append("tool_call", t + 20, dict(c))
            index = len(chain.steps)
            if index % 7 == 0:
                body: dict[str, Any] = {"toolCallId": c["toolCallId"], "toolName": c["toolName"],
                                        "error": f"timeout after 30 s ({round_no})"}
            else:
                value = 35 if index == change_at else 22
                changed = changed or index == change_at
                body = {"toolCallId": c["toolCallId"], "toolName": c["toolName"],
                        "result": {"items": [f"result {round_no}.{n} for {c['toolName']}" for n in range(3)],
                                   "temp": value}}
                if result_text:
                    body["result"]["text"] = (f"page {round_no} of the fleet log. " * result_text)[:result_text]
            chain.append("tool_result", t + 30, body)
            parts.append({"type": "tool_result", **body})
        _round_messages(history, calls, parts)
        round_no += 1
    t = BASE_TIME + len(chain.steps) * 100
    chain.append("model_input", t, {"messages": list(history), "tools": tools, "model": "fake-model"})
    chain.append("model_output", t + 10, {"type": "final_answer", "text": f"Summarised {round_no} incidents."})
    chain.append("metadata", t + 20, {"event": "run_completed", "status": "success",
                                      "result": f"Summarised {round_no} incidents."})
    if change_at is not None and not changed:
        raise ValueError(f"change_at={change_at} is not a successful tool result of this run")
    return chain.cassette(BASE_TIME)


def result_near(index: int) -> int:
    """The first successful tool result at or after `index` (a `change_at` that changes something): each
    round is six steps, its results at 3 and 5, and every seventh step's result is an error."""
    while index % 6 not in (3, 5) or index % 7 == 0:
        index += 1
    return index


def write_synthetic(path: Path, steps: int, **options: Any) -> Path:
    save(synthetic_cassette(steps, **options), path)
    return path


ESC_TEXT = "\x1b[31mRED\x1b[0m \x1b]0;pwned title\x07 \u202eevil\u202c \x9b2J end\rback"


def escape_cassette() -> Cassette:
    """A run whose every string a terminal might obey holds escape sequences: colours, an OSC title, a bidi
    override, a C1 CSI and a carriage return, in the id, tool names, inputs, results and answers."""
    chain = StepChain("esc\x1b]0;id-title\x07")
    tool = "grep\x1b[2J"
    chain.append("model_input", BASE_TIME, {"model": "claude-\x1b[5mx", "systemPrompt": ESC_TEXT,
                                            "messages": [{"role": "user", "content": ESC_TEXT}],
                                            "tools": [{"name": tool, "description": ESC_TEXT}]})
    call = {"toolCallId": "call-0", "toolName": tool, "toolInput": {"pattern": ESC_TEXT}}
    chain.append("model_output", BASE_TIME + 1, {"type": "tool_calls", "calls": [call], "text": ESC_TEXT})
    chain.append("tool_call", BASE_TIME + 2, dict(call))
    chain.append("tool_result", BASE_TIME + 3, {"toolCallId": "call-0", "toolName": tool, "result": ESC_TEXT})
    history = [{"role": "user", "content": ESC_TEXT},
               {"role": "assistant", "content": [{"type": "tool_use", **call}]},
               {"role": "user", "content": [{"type": "tool_result", "toolCallId": "call-0", "toolName": tool,
                                             "result": ESC_TEXT}]}]
    chain.append("model_input", BASE_TIME + 4, {"model": "claude-x", "messages": history, "tools": []})
    chain.append("model_output", BASE_TIME + 5, {"type": "final_answer", "text": ESC_TEXT})
    chain.append("metadata", BASE_TIME + 6, {"event": "run_completed", "status": "success", "result": ESC_TEXT})
    return chain.cassette(BASE_TIME)
