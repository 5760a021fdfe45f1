"""The cassette a coding agent's session must become, built from docs/format.md's import rules ("Coding agents'
sessions") and a plain account of the session (`Story`): what the human said, what each model turn said and
called, what each call returned and when, where the history was compacted.

The fixture generator (scripts/agent_fixtures.py) tells the story as it writes each agent's records, and
writes `<fixture>.expected.json` from it with `expected_cassette`; the import tests compare each importer's
cassette with that.  Nothing here reads a transcript or uses the importers: an importer that misreads a record
shape, or builds steps against the rules, disagrees with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from blackbox.format.canonical import json_value
from blackbox.format.cassette import Cassette, StepChain

__all__ = ["Call", "Compacted", "Said", "Story", "Turn", "expected_cassette", "ms"]


def ms(iso: str) -> int:
    """Milliseconds since the epoch of the generator's `…Z` times."""
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


@dataclass
class Call:
    """A tool call and what came back: `result` (an `error` string when `error`), at `at` (ms)."""

    name: str
    input: Any
    result: Any
    at: int
    error: bool = False


@dataclass
class Turn:
    """One model turn, at the time of its first record: its texts (joined by the agent's joiner), its calls."""

    at: int
    texts: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    model: str | None = None


@dataclass
class Said:
    """A human turn."""

    text: str


@dataclass
class Compacted:
    """The agent replaced its history with these neutral messages (Codex's compaction)."""

    messages: list[dict[str, Any]]


@dataclass
class Story:
    """A session as the rules read it: every observed tool's `description` (the agent's exact words) and the
    joiner of a turn's texts."""

    description: str
    joiner: str
    items: list[Said | Turn | Compacted] = field(default_factory=list)


def expected_cassette(story: Story, trace_id: str, created_at: int) -> Cassette:
    """The steps the rules give (docs/format.md, "Coding agents' sessions"):

    - tools: the names called, in first-use order, each with the story's description, in every model_input;
    - a text-only turn: model_input, then a final_answer; a turn with calls: model_input, then tool_calls (with
      the turn's text), then per call a tool_call and its tool_result at the later of the result's time and
      the turn's; call ids `call-0`, `call-1`, … in the order of the calls;
    - the history: the human's texts, the assistant's text or its text and tool_use parts, the results as a
      user message of tool_result parts; a compaction replaces it;
    - a final text answer ends with run_completed (its text the result);
    - numbers are JSON's, written the way JavaScript writes them (`0.0` is `0`)."""
    names = list(dict.fromkeys(call.name for item in story.items if isinstance(item, Turn) for call in item.calls))
    tools = [{"name": name, "description": story.description} for name in names]
    chain = StepChain(trace_id)
    history: list[dict[str, Any]] = []
    numbered = 0
    last_answer: tuple[str, int] | None = None
    model: str | None = None
    for item in story.items:
        if isinstance(item, Said):
            history.append({"role": "user", "content": item.text})
            continue
        if isinstance(item, Compacted):
            history = list(item.messages)
            continue
        model = item.model or model
        request: dict[str, Any] = {"messages": list(history), "tools": tools}
        if model is not None:
            request["model"] = model
        chain.append("model_input", item.at, request)
        text = story.joiner.join(item.texts)
        if not item.calls:
            chain.append("model_output", item.at, {"type": "final_answer", "text": text})
            history.append({"role": "assistant", "content": text})
            last_answer = (text, item.at)
            continue
        last_answer = None
        ids = [f"call-{numbered + i}" for i in range(len(item.calls))]
        numbered += len(item.calls)
        asked = [{"toolCallId": i, "toolName": c.name, "toolInput": json_value(c.input)}
                 for i, c in zip(ids, item.calls, strict=True)]
        output: dict[str, Any] = {"type": "tool_calls", "calls": asked}
        if text:
            output["text"] = text
        chain.append("model_output", item.at, output)
        answers = []
        for ask, call in zip(asked, item.calls, strict=True):
            when = max(call.at, item.at)
            chain.append("tool_call", when, ask)
            answer = {"toolCallId": ask["toolCallId"], "toolName": call.name,
                      ("error" if call.error else "result"): json_value(call.result)}
            chain.append("tool_result", when, answer)
            answers.append({"type": "tool_result", **answer})
        said = [{"type": "text", "text": text}] if text else []
        history.append({"role": "assistant", "content": said + [{"type": "tool_use", **ask} for ask in asked]})
        history.append({"role": "user", "content": answers})
    if last_answer is not None:
        chain.append("metadata", last_answer[1], {"event": "run_completed", "status": "success",
                                                  "result": last_answer[0]})
    return chain.cassette(created_at)
