"""Benchmark of the cassette core: verify, diff and load of large cassettes against a floor.

Run: `python bench/bench_core.py [--steps 1000 10000] [--repeat 3] [--before DIR]`.

It writes realistic cassettes (a growing, capped message history; tool inputs and results of a few KB; floats;
non-ASCII text) to a temporary folder, then measures each operation in a fresh subprocess: wall time and the
child's peak RSS (`resource.getrusage(RUSAGE_CHILDREN)`).  The floor, measured in the same run, is a process
that msgspec-decodes the file and SHA-256s `msgspec.json.encode(step, order="sorted")` of each step: the least
work any verifier must do.  The figures that matter are the ratios to that floor.  `--before DIR` (a checkout
of an earlier commit) runs DIR's verify, load and diff too, interleaved with these, labelled "before".
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from blackbox.format.canonical import JSFloat
from blackbox.format.cassette import Cassette, StepChain, save

_PROSE = ("the agent reads log lines from the fleet and summarises each incident before it calls a tool "
          "naïve café Zürich façade résumé 東京 서울 Ελλάδα — “quoted” 🚀 ünïcödé 42 3.14")
WORDS = tuple(_PROSE.split())
HISTORY_CAP = 10_500  # characters of message text kept in each model_input


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def _tool_input(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "query": _text(rng, 40),
        "filters": {"region": rng.choice(["eu-west-1", "us-east-2", "ap-south-1"]), "limit": rng.randint(1, 50)},
        "threshold": JSFloat(round(rng.random(), 6)),
        "notes": [_text(rng, 60) for _ in range(4)],
        "request": i,
    }


def _tool_result(rng: random.Random) -> dict[str, Any]:
    return {
        "rows": [
            {"host": f"node-{rng.randint(1, 999):03d}", "cpu": JSFloat(round(rng.uniform(0, 100), 2)),
             "latencyMs": JSFloat(rng.lognormvariate(3, 1)), "message": _text(rng, 25)}
            for _ in range(12)
        ],
        "summary": _text(rng, 80),
        "ok": True,
    }


def make_cassette(n_steps: int, seed: int = 7) -> Cassette:
    """A run of `n_steps`: rounds of model_input, tool_calls, tool_call, tool_result; then the answer."""
    rng = random.Random(seed)
    chain = StepChain(f"bench-{n_steps}")
    tools = [{"name": n, "description": _text(rng, 20), "inputSchema": {"type": "object"}}
             for n in ("search", "fetch_logs", "page_oncall")]
    messages: list[dict[str, Any]] = [{"role": "user", "content": _text(rng, 120)}]
    ts, call = 1_700_000_000_000, 0
    while len(chain.steps) + 4 + 3 <= n_steps:
        chain.append("model_input", ts, {"messages": list(messages), "tools": tools, "model": "bench-model",
                                         "params": {"maxTokens": 4096, "temperature": JSFloat(0.2)}})
        name, cid, tool_input = rng.choice(tools)["name"], f"call-{call}", _tool_input(rng, call)
        call += 1
        chain.append("model_output", ts + 5, {"type": "tool_calls", "text": _text(rng, 30),
                                              "calls": [{"toolCallId": cid, "toolName": name,
                                                         "toolInput": tool_input}]})
        chain.append("tool_call", ts + 6, {"toolCallId": cid, "toolName": name, "toolInput": tool_input})
        result = _tool_result(rng)
        chain.append("tool_result", ts + 9, {"toolCallId": cid, "toolName": name, "result": result})
        messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "toolCallId": cid, "toolName": name,
                                               "toolInput": tool_input}]},
            {"role": "user", "content": [{"type": "tool_result", "toolCallId": cid, "toolName": name,
                                          "result": result}]},
        ]
        while len(messages) > 3 and sum(len(str(m["content"])) for m in messages) > HISTORY_CAP:
            del messages[1:3]
        ts += 1000
    chain.append("model_input", ts, {"messages": list(messages), "tools": tools})
    chain.append("model_output", ts + 5, {"type": "final_answer", "text": _text(rng, 50)})
    chain.append("metadata", ts + 6, {"event": "run_completed", "status": "success", "result": "done"})
    return chain.cassette(1_700_000_000_000)


# ---------------------------------------------------------------------------------------------------------
# Measurement: each operation in a fresh interpreter, which prints its own wall time and peak RSS.

_PRELUDE = "import resource, sys, time\nsys.path.insert(0, {root!r})\n"
_REPORT = ("\nprint(time.perf_counter() - t0, "
           "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n")
# The modules moved into blackbox/format/ in issue 24: an older checkout has them at the top (`--before`).
# The old place is tried first: this checkout's editable install would lend an older one its `blackbox.format`.
_IMPORT = ("try:\n    from blackbox.{0} import {1}\n"
           "except ImportError:\n    from blackbox.format.{0} import {1}\n")
OPERATIONS: dict[str, str] = {
    "floor": "import hashlib, msgspec\nt0 = time.perf_counter()\n"
             "doc = msgspec.json.decode(open(sys.argv[1], 'rb').read())\n"
             "for step in doc['steps']:\n"
             "    hashlib.sha256(msgspec.json.encode(step, order='sorted')).hexdigest()",
    "verify": _IMPORT.format("verify", "verify") + "t0 = time.perf_counter()\n"
              "assert verify(sys.argv[1], env={}).ok",
    "load": _IMPORT.format("cassette", "load") + "t0 = time.perf_counter()\nc = load(sys.argv[1])",
    "diff": _IMPORT.format("cassette", "load") + _IMPORT.format("diff", "diff") + "t0 = time.perf_counter()\n"
            "r = diff(load(sys.argv[1]), load(sys.argv[2]))\nassert r.first_divergence is not None",
}
ROOT = str(Path(__file__).resolve().parent.parent)
BEFORE = ROOT  # `--before DIR`: where the operations labelled "before" import blackbox from


def measure(operation: str, *files: Path) -> tuple[float, int]:
    """(seconds, peak RSS bytes) of one run of `operation` in a new process; `verify before` runs the
    `--before` checkout's verify (`BEFORE`)."""
    name, _, when = operation.partition(" ")
    root = BEFORE if when == "before" else ROOT
    code = _PRELUDE.format(root=root) + OPERATIONS[name] + _REPORT
    out = subprocess.run([sys.executable, "-c", code, *map(str, files)], capture_output=True, text=True,
                         check=True)
    seconds, rss = out.stdout.split()
    return float(seconds), int(rss)


