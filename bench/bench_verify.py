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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import BLACKBOX, GENERATE, ROOT, medians

FLOOR = ("import gc, hashlib, sys, msgspec\n"
         "gc.disable()\n"
         "doc = msgspec.json.decode(open(sys.argv[1], 'rb').read())\n"
         "prev = None\n"
         "for step in doc['steps']:\n"
         "    prev = hashlib.sha256(msgspec.json.encode(step, order='sorted')).hexdigest()\n")


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
        results = medians(cases, args.repeat)
        floor_t, floor_m = results["floor (gc off)"]
        print(f"{args.steps} steps, {a.stat().st_size / 1e6:.1f} MB; median of {args.repeat} "
              f"({time.perf_counter() - t:.0f} s in all)")
        for name, (secs, rss) in results.items():
            print(f"  {name:16s} {secs:7.3f} s {rss / 2**20:6.0f} MB   {secs / floor_t:5.2f}× floor time  "
                  f"{rss / floor_m:5.2f}× floor memory")


if __name__ == "__main__":
    main()
