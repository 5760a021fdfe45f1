"""A sweep of 1,000 what-if continuations at concurrency 32, next to the same 1,000 requests sent by the bare
openai SDK from 32 threads, in one run; the requests the fake API counts; memory at 250 and 1,000 branches.

    python bench/bench_sweep.py [--branches 1000] [--concurrency 32] [--rounds 3]

The fake API (tests/fakeapi.py, the weather brain: a continuation's request is answered with a final answer)
runs in a child process, so its HTTP handling does not share this process's interpreter lock with the side
being timed.  The parent run is recorded through the real openai SDK and a Blackbox session first.

- **floor**: the SDK (`openai.OpenAI`, `max_retries=0`) sends the continuation's own request body (the first
  request the sweep sent, taken from the fake) 1,000 times from a pool of 32 threads.
- **sweep**: `many.plan` + `many.running.run_sweep` (what the CLI runs) with 1,000 baseline branches: each a
  what-if continuation (one model call) through the pooled client, written as a fork cassette, judged, and
  the manifest rewritten as branches finish.
Rounds alternate floor and sweep; figures are medians.  The fake counts the requests of each sweep: it must
be the branch count (the prefix is copied, never asked).  Memory: tracemalloc's peak over a sweep of 250 and
one of 1,000 branches (the manifest and the per-branch records grow; nothing else should).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

KEY = "sk-proj-bench-sweep-0123456789abcdefghij"
FAKE = """
import sys
from tests.fakeapi import FakeAPI, weather_brain
fake = FakeAPI().start()
fake.brain = weather_brain("openai", model="gpt-4o")
print(fake.openai_url, flush=True)
for line in sys.stdin:
    if line.strip() == "count":
        print(len(fake.requests), flush=True)
    elif line.strip() == "first":
        import json
        print(json.dumps(fake.requests[-1].body), flush=True)
    elif line.strip() == "clear":
        with fake._lock:
            fake.requests.clear()
        print("ok", flush=True)
"""


class Fake:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", FAKE], cwd=HERE, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def ask(self, what: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def record_parent(url: str, out: Path) -> None:
    from tests.fakeapi_chance import record_weather_run

    record_weather_run(url, KEY, out)


def run_sweep_once(parent_path: Path, branches: int, concurrency: int, folder: Path) -> tuple[float, float]:
    from blackbox.fork.client import pooled_client
    from blackbox.format.cassette import load
    from blackbox.format.writing import atomic_write
    from blackbox.many.folder import PARENT, Settings, write_sweep
    from blackbox.many.plan import plan
    from blackbox.many.running import run_sweep

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    started, cpu = time.perf_counter(), time.process_time()
    parent = load(parent_path)
    settings = Settings(at=3, repeat=branches, mode="live", parentId=parent.id, source=str(parent_path),
                        concurrency=concurrency)
    sweep = plan(settings, [])
    atomic_write(folder / PARENT, parent_path.read_bytes())
    write_sweep(folder, sweep)
    with pooled_client(concurrency) as client:
        run_sweep(folder, sweep, parent, client=client)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    bad = [b for b in sweep.branches if b.verdict != "pass"]
    assert not bad, bad[0]
    return seconds, cpu


def run_floor(url: str, body: dict[str, Any], requests: int, concurrency: int) -> tuple[float, float]:
    import openai

    client = openai.OpenAI(base_url=url, api_key=KEY, max_retries=0)
    started, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(concurrency) as pool:
        answers = list(pool.map(lambda _: client.chat.completions.create(**body), range(requests)))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert all(a.choices[0].message.content for a in answers)
    client.close()
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--branches", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    fake = Fake()
    os.environ.update({"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake.url})
    try:
        with tempfile.TemporaryDirectory() as tmp:
            parent = Path(tmp) / "parent.json"
            record_parent(fake.url, parent)
            fake.ask("clear")
            run_sweep_once(parent, 4, 4, Path(tmp) / "warm")  # warm-up; its request is the floor's body
            body = json.loads(fake.ask("first"))
            floors, sweeps, counts = [], [], []
            for _ in range(args.rounds):
                floors.append(run_floor(fake.url, body, args.branches, args.concurrency))
                fake.ask("clear")
                sweeps.append(run_sweep_once(parent, args.branches, args.concurrency, Path(tmp) / "sweep"))
                counts.append(int(fake.ask("count")))
            ratios = [s[0] / f[0] for f, s in zip(floors, sweeps, strict=True)]
            peaks = {}
            for n in (250, args.branches):
                tracemalloc.start()
                run_sweep_once(parent, n, args.concurrency, Path(tmp) / f"mem{n}")  # the manifest grows with n
                peaks[n] = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
            floor, swept = statistics.median(f[0] for f in floors), statistics.median(s[0] for s in sweeps)
            floor_cpu, sweep_cpu = statistics.median(f[1] for f in floors), statistics.median(s[1] for s in sweeps)
            print(f"load average {os.getloadavg()[0]:.1f}; {args.branches} requests, concurrency {args.concurrency},"
                  f" {args.rounds} rounds (medians)")
            print(f"floor (openai SDK, {args.concurrency} threads): {floor:.2f} s wall, {floor_cpu:.2f} s CPU  "
                  f"[{', '.join(f'{x[0]:.2f}' for x in floors)}]")
            print(f"sweep ({args.branches} what-if branches):     {swept:.2f} s wall, {sweep_cpu:.2f} s CPU  "
                  f"[{', '.join(f'{x[0]:.2f}' for x in sweeps)}]")
            print(f"sweep / floor: {swept / floor:.2f}x wall (medians), per round "
                  f"{', '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f}x); "
                  f"{sweep_cpu / floor_cpu:.2f}x CPU")
            print(f"requests the fake counted per sweep: {counts} (branches: {args.branches})")
            print(f"tracemalloc peak: 250 branches {peaks[250] / 1e6:.1f} MB, {args.branches} branches "
                  f"{peaks[args.branches] / 1e6:.1f} MB ({peaks[args.branches] / peaks[250]:.2f}x)")
    finally:
        fake.close()


if __name__ == "__main__":
    main()
