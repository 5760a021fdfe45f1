"""Benchmark of `blackbox export --to otlp-json`: a 10,000-step cassette to an OTLP JSON file, its time and
memory next to one `blackbox verify` of the same file, in one run (the floor).

Run: `python bench/bench_export.py [--steps 10000] [--repeat 5]`.

Each measurement is a fresh `python -m blackbox …` process (wall time from the parent, CPU time and peak RSS of
that child from `os.wait4`), the export and verify interleaved round by round so a burst of load from other jobs
on the shared machine hits both alike.  Figures are medians of `--repeat` rounds; the export is shown without and
with `--content` (every message, argument and result written as JSON attributes).
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

ROOT = Path(__file__).resolve().parent.parent
BLACKBOX = [sys.executable, "-m", "blackbox"]


def run(argv: list[str]) -> tuple[float, int, float]:
    """(seconds, peak RSS bytes, CPU seconds) of one process; its output goes to /dev/null."""
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return seconds, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT)]
    from blackbox.format.cassette import load
    from tests.tui.synthetic import write_synthetic

    with tempfile.TemporaryDirectory() as tmp:
        cassette = Path(tmp) / "large.json"
        write_synthetic(cassette, args.steps, trace_id="large")
        steps = len(load(cassette).steps)
        out = Path(tmp) / "large.otlp.json"
        cases = {
            "verify": [*BLACKBOX, "verify", str(cassette)],
            "export": [*BLACKBOX, "export", str(cassette), "--to", "otlp-json", "--out", str(out)],
            "export --content": [*BLACKBOX, "export", str(cassette), "--to", "otlp-json", "--out", str(out),
                                 "--content"],
        }
        results: dict[str, list[tuple[float, int, float]]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, argv in cases.items():
                results[name].append(run(argv))
        size = cassette.stat().st_size
        exported = out.stat().st_size
    print(f"cassette: {steps} steps, {size / 1e6:.1f} MB; OTLP JSON with content: {exported / 1e6:.1f} MB; "
          f"median of {args.repeat}")
    floor = {k: statistics.median(r[k] for r in results["verify"]) for k in range(3)}
    for name, rows in results.items():
        wall, rss, cpu = (statistics.median(r[k] for r in rows) for k in range(3))
        print(f"  {name:<17} {wall:6.2f} s wall  {cpu:6.2f} s CPU  {rss / 1e6:7.1f} MB peak   "
              f"× verify: {wall / floor[0]:.2f} time, {cpu / floor[2]:.2f} CPU, {rss / floor[1]:.2f} memory")


if __name__ == "__main__":
    main()
