"""Record and replay overhead per model call, this checkout against another, in one sitting.

    python bench/bench_session_ab.py --before /path/to/other/checkout [--batches 80] [--size 40]

`bench_session.py` times wall clock, which a shared 2-core machine makes noisy; comparing two versions of the
live wing needs them measured side by side.  Each checkout runs in its own process (its `blackbox` imported
from its own tree), alternating, twice; each process times batches of baseline, record and replay calls
interleaved, by CPU time (`time.process_time`, robust to other load), and reports the 10th percentile of each,
so the overheads (record − baseline, replay − baseline) are comparable across the two checkouts.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def measure(root: Path, batches: int, size: int) -> None:
    """In this process: `root`'s blackbox over `root`'s bench_session canned transports."""
    sys.path[:0] = [str(root), str(root / "bench")]
    import bench_session as bench
    import httpx2

    import blackbox

    assert blackbox.__file__ is not None and blackbox.__file__.startswith(str(root)), blackbox.__file__
    clock = time.process_time
    with tempfile.TemporaryDirectory() as tmp:
        for provider in ("anthropic", "openai"):
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
            for _ in range(batches):
                for name, c in callers.items():
                    start = clock()
                    for _ in range(size):
                        c()
                    times[name].append((clock() - start) / size)
            p10 = {name: sorted(v)[len(v) // 10] for name, v in times.items()}
            record.finish(result="done")
            replay.finish(result="done")
            print(f"  {provider}: baseline {p10['baseline'] * 1e3:.3f} ms/call, record "
                  f"+{(p10['record'] - p10['baseline']) * 1e3:.3f} ms, replay "
                  f"+{(p10['replay'] - p10['baseline']) * 1e3:.3f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="another checkout of this project")
    parser.add_argument("--batches", type=int, default=80)
    parser.add_argument("--size", type=int, default=40)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        measure(args.measure, args.batches, args.size)
        return
    for _ in range(2):
        for label, root in (("before", args.before.resolve()), ("this checkout", HERE)):
            print(f"{label} ({root}):", flush=True)
            subprocess.run([sys.executable, __file__, "--before", str(args.before), "--measure", str(root),
                            "--batches", str(args.batches), "--size", str(args.size)], check=True)


if __name__ == "__main__":
    main()