def medians(operations: list[tuple[str, tuple[Path, ...]]], repeat: int) -> dict[str, tuple[float, int]]:
    """The median of `repeat` runs of each operation (time and peak memory), interleaved round by round so
    that a burst of load on the shared machine hits all of them alike."""
    runs: dict[str, list[tuple[float, int]]] = {op: [] for op, _ in operations}
    for _ in range(repeat):
        for op, files in operations:
            runs[op].append(measure(op, *files))
    return {op: (statistics.median(r[0] for r in rs), int(statistics.median(r[1] for r in rs)))
            for op, rs in runs.items()}


def _changed_copy(cassette: Cassette, path: Path) -> None:
    """The same run with a tool result changed near the end, re-chained from there."""
    steps = cassette.steps
    at = next(i for i in range(len(steps) - 1, 0, -1) if steps[i].type == "tool_result")
    chain = StepChain(cassette.id, prefix=steps[:at])
    for step in steps[at:]:
        payload = step.payload
        if step.index == at:
            payload = {**payload, "result": {"changed": True}}
        chain.append(step.type, step.timestamp, payload)
    save(chain.cassette(cassette.createdAt), path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout of an earlier commit: its verify, load and diff "
                        "run too, interleaved, labelled 'before'")
    args = parser.parse_args()
    global BEFORE
    if args.before:
        BEFORE = str(args.before.resolve())
    print(f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.steps:
            t = time.perf_counter()
            cassette = make_cassette(n)
            path, other = Path(tmp) / f"run-{n}.json", Path(tmp) / f"run-{n}-changed.json"
            save(cassette, path)
            _changed_copy(cassette, other)
            del cassette
            size = path.stat().st_size / 1e6
            print(f"\n{n} steps, {size:.1f} MB (generated in {time.perf_counter() - t:.1f} s)")
            cases: list[tuple[str, tuple[Path, ...]]] = [("floor", (path,)), ("verify", (path,)), ("load", (path,)),
                                                         ("diff", (path, other))]
            if args.before:
                cases += [(f"{op} before", files) for op, files in cases[1:]]
            results = medians(cases, args.repeat)
            floor_t, floor_m = results.pop("floor")
            print(f"  {'floor':14s} {floor_t:7.3f} s {floor_m / 2**20:7.0f} MB")
            for op, (secs, rss) in results.items():
                print(f"  {op:14s} {secs:7.3f} s {rss / 2**20:7.0f} MB   "
                      f"{secs / floor_t:5.2f}× floor time  {rss / floor_m:5.2f}× floor memory")
            print(f"  (load average {os.getloadavg()[0]:.1f})")

if __name__ == "__main__":
    main()
