"""Record and replay overhead per model call, this checkout against another, in one sitting.

    python bench/bench_session_ab.py --before /path/to/other/checkout [--pairs 3] [--batches 80] [--size 40]

`bench_session.py` times wall clock, which a shared 2-core machine makes noisy; comparing two versions of the
live wing needs them measured side by side.  Each checkout runs in its own process (its `blackbox` imported
from its own tree), the two alternating, `--pairs` times each.  A process times batches of `--size` baseline,
record and replay calls interleaved (their order turning every batch), by CPU time (`time.process_time`, robust
to other load), and gives two overheads per variant: the median over the batches of the variant's batch less
the baseline batch next to it (pairwise, so a slow stretch of the machine cancels out), and the 10th
percentile of the variant's batches less the baseline's.  The summary gives each checkout's median over its
processes and their range (the run's spread), and the difference now − before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PROVIDERS = ("anthropic", "openai")
FIGURES = ("record", "replay", "record p10", "replay p10")


def measure(root: Path, batches: int, size: int) -> None:
    """In this process: `root`'s blackbox over `root`'s bench_session canned transports; one JSON line out."""
    sys.path[:0] = [str(root), str(root / "bench")]
    import bench_session as bench
    import httpx2

    import blackbox

    assert blackbox.__file__ is not None and blackbox.__file__.startswith(str(root)), blackbox.__file__
    clock = time.process_time
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for provider in PROVIDERS:
            out = Path(tmp) / f"{provider}-r.json"
            bb = blackbox.session("record", out=out)
            call = bench.caller(provider, bb.http_client(transport=bench.canned(provider)))
            for _ in range(batches * size + 10):
                call()
            bb.finish(result="done")
            record = blackbox.session("record", out=Path(tmp) / f"{provider}.json")
            replay = blackbox.session("replay", cassette=out)
            callers = {
                "baseline": bench.caller(provider, httpx2.Client(transport=bench.canned(provider))),
                "record": bench.caller(provider, record.http_client(transport=bench.canned(provider))),
                "replay": bench.caller(provider, replay.http_client(transport=bench.canned(provider))),
            }
            for c in callers.values():  # warm up; replay consumes the 10 extra recorded calls
                for _ in range(10):
                    c()
            times: dict[str, list[float]] = {name: [] for name in callers}
            names = list(callers)
            for i in range(batches):
                for name in names[i % 3:] + names[:i % 3]:
                    c = callers[name]
                    start = clock()
                    for _ in range(size):
                        c()
                    times[name].append((clock() - start) / size)
            record.finish(result="done")
            replay.finish(result="done")
            base = times["baseline"]
            p10 = {name: sorted(v)[len(v) // 10] for name, v in times.items()}
            figures[provider] = {"baseline": p10["baseline"]}
            for name in ("record", "replay"):
                figures[provider][name] = statistics.median(v - b for v, b in zip(times[name], base, strict=True))
                figures[provider][f"{name} p10"] = p10[name] - p10["baseline"]
            mine = {name: value * 1e3 for name, value in figures[provider].items()}
            print(f"  {provider}: baseline {mine['baseline']:.3f} ms/call; record +{mine['record']:.3f} ms "
                  f"(p10 − p10 +{mine['record p10']:.3f}), replay +{mine['replay']:.3f} ms "
                  f"(+{mine['replay p10']:.3f})", file=sys.stderr, flush=True)
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="another checkout of this project")
    parser.add_argument("--pairs", type=int, default=3, help="processes of each checkout, alternating")
    parser.add_argument("--batches", type=int, default=80)
    parser.add_argument("--size", type=int, default=40)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        measure(args.measure, args.batches, args.size)
        return
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    runs: dict[str, list[dict[str, dict[str, float]]]] = {"before": [], "now": []}
    for _ in range(args.pairs):
        for label, root in (("before", args.before.resolve()), ("now", HERE)):
            print(f"{label} ({root}):", flush=True)
            done = subprocess.run([sys.executable, __file__, "--before", str(args.before), "--measure", str(root),
                                   "--batches", str(args.batches), "--size", str(args.size)],
                                  check=True, stdout=subprocess.PIPE, text=True)
            runs[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"summary, ms per call: median of {args.pairs} processes each [their range]; now − before")
    for provider in PROVIDERS:
        for figure in FIGURES:
            cells = {}
            for label in ("before", "now"):
                values = [run[provider][figure] * 1e3 for run in runs[label]]
                cells[label] = (statistics.median(values), min(values), max(values))
            (b, b_lo, b_hi), (n, n_lo, n_hi) = cells["before"], cells["now"]
            print(f"  {provider:9s} {figure:10s} before +{b:.3f} [{b_lo:.3f}–{b_hi:.3f}]  now +{n:.3f} "
                  f"[{n_lo:.3f}–{n_hi:.3f}]  now − before {n - b:+.3f}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
