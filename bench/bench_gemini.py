"""Gemini's per-call record and replay overhead beside Anthropic's, in one run.

    python bench/bench_gemini.py [--calls 40] [--repeat 40] [--interleave call|batch|both] [--processes K]

The variants of `bench_session.py` (baseline: the SDK over a canned in-process transport; record; replay of a
cassette recorded beforehand) for google-genai's `models.generate_content` and anthropic's `messages.create`,
all eight in one process, each on one long-lived client and session.  A round runs `--calls` calls of every
variant, in an order rotated every round, so a burst of load from other jobs hits all of them alike; `--repeat`
rounds.  Interleaved call by call, the variants take turns one call at a time: every one of them finds the CPU's
caches as the others leave them, so the larger footprint of one SDK (google-genai builds pydantic models of
twice the anthropic SDK's cost) does not make Blackbox's code colder for that provider alone; in batches, each
variant runs `--calls` calls in a row (Blackbox's code then runs as cold as its SDK leaves it).  `both` (the
default) prints the two, one after the other.  Times are the calling thread's CPU time (the machine is shared:
wall time measures the other jobs too).

Two figures per variant, both in ms per call:

- end to end: the variant's batch less the baseline batch of the same provider in the same round (the SDK's
  own cost cancels out, pairwise), as the median of the rounds and as the 10th percentile of each less the
  10th percentile of the baseline's (`bench_session_ab.py`'s figure);
- like for like (replay only): the replay variant less the SDK over a canned network that answers what replay
  answers (its status, headers and body, `Answered`).  A replayed body is leaner than a real one (zero usage,
  no safety ratings), so the SDK parses less in replay than over the realistic canned body; against that body
  the saving counts as negative overhead, and it is not the same for both APIs (a few µs for Anthropic's usage
  fields, less for Gemini's).  Against the same bytes, the difference is Blackbox's work alone;
- inside Blackbox's transport: the thread CPU time inside its `handle_request` (all of Blackbox's work on an
  unstreamed call: request, decision, response, recording) less the canned network inside it — no SDK in it.

The goal: Gemini's overhead within 10% of Anthropic's (a ratio ≤ 1.10), record and replay.  `--processes K`
runs the whole bench in K fresh processes and gives the median of each ratio (a process's memory layout moves
its end-to-end ratios by a few %).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
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
MODES = ("baseline", "record", "replay", "answered")


class Clock:
    """Thread CPU time spent inside Blackbox's transport less the canned network inside it (installed while
    the Blackbox variants run; the baseline's network is outside any Blackbox transport, so never counted)."""

    def __init__(self) -> None:
        self.inside = self.network = 0.0
        self.restore: Callable[[], None] = lambda: None

    def install(self) -> None:
        sync_cls, _ = transport_classes(httpx2)
        original_bb, original_net = sync_cls.handle_request, Canned.handle_request
        clock = self
        depth = [0]

        def bb_handle(transport: Any, request: Any) -> Any:
            start = time.thread_time()
            depth[0] += 1
            try:
                return original_bb(transport, request)
            finally:
                depth[0] -= 1
                clock.inside += time.thread_time() - start

        def net_handle(transport: Any, request: Any) -> Any:
            if not depth[0]:
                return original_net(transport, request)
            start = time.thread_time()
            try:
                return original_net(transport, request)
            finally:
                clock.network += time.thread_time() - start

        sync_cls.handle_request, Canned.handle_request = bb_handle, net_handle

        def restore() -> None:
            sync_cls.handle_request, Canned.handle_request = original_bb, original_net

        self.restore = restore

    def read(self) -> float:
        """Blackbox's own seconds since the last read."""
        own = self.inside - self.network
        self.inside = self.network = 0.0
        return own


def sdk_call(provider: str, bb: blackbox.Session | None) -> Callable[[], Any]:
    if bb is None:
        return caller(provider, httpx2.Client(transport=canned(provider)))
    return caller(provider, bb.http_client(transport=canned(provider)), bb.async_http_client())


class Answered(httpx2.BaseTransport):
    """The canned network answering with what replay answers (its status, headers and body): the SDK then
    parses the same bytes as in replay, so their difference is Blackbox's work alone."""

    def __init__(self, response: httpx2.Response) -> None:
        self.status, self.headers, self.body = response.status_code, list(response.headers.raw), response.content

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(self.status, headers=self.headers, content=self.body, request=request)


