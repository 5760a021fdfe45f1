"""`blackbox verify` of a large cassette against the least work any verifier must do, in one run.

Run: `python bench/bench_verify.py [--steps 10000] [--repeat 7] [--before DIR]`.

The floor is the issue's bare pass: a process that imports msgspec, turns the garbage collector off, decodes
the file and chains SHA-256 over each step's sorted compact bytes (`msgspec.json.encode(step,
order="sorted")`).  Each measurement is a fresh process (start-up included); floor, verify (and, with
`--before DIR`, the verify of an older checkout) run interleaved round by round, so load from other jobs on
the shared machine hits them alike; figures are medians.  Goal: verify within 1.5× the floor.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import BLACKBOX, GENERATE, ROOT

FLOOR = ("import gc, hashlib, sys, msgspec\n"
         "gc.disable()\n"
         "doc = msgspec.json.decode(open(sys.argv[1], 'rb').read())\n"
         "prev = None\n"
         "for step in doc['steps']:\n"
         "    prev = hashlib.sha256(msgspec.json.encode(step, order='sorted')).hexdigest()\n")


def run(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS bytes) of one process; `@DIR` first runs DIR's blackbox.  CPU
    time (user + system, from `os.wait4`) is the steadier figure on a shared machine: waiting for a core
    does not count."""
    root = ROOT
    if argv[0].startswith("@"):
        root, argv = Path(argv[0][1:]), argv[1:]
    env = {**os.environ, "NO_COLOR": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=root)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--before", type=Path, help="a checkout of an earlier commit: its verify runs too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "run.json", Path(tmp) / "run-changed.json"
        subprocess.run([sys.executable, "-c", GENERATE, str(args.steps), str(a), str(b)], check=True, cwd=ROOT)
        cases = {"floor (gc off)": [sys.executable, "-c", FLOOR, str(a)], "verify": [*BLACKBOX, "verify", str(a)]}
        if args.before:
            cases["verify before"] = [f"@{args.before.resolve()}", *BLACKBOX, "verify", str(a)]
        t = time.perf_counter()
        runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in cases}
        for _ in range(args.repeat):  # interleaved round by round
            for name, argv in cases.items():
                runs[name].append(run(argv))
        results = {name: tuple(statistics.median(r[i] for r in rs) for i in range(3)) for name, rs in runs.items()}
        floor_w, floor_c, floor_m = results["floor (gc off)"]
        print(f"{args.steps} steps, {a.stat().st_size / 1e6:.1f} MB; median of {args.repeat} "
              f"({time.perf_counter() - t:.0f} s in all; load average {os.getloadavg()[0]:.1f})")
        for name, (wall, cpu, rss) in results.items():
            print(f"  {name:16s} wall {wall:7.3f} s ({wall / floor_w:4.2f}×)  cpu {cpu:7.3f} s "
                  f"({cpu / floor_c:4.2f}×)  {rss / 2**20:5.0f} MB ({rss / floor_m:4.2f}×)")


if __name__ == "__main__":
    main()
