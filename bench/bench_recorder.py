"""Cost of recording: the journal's fsync per step, and a recorded model call against an unrecorded one.

    python bench/bench_recorder.py [--turns 200] [--calls 200]

1. Recorder: `--turns` model turns (a growing history, two parallel tool calls each) appended with the journal
   (one written line per step) and without it; baseline = `StepChain.append` of the same payloads.  Then
   `write()` of the journaled run: the key check (a key of the environment and its 20-character pieces,
   across gaps and escapes), verify and the atomic write; baseline = `dumps` of the same cassette.  Set an
   API key variable to measure the key searches (without one there is nothing to search for).
2. Session: `--calls` sequential `messages.create` calls of the real anthropic SDK against the fake API, through
   `bb.http_client()` in record mode; baseline = the same SDK calls through a plain `httpx2.Client`.
Figures are ratios against the baseline measured in the same run (absolute times vary by machine).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from blackbox.format.canonical import json_value
from blackbox.format.cassette import StepChain
from blackbox.format.writing import dumps
from blackbox.live.recorder import Recorder
from blackbox.providers.neutral import CallIds


def turns(n: int) -> list[tuple[Any, Any, list[tuple[Any, Any]]]]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "Plan a trip. " * 20}]
    out = []
    for t in range(n):
        calls = [{"toolCallId": f"call-{2 * t + i}", "toolName": "get_weather", "toolInput": {"city": f"C{t}{i}"}}
                 for i in range(2)]
        model_input = json_value({"messages": list(history[-20:]), "tools": [{"name": "get_weather",
                                                                               "description": "w"}]})
        output = {"type": "tool_calls", "calls": calls}
        results = [(c["toolInput"], {"result": {"temp": 12.5 + i, "sky": "clear ☀"}}) for i, c in enumerate(calls)]
        history.append({"role": "assistant", "content": [{"type": "tool_use", **c} for c in calls]})
        history.append({"role": "user", "content": [{"type": "tool_result", "toolCallId": c["toolCallId"],
                                                     "toolName": "get_weather", "result": "12.5"} for c in calls]})
        out.append((model_input, output, results))
    return out


def run_recorder(data: list[Any], journal: bool, finish: list[tuple[float, float]] | None = None) -> float:
    """Seconds to record `data`; with `finish`, then `write()` is timed too and appended with its floor (the
    cassette's `dumps`)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        rec = Recorder(Path(tmp) / "run.json", "run", 0, CallIds(), journal=journal)
        for model_input, output, results in data:
            rec.model_step(model_input, 1, output, 2)
            for tool_input, outcome in results:
                rec.tool_finished(rec.tool_started("get_weather", tool_input, 3), outcome, 4)
        elapsed = time.perf_counter() - start
        if finish is None:
            rec.discard_journal()
            return elapsed
        floor = time.perf_counter()
        dumps(rec.cassette())
        floor = time.perf_counter() - floor
        written = time.perf_counter()
        rec.write()
        finish.append((time.perf_counter() - written, floor))
        return elapsed


def run_chain(data: list[Any]) -> float:
    start = time.perf_counter()
    chain = StepChain("run")
    for model_input, output, results in data:
        chain.append("model_input", 1, model_input)
        chain.append("model_output", 2, output)
        for call, (tool_input, outcome) in zip(output["calls"], results, strict=True):
            chain.append("tool_call", 3, {"toolCallId": call["toolCallId"], "toolName": "get_weather",
                                          "toolInput": tool_input})
            chain.append("tool_result", 4, {"toolCallId": call["toolCallId"], "toolName": "get_weather", **outcome})
    return time.perf_counter() - start


def run_calls(n: int, record: bool) -> float:
    import anthropic
    import httpx2

    import blackbox
    from tests.fakeapi import FakeAPI, anthropic_message

    with FakeAPI() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.brain = lambda body: anthropic_message(text="ok")
        bb = blackbox.session("record", out=Path(tmp) / "calls.json") if record else None
        http = bb.http_client() if bb is not None else httpx2.Client()
        client = anthropic.Anthropic(http_client=http, base_url=fake.url, api_key="k" * 12, max_retries=0)
        messages = [{"role": "user", "content": "hi"}]
        client.messages.create(model="m", max_tokens=8, messages=messages)  # warm the connection
        start = time.perf_counter()
        for _ in range(n):
            client.messages.create(model="m", max_tokens=8, messages=messages)
        elapsed = time.perf_counter() - start
        if bb is not None:
            bb.finish()
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    data = turns(args.turns)
    steps = args.turns * 6
    base = min(run_chain(data) for _ in range(args.repeat))
    plain = min(run_recorder(data, journal=False) for _ in range(args.repeat))
    finish: list[tuple[float, float]] = []
    journaled = min(run_recorder(data, journal=True, finish=finish) for _ in range(args.repeat))
    written, floor = min(finish)
    print(f"recorder, {steps} steps: baseline StepChain {base * 1e3:.1f} ms ({base / steps * 1e6:.0f} µs/step)")
    print(f"  without journal: {plain / base:.2f}×   with journal: {journaled / base:.2f}× "
          f"({(journaled - plain) / steps * 1e6:.0f} µs per step for the journal)")
    print(f"  write(): {written * 1e3:.1f} ms, {written / floor:.2f}× dumps of the cassette ({floor * 1e3:.1f} ms)")

    unrecorded = min(run_calls(args.calls, record=False) for _ in range(args.repeat))
    recorded = min(run_calls(args.calls, record=True) for _ in range(args.repeat))
    print(f"SDK calls, {args.calls}: plain client {unrecorded / args.calls * 1e3:.2f} ms/call; recorded "
          f"{recorded / unrecorded:.2f}× ({(recorded - unrecorded) / args.calls * 1e3:.2f} ms extra per call)")


if __name__ == "__main__":
    main()
