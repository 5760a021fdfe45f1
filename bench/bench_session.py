"""Record and replay overhead per model call through the real SDKs, against the same SDK without Blackbox.

    python bench/bench_session.py [--calls 1000] [--repeat 3] [--provider anthropic openai gemini] [--profile MODE]

Every variant drives the real `anthropic.Anthropic` / `openai.OpenAI` / google-genai `genai.Client` over an
`httpx2.Client` whose innermost transport is a do-nothing in-process transport answering every request with one
canned JSON response (no network, no server), so the figures are the SDK's own cost and what Blackbox adds to it:

- baseline: the SDK over `httpx2.Client(transport=canned)`;
- record: the SDK over `bb.http_client(transport=canned)` of `blackbox.session("record")`, with the crash
  journal (one written line per model call, the session's default) and without it (the journal closed right after
  the session starts: there is no public switch, so the bench reaches into the recorder);
- replay: `blackbox.session("replay")` of the cassette that a record run wrote, the SDK over its client.

Each call is an independent single-turn request (a system prompt, one tool, a ~1 KB user message) answered with
a short text; a cassette of `--calls` calls holds 2 × calls steps.  Per-call times exclude the session's
start (replay: loading and checking the cassette) and `finish()` (record: verify and write), which are printed
separately as per-run costs.  The variants run interleaved, round by round, and the best of `--repeat` rounds
counts (the machine is shared).  `--profile record|record-nojournal|replay` prints where one run's time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2

import blackbox
from tests.fakeapi import anthropic_message, chat_completion
from tests.fakeapi_gemini import gemini_response

SYSTEM = "You are a careful travel planner. Answer briefly and call tools when a fact is needed. " * 3
USER = ("Plan a three-day trip to Lisbon in May for two people who like food, old trams and museums; "
        "keep the budget moderate and list one restaurant per day. ") * 6
TOOL = {"name": "get_weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
ANSWER = "Day 1: Alfama and tram 28, lunch at a tasca. Day 2: Belém and the Gulbenkian. Day 3: LX Factory."
BASE_URLS = {"anthropic": "http://bench.invalid", "openai": "http://bench.invalid/v1", "gemini": "http://bench.invalid"}


class Canned(httpx2.BaseTransport):
    """The do-nothing network: every request gets the same JSON response, built in memory."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=[("content-type", "application/json")], content=self.body,
                               request=request)


def canned(provider: str) -> Canned:
    bodies = {"anthropic": anthropic_message, "gemini": gemini_response}
    body = bodies[provider](text=ANSWER) if provider in bodies else chat_completion(content=ANSWER)
    return Canned(json.dumps(body).encode())


