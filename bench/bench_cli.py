"""Benchmark of the command line as CI and people run it: whole processes, against msgspec floors.

Run: `python bench/bench_cli.py [--steps 10000] [--repeat 7]`.

Each measurement is a fresh `python -m blackbox …` process (wall time from the parent, peak RSS of that child
from `os.wait4`).  The floors, measured in the same run and interleaved with the commands round by round (so
a burst of load from other jobs on the shared machine hits all of them alike), are processes that import
msgspec, decode the file and SHA-256 `msgspec.json.encode(step, order="sorted")` of each step: the least
work any verifier must do, start-up included.  Figures are medians of `--repeat` rounds.

- `blackbox --help` and verify/assert of the 15-step demo fixture, against the floor on that fixture;
- verify, inspect (rows written to /dev/null) and diff of `--steps`-step files (a tool result changed near
  the end, re-chained), against the floor on the larger file; diff's memory also against the two files.
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
SMALL = ROOT / "tests" / "fixtures" / "traces" / "success-tool-use.v2.json"
FLOOR = ("import hashlib, sys, msgspec\n"
         "doc = msgspec.json.decode(open(sys.argv[1], 'rb').read())\n"
         "for step in doc['steps']:\n"
         "    hashlib.sha256(msgspec.json.encode(step, order='sorted')).hexdigest()\n")
BLACKBOX = [sys.executable, "-m", "blackbox"]
GENERATE = ("import sys\nfrom pathlib import Path\nsys.path[:0] = ['bench', '.']\n"
            "from bench_core import _changed_copy, make_cassette\nfrom blackbox.format.cassette import save\n"
            "c = make_cassette(int(sys.argv[1]))\nsave(c, Path(sys.argv[2]))\n_changed_copy(c, Path(sys.argv[3]))\n")
# What the issue measured for the original TypeScript tool (and for Blackbox before this round).
ORIGINAL = {"help": "0.088 s", "inspect": "2.16 s", "diff": "Blackbox before: 654 MB peak for two 62 MB files"}


def run(argv: list[str]) -> tuple[float, int, float]:
    """(seconds, peak RSS bytes, CPU seconds) of one process; its output goes to /dev/null.  CPU time (user +
    system) is the steadier figure on a loaded machine: waiting for a core does not count.  An argv starting with
    `@DIR` runs with DIR's blackbox (an older checkout) instead of this one."""
    root = ROOT
    if argv[0].startswith("@"):
        root, argv = Path(argv[0][1:]), argv[1:]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(root)}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=root)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return seconds, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def medians(cases: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, int, float]]:
    """Median time, peak memory and CPU time of each case, the cases interleaved round by round."""
    runs: dict[str, list[tuple[float, int, float]]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, argv in cases.items():
            runs[name].append(run(argv))
    return {name: (statistics.median(t for t, _, _ in rs), int(statistics.median(m for _, m, _ in rs)),
                   statistics.median(c for _, _, c in rs)) for name, rs in runs.items()}


def report(title: str, results: dict[str, tuple[float, int, float]], floor: str, extra: dict[str, str]) -> None:
    floor_t, floor_m, floor_c = results[floor]
    print(f"\n{title} (load average {os.getloadavg()[0]:.1f})")
    for name, (secs, rss, cpu) in results.items():
        ratio = "" if name == floor else (f"{secs / floor_t:5.2f}× floor time  {cpu / floor_c:5.2f}× floor CPU  "
                                          f"{rss / floor_m:5.2f}× floor memory")
        print(f"  {name:18s} {secs:7.3f} s (CPU {cpu:6.3f} s) {rss / 2**20:5.0f} MB   {ratio}  {extra.get(name, '')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--before", type=Path, help="a checkout of an earlier commit: its commands run too, "
                        "interleaved, labelled 'before'")
    parser.add_argument("--small-only", action="store_true", help="only the start-up cases (no large files)")
    args = parser.parse_args()
    before = [f"@{args.before.resolve()}"] if args.before else None
    small = {
        "python": [sys.executable, "-c", "pass"],
        "floor": [sys.executable, "-c", FLOOR, str(SMALL)],
        "--help": [*BLACKBOX, "--help"],
        "verify": [*BLACKBOX, "verify", str(SMALL)],
        "assert": [*BLACKBOX, "assert", str(SMALL), "--expect-status", "success", "--expect-tools",
                   "search,calendar,booking"],
        "verify --help": [*BLACKBOX, "verify", "--help"],
        "record --help": [*BLACKBOX, "record", "--help"],
        "list": [*BLACKBOX, "list", str(SMALL.parent)],
    }
    if before:
        small.update({f"{name} before": [*before, *small[name]]
                      for name in ("--help", "verify", "verify --help", "record --help", "list")})
    report(f"start-up: the {SMALL.name} fixture (15 steps); median of {args.repeat}", medians(small, args.repeat),
           "floor", {"--help": f"(original {ORIGINAL['help']})"})
    if args.small_only:
        return
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        a, b = Path(tmp) / "run.json", Path(tmp) / "run-changed.json"
        # Generated in a child, so that this process stays small: a child's peak RSS starts from its parent's.
        subprocess.run([sys.executable, "-c", GENERATE, str(args.steps), str(a), str(b)], check=True, cwd=ROOT)
        sizes = a.stat().st_size + b.stat().st_size
        print(f"\n{args.steps} steps: {a.stat().st_size / 1e6:.1f} MB + {b.stat().st_size / 1e6:.1f} MB "
              f"(generated in {time.perf_counter() - t:.1f} s)")
        big = {
            "floor": [sys.executable, "-c", FLOOR, str(a)],
            "verify": [*BLACKBOX, "verify", str(a)],
            "inspect": [*BLACKBOX, "inspect", str(a)],
            "diff": [*BLACKBOX, "diff", str(a), str(b)],
        }
        if before:
            big.update({f"{name} before": [*before, *big[name]] for name in ("inspect", "diff")})
        results = medians(big, args.repeat)
        diff_mem = results["diff"][1] / sizes
        report(f"{args.steps} steps; median of {args.repeat}", results, "floor",
               {"inspect": f"(original {ORIGINAL['inspect']})",
                "diff": f"{diff_mem:.2f}× the two files; {results['diff'][0] / results['verify'][0]:.2f}× verify "
                        f"({ORIGINAL['diff']})"})


if __name__ == "__main__":
    main()