def replayed_answer(provider: str, cassette: Path) -> Answered:
    """What a replay of `cassette` answers its first call with (not timed)."""
    bb = blackbox.session("replay", cassette=cassette)
    client = bb.http_client(transport=canned(provider))
    sent = client.send
    got: list[httpx2.Response] = []

    def send(request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        got.append(sent(request, **kwargs))
        return got[-1]

    client.send = send
    sdk = caller(provider, client, bb.async_http_client())
    sdk()
    client.close()
    return Answered(got[0])


def prepare(provider: str, calls: int, cassette: Path) -> None:
    """Record the cassette the replay variant answers from (not timed)."""
    bb = blackbox.session("record", out=cassette)
    call = sdk_call(provider, bb)
    for _ in range(calls):
        call()
    bb.finish(result="done")


def p10(values: list[float]) -> float:
    return sorted(values)[len(values) // 10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40, help="calls of each variant per round")
    parser.add_argument("--repeat", type=int, default=40, help="rounds")
    parser.add_argument("--interleave", choices=["call", "batch", "both"], default="both",
                        help="call: the eight variants take turns call by call; batch: a batch of --calls each")
    parser.add_argument("--processes", type=int, default=1,
                        help="run the bench in this many fresh processes, one after the other, and give the median "
                             "of their ratios (a process's memory layout moves its end-to-end ratios by a few %%)")
    parser.add_argument("--ratios-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.processes > 1:
        return several(args)
    n, rounds = args.calls, args.repeat
    modes = ["call", "batch"] if args.interleave == "both" else [args.interleave]
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        sessions: list[blackbox.Session] = []
        calls: dict[tuple[str, str], Callable[[], Any]] = {}
        for provider in PROVIDERS:
            cassette = Path(tmp) / f"{provider}.json"
            prepare(provider, n * rounds * len(modes) + 20, cassette)
            record = blackbox.session("record", out=Path(tmp) / f"{provider}-rec.json")
            replay = blackbox.session("replay", cassette=cassette)
            sessions += [record, replay]
            answered = replayed_answer(provider, cassette)
            for mode, bb in (("baseline", None), ("record", record), ("replay", replay), ("answered", None)):
                calls[(provider, mode)] = call = (caller(provider, httpx2.Client(transport=answered))
                                                  if mode == "answered" else sdk_call(provider, bb))
                for _ in range(10 if mode != "replay" else 20):  # warm up (replay: the 20 spare recorded calls)
                    call()
        clock = Clock()
        clock.install()
        ratios: dict[str, dict[str, float]] = {}
        try:
            for interleave in modes:
                whole, own = measure(calls, clock, n, rounds, interleave)
                ratios[interleave] = report(whole, own, n, rounds, interleave)
        finally:
            clock.restore()
        for bb in sessions:
            bb.finish(result="done")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if args.ratios_out is not None:
        args.ratios_out.write_text(json.dumps(ratios))


def several(args: argparse.Namespace) -> None:
    """`--processes K`: K runs in fresh processes, each printed as it goes, then the median of each ratio."""
    runs: list[dict[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.processes):
            out = Path(tmp) / f"{k}.json"
            print(f"process {k + 1} of {args.processes}", flush=True)
            subprocess.run([sys.executable, __file__, "--calls", str(args.calls), "--repeat", str(args.repeat),
                            "--interleave", args.interleave, "--ratios-out", str(out)], check=True)
            runs.append(json.loads(out.read_text()))
    print(f"gemini / anthropic, median of {len(runs)} processes [their range]:")
    for interleave in runs[0]:
        print(f"  interleaved {'call by call' if interleave == 'call' else 'in batches'}:")
        for name in runs[0][interleave]:
            values = sorted(run[interleave][name] for run in runs)
            print(f"    {name:32s} {statistics.median(values):.2f} [{values[0]:.2f}–{values[-1]:.2f}]")


Times = dict[tuple[str, str], list[float]]


def measure(calls: dict[tuple[str, str], Callable[[], Any]], clock: Clock, n: int, rounds: int,
            interleave: str) -> tuple[Times, Times]:
    """Per round and variant: CPU seconds per call, end to end and inside Blackbox's transport.  `call` runs
    the variants call by call, in a new random order every pass (every variant then finds the caches as a
    random other one leaves them: no SDK's own footprint is charged to Blackbox's code of one provider only);
    `batch` a batch of `n` calls each, the order turning by one every round."""
    keys = list(calls)
    whole: Times = {key: [] for key in keys}
    own: Times = {key: [] for key in keys}
    clock_ = time.thread_time
    shuffle = random.Random(18).shuffle
    for r in range(rounds):
        order = keys[r % len(keys):] + keys[:r % len(keys)]
        spent = dict.fromkeys(order, 0.0)
        mine = dict.fromkeys(order, 0.0)
        for _ in range(n if interleave == "call" else 1):
            if interleave == "call":
                shuffle(order)  # a new order every pass: no variant always follows the same one
            for key in order:
                call = calls[key]
                clock.read()
                start = clock_()
                for _ in range(1 if interleave == "call" else n):
                    call()
                spent[key] += clock_() - start
                mine[key] += clock.read()
        for key in order:
            whole[key].append(spent[key] / n)
            own[key].append(mine[key] / n)
    return whole, own


def report(whole: Times, own: Times, n: int, rounds: int, interleave: str) -> dict[str, float]:
    """Print the figures; the gemini / anthropic ratios, by name."""
    how = "call by call" if interleave == "call" else f"in batches of {n} calls"
    print(f"interleaved {how}: {rounds} rounds of {n} calls of each variant, thread CPU time, ms per call")
    paired: dict[tuple[str, str], float] = {}
    low: dict[tuple[str, str], float] = {}
    inside: dict[tuple[str, str], float] = {}
    for provider in PROVIDERS:
        base = whole[(provider, "baseline")]
        print(f"  {provider:9s} baseline {statistics.median(base) * 1e3:6.3f} (p10 {p10(base) * 1e3:6.3f})")
        for mode in ("record", "replay"):
            key = (provider, mode)
            paired[key] = statistics.median(v - b for v, b in zip(whole[key], base, strict=True))
            low[key] = p10(whole[key]) - p10(base)
            inside[key] = statistics.median(own[key])
            print(f"  {provider:9s} {mode:8s} {statistics.median(whole[key]) * 1e3:6.3f}  overhead: paired median "
                  f"+{paired[key] * 1e3:.3f}, p10 − p10 +{low[key] * 1e3:.3f}; inside Blackbox's transport "
                  f"{inside[key] * 1e3:.3f} (p10 {p10(own[key]) * 1e3:.3f})")
        same = whole[(provider, "answered")]
        replay = whole[(provider, "replay")]
        paired[(provider, "like")] = statistics.median(v - b for v, b in zip(replay, same, strict=True))
        low[(provider, "like")] = p10(replay) - p10(same)
        print(f"  {provider:9s} replay against the SDK answered replay's bytes ({statistics.median(same) * 1e3:.3f}):"
              f" overhead: paired median +{paired[(provider, 'like')] * 1e3:.3f}, p10 − p10 "
              f"+{low[(provider, 'like')] * 1e3:.3f}")
    for mode in ("record", "replay"):
        g, a = ("gemini", mode), ("anthropic", mode)
        print(f"  {mode} overhead, gemini / anthropic: end to end {paired[g] / paired[a]:.2f} (paired median), "
              f"{low[g] / low[a]:.2f} (p10 − p10); inside Blackbox's transport {inside[g] / inside[a]:.2f}",
              flush=True)
    g, a = ("gemini", "like"), ("anthropic", "like")
    print(f"  replay overhead like for like (both SDKs parsing the bytes replay sends), gemini / anthropic: "
          f"{paired[g] / paired[a]:.2f} (paired median), {low[g] / low[a]:.2f} (p10 − p10)", flush=True)
    ratios: dict[str, float] = {}
    for mode in ("record", "replay", "like"):
        g, a = ("gemini", mode), ("anthropic", mode)
        what = "replay like for like" if mode == "like" else mode
        ratios[f"{what} end to end"] = paired[g] / paired[a]
        ratios[f"{what} p10 − p10"] = low[g] / low[a]
        if mode != "like":
            ratios[f"{mode} inside the transport"] = inside[g] / inside[a]
    return ratios


if __name__ == "__main__":
    main()