def caller(provider: str, http: httpx2.Client, async_http: Any = None) -> Callable[[], Any]:
    """One model call of the real SDK over `http` (`async_http`: google-genai's async client, never used here)."""
    if provider == "anthropic":
        import anthropic

        client = anthropic.Anthropic(api_key="bench-key-0000", base_url=BASE_URLS[provider], http_client=http,
                                     max_retries=0)
        tools = [{"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["parameters"]}]
        return lambda: client.messages.create(model="claude-sonnet-4-6", max_tokens=512, system=SYSTEM,
                                              tools=tools, messages=[{"role": "user", "content": USER}])
    if provider == "gemini":
        from google import genai
        from google.genai import types

        gemini = genai.Client(api_key="bench-key-0000", http_options=types.HttpOptions(
            base_url=BASE_URLS[provider], httpx_client=http,
            httpx_async_client=async_http or httpx2.AsyncClient()))
        config = types.GenerateContentConfig(system_instruction=SYSTEM, max_output_tokens=512, tools=[types.Tool(
            function_declarations=[types.FunctionDeclaration(name=TOOL["name"], description=TOOL["description"],
                                                             parameters_json_schema=TOOL["parameters"])])])
        return lambda: gemini.models.generate_content(model="gemini-2.5-flash", contents=USER, config=config)
    import openai

    client = openai.OpenAI(api_key="bench-key-0000", base_url=BASE_URLS[provider], http_client=http,
                           max_retries=0)
    tools = [{"type": "function", "function": TOOL}]
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    return lambda: client.chat.completions.create(model="gpt-5.1", messages=messages, tools=tools)


class Timing:
    """Per-call seconds of one run, and the per-run costs around the calls (start, finish)."""

    def __init__(self, per_call: float, start: float = 0.0, finish: float = 0.0) -> None:
        self.per_call, self.start, self.finish = per_call, start, finish


def timed_calls(call: Callable[[], Any], n: int, profile: cProfile.Profile | None) -> float:
    call()  # warm up: the first call builds the SDK's lazily created parts
    if profile is not None:
        profile.enable()
    start = time.perf_counter()
    for _ in range(n):
        call()
    elapsed = time.perf_counter() - start
    if profile is not None:
        profile.disable()
    return elapsed / n


def run_baseline(provider: str, n: int, profile: cProfile.Profile | None = None) -> Timing:
    with httpx2.Client(transport=canned(provider)) as http:
        return Timing(timed_calls(caller(provider, http), n, profile))


def run_record(provider: str, n: int, out: Path, journal: bool, profile: cProfile.Profile | None = None) -> Timing:
    t0 = time.perf_counter()
    bb = blackbox.session("record", out=out)
    if not journal:
        bb._engine.recorder.discard_journal()  # no public switch: measure the recorder without its journal
    http = bb.http_client(transport=canned(provider))
    start = time.perf_counter() - t0
    per_call = timed_calls(caller(provider, http, bb.async_http_client()), n, profile)
    t0 = time.perf_counter()
    bb.finish(result="done")
    return Timing(per_call, start, time.perf_counter() - t0)


def run_replay(provider: str, n: int, cassette: Path, profile: cProfile.Profile | None = None) -> Timing:
    t0 = time.perf_counter()
    bb = blackbox.session("replay", cassette=cassette)
    http = bb.http_client(transport=canned(provider))
    start = time.perf_counter() - t0
    per_call = timed_calls(caller(provider, http, bb.async_http_client()), n, profile)
    t0 = time.perf_counter()
    bb.finish(result="done")
    return Timing(per_call, start, time.perf_counter() - t0)


def variants(provider: str, n: int, tmp: Path) -> dict[str, Callable[[], Timing]]:
    cassette = tmp / f"{provider}.json"
    return {
        "baseline": lambda: run_baseline(provider, n),
        "record": lambda: run_record(provider, n, cassette, journal=True),
        "record-nojournal": lambda: run_record(provider, n, tmp / f"{provider}-nj.json", journal=False),
        "replay": lambda: run_replay(provider, n, cassette),
    }


def bench(provider: str, n: int, repeat: int, tmp: Path) -> None:
    runs: dict[str, list[Timing]] = {}
    for _ in range(repeat):
        for name, run in variants(provider, n, tmp).items():  # record before replay: replay reads its file
            runs.setdefault(name, []).append(run())
    best = {name: min(ts, key=lambda t: t.per_call) for name, ts in runs.items()}
    base = best["baseline"].per_call
    print(f"\n{provider}: {n} calls per run, best of {repeat}")
    print(f"  {'baseline':17s} {base * 1e3:6.3f} ms/call")
    for name in ("record", "record-nojournal", "replay"):
        t = best[name]
        extra = f"start {min(x.start for x in runs[name]) * 1e3:6.1f} ms, finish " \
                f"{min(x.finish for x in runs[name]) * 1e3:6.1f} ms per run"
        print(f"  {name:17s} {t.per_call * 1e3:6.3f} ms/call  {t.per_call / base:5.2f}× baseline "
              f"(+{(t.per_call - base) * 1e3:.3f} ms)   {extra}")


def profile(provider: str, n: int, mode: str, tmp: Path) -> None:
    """Profile one run of `mode` (its calls only) and print the functions that take the time."""
    cassette = tmp / f"{provider}.json"
    run_record(provider, n, cassette, journal=True)
    prof = cProfile.Profile()
    if mode == "replay":
        run_replay(provider, n, cassette, prof)
    elif mode == "baseline":
        run_baseline(provider, n, prof)
    else:
        run_record(provider, n, tmp / "profiled.json", journal=mode == "record", profile=prof)
    print(f"\n{provider} {mode}: profile of {n} calls")
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--provider", nargs="+", choices=["anthropic", "openai", "gemini"],
                        default=["anthropic", "openai", "gemini"])
    parser.add_argument("--profile", choices=["baseline", "record", "record-nojournal", "replay"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for provider in args.provider:
            if args.profile:
                profile(provider, args.calls, args.profile, Path(tmp))
            else:
                bench(provider, args.calls, args.repeat, Path(tmp))


if __name__ == "__main__":
    main()
