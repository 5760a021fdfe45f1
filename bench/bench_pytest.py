"""A pytest suite of replayed agent tests against the same suite over a plain canned transport.

    python bench/bench_pytest.py [--tests 200] [--repeat 5] [--profile]

Both suites run the same Anthropic agent loop (`tests.agents.loops.anthropic_agent`: three model calls, two tool
calls, a system prompt and ~1 KB of user text) through the real `anthropic.Anthropic` client, one test per
parametrized id:

- floor: the SDK over `httpx2.Client(transport=canned)`, where the canned transport answers the k-th request of
  the test with the k-th recorded response body, and the tools run;
- replay: the SDK over `blackbox.http_client()` of the plugin's fixture, replaying one committed cassette per
  test (recorded first, once, with `--blackbox-record` over the same canned transport): the plugin verifies the
  cassette, starts the replay session, guards the network, checks every request and tool call, synthesizes the
  responses and checks the outcome.

Each run is a whole `pytest.main()` in this process (collection included; the test modules are dropped from
`sys.modules` before each run so both suites are collected the same way).  The suites run interleaved, round by
round, and the best of `--repeat` rounds counts (the machine is shared).  Goal: replay ≤ 1.3× the floor.
`--profile` prints where one replay run's time goes.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anthropic  # noqa: F401  (imported once, before the clock: both suites use it)
import httpx2  # noqa: F401
import pytest

import tests.agents.loops  # noqa: F401

COMMON = '''
import json
import httpx2
from tests.agents.loops import anthropic_agent, book_hotel, get_weather
from tests.fakeapi import anthropic_message

CITIES = ["Paris", "Oslo", "Lisbon", "Rome", "Madrid", "Vienna", "Prague", "Dublin"]
USER = "Plan a short trip for two people who like food, old trams and museums; keep the budget moderate. " * 10


def replies(i):
    city = CITIES[i % len(CITIES)]
    return [json.dumps(body).encode() for body in (
        anthropic_message(text="Let me check.", tool_uses=[("get_weather", {"city": city})]),
        anthropic_message(text="Booking.", tool_uses=[("book_hotel", {"city": city, "nights": 1 + i % 3})]),
        anthropic_message(text=f"Booked {city} for you (test {i})."),
    )]


class Canned(httpx2.BaseTransport):
    """The k-th request of a test gets the k-th canned response; no network."""

    def __init__(self, bodies):
        self.bodies = list(bodies)

    def handle_request(self, request):
        return httpx2.Response(200, headers=[("content-type", "application/json")], content=self.bodies.pop(0),
                               request=request)


def prompt(i):
    return f"Test {i}: {USER}"
'''

FLOOR = COMMON + '''
import anthropic
import pytest


@pytest.mark.parametrize("i", range({n}))
def test_agent(i):
    client = anthropic.Anthropic(http_client=httpx2.Client(transport=Canned(replies(i))), base_url="http://bench.invalid",
                                 api_key="k", max_retries=0)
    answer = anthropic_agent(client, {"get_weather": get_weather, "book_hotel": book_hotel}, prompt(i))
    assert answer.startswith("Booked")
'''

REPLAY = COMMON + '''
import anthropic
import pytest


@pytest.mark.parametrize("i", range({n}))
def test_agent(blackbox, i):
    extra = {"transport": Canned(replies(i))} if blackbox.mode == "record" else {}
    client = anthropic.Anthropic(http_client=blackbox.http_client(**extra), base_url="http://bench.invalid",
                                 max_retries=0)
    answer = anthropic_agent(client, blackbox.tools({"get_weather": get_weather, "book_hotel": book_hotel}),
                             prompt(i))
    assert answer.startswith("Booked")
'''

QUIET = ["-q", "-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:syrupy", "-p", "no:hypothesispytest",
         "-p", "no:xdist", "-p", "no:randomly", "--no-header", "-o", "asyncio_default_fixture_loop_scope=function"]


class _PerTest:
    """Sums each test's own time (setup, call and teardown), without collection and session start and end."""

    def __init__(self) -> None:
        self.total = 0.0

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> object:
        started = time.perf_counter()
        try:
            return (yield)
        finally:
            self.total += time.perf_counter() - started


def run_suite(folder: Path, module: str, *extra: str) -> tuple[float, float]:
    """One whole pytest run of `module`: (wall time, the tests' own time).  Fails loudly if a test fails."""
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        del sys.modules[name]
    out = io.StringIO()
    per_test = _PerTest()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = pytest.main([str(folder / f"{module}.py"), "--rootdir", str(folder), *QUIET, *extra],
                           plugins=[per_test])
    elapsed = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"{module}: pytest exited {code}\n{out.getvalue()[-3000:]}")
    return elapsed, per_test.total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    for name in ("ANTHROPIC_API_KEY", "CI", "BLACKBOX_RECORD"):
        os.environ.pop(name, None)
    with tempfile.TemporaryDirectory(prefix="bench_pytest_") as tmp:
        folder = Path(tmp)
        (folder / "bench_floor_suite.py").write_text(FLOOR.replace("{n}", str(args.tests)))
        (folder / "bench_replay_suite.py").write_text(REPLAY.replace("{n}", str(args.tests)))
        recorded, _ = run_suite(folder, "bench_replay_suite", "--blackbox-record")
        cassettes = sorted((folder / "cassettes" / "bench_replay_suite").iterdir())
        assert len(cassettes) == args.tests, f"recorded {len(cassettes)} cassettes"
        size = sum(p.stat().st_size for p in cassettes) / len(cassettes)
        print(f"recorded {len(cassettes)} cassettes ({size / 1024:.1f} KB, 10 steps each) in {recorded:.2f} s")
        run_suite(folder, "bench_floor_suite")  # warm-up: first-use imports, pyc caches
        run_suite(folder, "bench_replay_suite")
        floor: list[tuple[float, float]] = []
        replay: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            floor.append(run_suite(folder, "bench_floor_suite"))
            replay.append(run_suite(folder, "bench_replay_suite"))
        n = args.tests
        print(f"{n} tests, best of {args.repeat} rounds")
        for label, which in (("whole pytest run", 0), ("the tests' own time", 1)):
            best_floor, best_replay = min(r[which] for r in floor), min(r[which] for r in replay)
            print(f"  {label}: floor {best_floor:.3f} s ({best_floor / n * 1000:.2f} ms/test), replay "
                  f"{best_replay:.3f} s ({best_replay / n * 1000:.2f} ms/test): {best_replay / best_floor:.2f}x "
                  f"(+{(best_replay - best_floor) / n * 1000:.2f} ms/test)")
            print(f"    floor rounds:  {' '.join(f'{r[which]:.2f}' for r in floor)}")
            print(f"    replay rounds: {' '.join(f'{r[which]:.2f}' for r in replay)}")
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            run_suite(folder, "bench_replay_suite")
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats("blackbox/|netguard|ssl|socket", 40)


if __name__ == "__main__":
    main()
