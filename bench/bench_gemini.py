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
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2

import blackbox
from bench.bench_session import Canned, caller, canned
from blackbox.live.transport import transport_classes

PROVIDERS = ("anthropic", "gemini")


class Clock:
    """Thread CPU time spent inside Blackbox's transport (`handle_request`, which holds all of Blackbox's work
    on an unstreamed call: request, decision, response, recording) less the canned network inside it."""

    def __init__(self) -> None:
        self.inside = self.network = 0.0

    def install(self) -> Callable[[], None]:
        sync_cls, _ = transport_classes(httpx2)
        original_bb, original_net = sync_cls.handle_request, Canned.handle_request
        clock = self

        def bb_handle(transport: Any, request: Any) -> Any:
            start = time.thread_time()
            try:
                return original_bb(transport, request)
            finally:
                clock.inside += time.thread_time() - start

        def net_handle(transport: Any, request: Any) -> Any:
            start = time.thread_time()
            try:
                return original_net(transport, request)
            finally:
                clock.network += time.thread_time() - start

        sync_cls.handle_request, Canned.handle_request = bb_handle, net_handle

        def restore() -> None:
            sync_cls.handle_request, Canned.handle_request = original_bb, original_net

        return restore


def per_call(provider: str, mode: str, n: int, cassette: Path) -> tuple[float, float]:
    """CPU seconds per call of one run (the session's start and finish excluded), and of them, Blackbox's own
    (inside its transport, less the network in it; 0 for the baseline)."""
    if mode == "baseline":
        http, bb = httpx2.Client(transport=canned(provider)), None
        call = caller(provider, http)
    else:
        bb = blackbox.session(mode, **({"out": cassette} if mode == "record" else {"cassette": cassette}))
        call = caller(provider, bb.http_client(transport=canned(provider)), bb.async_http_client())
    call()  # warm up (a record run's first call is in the cassette too)
    clock = Clock()
    restore = clock.install() if bb is not None else (lambda: None)
    start = time.thread_time()
    try:
        for _ in range(n):
            call()
        elapsed = time.thread_time() - start
    finally:
        restore()
    if bb is not None:
        bb.finish(result="done")
    return elapsed / n, (clock.inside - clock.network) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs: dict[tuple[str, str], list[float]] = {}
    own: dict[tuple[str, str], list[float]] = {}
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for provider in PROVIDERS:
                cassette = Path(tmp) / f"{provider}.json"
                for mode in ("baseline", "record", "replay"):  # record before replay: replay reads its file
                    whole, mine = per_call(provider, mode, args.calls, cassette)
                    runs.setdefault((provider, mode), []).append(whole)
                    own.setdefault((provider, mode), []).append(mine)
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
                  f"({median[(provider, mode)] / base:4.2f}× its baseline); inside Blackbox's transport "
                  f"{statistics.median(own[(provider, mode)]) * 1e3:.3f} ms")
    for mode in ("record", "replay"):
        ratio = overhead[("gemini", mode)] / overhead[("anthropic", mode)]
        inside = statistics.median(own[("gemini", mode)]) / statistics.median(own[("anthropic", mode)])
        print(f"  {mode} overhead, gemini / anthropic: {ratio:.2f} end to end (variant − baseline), "
              f"{inside:.2f} inside Blackbox's transport")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
