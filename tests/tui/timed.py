"""A recorded-looking run with token counts and real durations, for the timeline's tests and snapshots.

Written with fixed timestamps (so the screens are deterministic): a research agent of four model calls, five
tool calls (two of them in parallel), one slow tool, one slow model call and cache reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from blackbox.format.cassette import StepChain, save
from blackbox.format.tokens import Tokens

START = 1_790_000_000_000  # 2026-09-21 14:13:20 UTC
MODEL = "claude-sonnet-4-6"
TOOLS = [{"name": n, "description": d} for n, d in (("search", "Search the web"), ("fetch", "Fetch a page"),
                                                    ("summarize", "Summarize text"))]


def _ask(history: list[Any]) -> dict[str, Any]:
    return {"messages": list(history), "tools": TOOLS, "model": MODEL}


def write_timed(path: Path, trace_id: str = "timed-research") -> Path:
    """The cassette at `path`; its timeline: model 0-1.2 s, search ‖ fetch, model (slow, 6.5 s), summarize
    (slow, 4 s), model, a last model call with a final answer."""
    chain = StepChain(trace_id)
    history: list[Any] = [{"role": "user", "content": "What changed in the EU AI Act this year?"}]

    def model(at: int, took: int, output: dict[str, Any], tokens: Tokens) -> None:
        chain.append("model_input", START + at, _ask(history))
        chain.append("model_output", START + at + took, output, tokens)

    def tool(call: str, name: str, args: Any, start: int, end: int, result: Any) -> None:
        chain.append("tool_call", START + start, {"toolCallId": call, "toolName": name, "toolInput": args})
        chain.append("tool_result", START + end, {"toolCallId": call, "toolName": name, "result": result})

    calls = [{"toolCallId": "call-0", "toolName": "search", "toolInput": {"q": "EU AI Act 2026"}},
             {"toolCallId": "call-1", "toolName": "fetch", "toolInput": {"url": "https://eur-lex.europa.eu"}}]
    model(0, 1_200, {"type": "tool_calls", "calls": calls}, Tokens(1_850, 96, cacheRead=0, cacheWrite=1_600))
    tool("call-0", "search", calls[0]["toolInput"], 1_210, 2_900, ["result 1", "result 2"])
    tool("call-1", "fetch", calls[1]["toolInput"], 1_215, 2_400, "<html>…</html>")
    history += [{"role": "assistant", "content": "…"}, {"role": "user", "content": "…"}]
    summarize = {"toolCallId": "call-2", "toolName": "summarize", "toolInput": {"text": "…"}}
    model(2_950, 6_500, {"type": "tool_calls", "calls": [summarize]},
          Tokens(12_400, 310, cacheRead=1_600, reasoning=120))
    tool("call-2", "summarize", summarize["toolInput"], 9_460, 13_460, "The Act's obligations for …")
    history += [{"role": "assistant", "content": "…"}, {"role": "user", "content": "…"}]
    check = {"toolCallId": "call-3", "toolName": "search", "toolInput": {"q": "AI Act delegated acts"}}
    model(13_500, 2_100, {"type": "tool_calls", "calls": [check]}, Tokens(13_100, 64, cacheRead=12_300))
    tool("call-3", "search", check["toolInput"], 15_610, 16_300, ["result 3"])
    history += [{"role": "assistant", "content": "…"}, {"role": "user", "content": "…"}]
    model(16_350, 3_050, {"type": "final_answer", "text": "Three changes: …"},
          Tokens(13_600, 540, cacheRead=13_100, reasoning=200))
    chain.append("metadata", START + 19_410, {"event": "run_completed", "status": "success",
                                               "result": "Three changes: …"})
    save(chain.cassette(START), path)
    return path
