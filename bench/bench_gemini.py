"""Gemini's per-call record and replay overhead beside Anthropic's, in one run.

    python bench/bench_gemini.py [--calls 300] [--repeat 5]

The variants of `bench_session.py` (baseline: the SDK over a canned in-process transport; record; replay of
the cassette record wrote) for google-genai's `models.generate_content` and anthropic's `messages.create`,
interleaved round by round across both providers, so a burst of load from other jobs hits both alike.  Times
are the calling thread's CPU time (the machine is shared: wall time measures the other jobs too); the figure
is the median of the rounds.  Blackbox's overhead is the variant's time less the baseline's, in ms per call;
the goal is Gemini's within 10% of Anthropic's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2

import blackbox
from bench.bench_session import caller, canned

PROVIDERS = ("anthropic", "gemini")


def per_call(provider: str, mode: str, n: int, cassette: Path) -> float:
    """CPU seconds per call of one run (the session's start and finish excluded)."""
    if mode == "baseline":
        http, bb = httpx2.Client(transport=canned(provider)), None
        call = caller(provider, http)
    else:
        bb = blackbox.session(mode, **({"out": cassette} if mode == "record" else {"cassette": cassette}))
        call = caller(provider, bb.http_client(transport=canned(provider)), bb.async_http_client())
    call()  # warm up (a record run's first call is in the cassette too)
    start = time.thread_time()
    for _ in range(n):
        call()
    elapsed = time.thread_time() - start
    if bb is not None:
        bb.finish(result="done")
    return elapsed / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for provider in PROVIDERS:
                cassette = Path(tmp) / f"{provider}.json"
                for mode in ("baseline", "record", "replay"):  # record before replay: replay reads its file
                    runs.setdefault((provider, mode), []).append(per_call(provider, mode, args.calls, cassette))
    median = {key: statistics.median(values) for key, values in runs.items()}
    overhead: dict[tuple[str, str], float] = {}
    print(f"{args.calls} calls per run, median of {args.repeat} rounds, thread CPU time")
    for provider in PROVIDERS:
        base = median[(provider, "baseline")]
        print(f"  {provider:9s} baseline {base * 1e3:6.3f} ms/call")
        for mode in ("record", "replay"):
            extra = median[(provider, mode)] - base
            overhead[(provider, mode)] = extra
            print(f"  {provider:9s} {mode:8s} {median[(provider, mode)] * 1e3:6.3f} ms/call  +{extra * 1e3:.3f} ms "
                  f"({median[(provider, mode)] / base:4.2f}× its baseline)")
    for mode in ("record", "replay"):
        ratio = overhead[("gemini", mode)] / overhead[("anthropic", mode)]
        print(f"  {mode} overhead, gemini / anthropic: {ratio:.2f}")


if __name__ == "__main__":
    main()
