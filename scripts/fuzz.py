#!/usr/bin/env python3
"""Fuzz every reader of untrusted input for N minutes: `python scripts/fuzz.py --minutes 30`.

Each target in `fuzz/targets.py` runs in turn under atheris (coverage-guided) when it is installed, else under
the mutation fuzzer in `fuzz/mutate.py`; the time is shared equally.  The corpus starts from the fixtures in
tests/fixtures (and fuzz/regressions/) and grows in .fuzz/corpus/<target>/; a crashing input is saved in
.fuzz/crashes/<target>/ and the target restarts, so one bug does not end the run.  At the end a table (and
.fuzz/summary.json) says how many inputs each target tried and how many crashed.  Add a crashing input to
fuzz/regressions/<target>/ once it is fixed: every later run, and the short pass in CI, replays it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzz.mutate import mutations  # noqa: E402
from fuzz.targets import TARGETS, seeds  # noqa: E402

WORK = ROOT / ".fuzz"
_EXECUTED = re.compile(r"stat::number_of_executed_units:\s*(\d+)")
_DONE = re.compile(r"#(\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED)")


def _seed_corpus(target: str) -> Path:
    corpus = WORK / "corpus" / target
    corpus.mkdir(parents=True, exist_ok=True)
    for data in seeds(target):
        (corpus / hashlib.sha1(data).hexdigest()).write_bytes(data)
    return corpus


def _dictionary() -> Path:
    """A libFuzzer dictionary of the mutator's tokens (the planted key's forms, the deep-nesting markers, JSON's
    hostile bits), so the coverage-guided fuzzer inserts them as the mutation fuzzer does."""
    from fuzz.mutate import TOKENS

    def quoted(token: bytes) -> str:
        return "".join(chr(b) if 0x20 <= b < 0x7F and b not in b'"\\' else f"\\x{b:02x}" for b in token)

    path = WORK / "tokens.dict"
    WORK.mkdir(exist_ok=True)
    path.write_text("".join(f'token{i}="{quoted(t)}"\n' for i, t in enumerate(TOKENS) if t))
    return path


def _atheris(target: str, seconds: float, max_len: int) -> tuple[int, list[Path]]:
    """Run atheris on one target for `seconds`, restarting after each crash; (inputs tried, crash files)."""
    corpus = _seed_corpus(target)
    crashes_dir = WORK / "crashes" / target
    crashes_dir.mkdir(parents=True, exist_ok=True)
    executed, crashes = 0, []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 2:
        before = set(crashes_dir.iterdir())
        cmd = [sys.executable, "-m", "fuzz.atheris_main", target, str(corpus), f"-max_total_time={int(left)}",
               "-print_final_stats=1", f"-artifact_prefix={crashes_dir}/", "-rss_limit_mb=3072", "-timeout=20",
               f"-max_len={max_len}", "-close_fd_mask=3", f"-dict={_dictionary()}"]
        scratch = WORK / "tmp"  # libFuzzer exits without running atexit: the targets' scratch files go here
        scratch.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, errors="replace",
                              env={**os.environ, "TMPDIR": str(scratch)})
        log = done.stdout + done.stderr
        counts = [int(n) for n in _EXECUTED.findall(log)] or [int(n) for n in _DONE.findall(log)][-1:]
        executed += counts[-1] if counts else 0
        new = sorted(set(crashes_dir.iterdir()) - before)
        crashes += new
        if done.returncode == 0:
            break
        if not new:  # it died without saving an input: say why and stop this target
            print(f"  {target}: atheris exited {done.returncode}:\n{log[-3000:]}", file=sys.stderr)
            break
        print(f"  {target}: crash saved to {new[-1].relative_to(ROOT)}; restarting", file=sys.stderr)
        (WORK / "logs").mkdir(exist_ok=True)
        (WORK / "logs" / f"{new[-1].name}.log").write_text(log[-20000:])
    return executed, crashes


def _mutation(target: str, seconds: float) -> tuple[int, list[Path]]:
    """The dependency-free fuzzer, in process, until the time is up."""
    fn = TARGETS[target]
    crashes_dir = WORK / "crashes" / target
    executed, crashes, seed = 0, [], 0
    deadline = time.monotonic() + seconds
    corpus = seeds(target)
    while time.monotonic() < deadline:
        for data in mutations(corpus, 500, seed=seed):
            executed += 1
            try:
                fn(data)
            except Exception:  # any escape is what the fuzzer looks for
                crashes_dir.mkdir(parents=True, exist_ok=True)
                path = crashes_dir / f"crash-{hashlib.sha1(data).hexdigest()}"
                path.write_bytes(data)
                crashes.append(path)
        seed += 1
    return executed, crashes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="Total time, shared by the targets.")
    parser.add_argument("--targets", default=",".join(TARGETS), help="Comma-separated (default: all).")
    parser.add_argument("--engine", choices=("auto", "atheris", "mutate"), default="auto")
    parser.add_argument("--max-len", type=int, default=16384, help="Largest input atheris makes (bytes).")
    args = parser.parse_args()
    names = [t for t in args.targets.split(",") if t]
    unknown = [t for t in names if t not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; pick from {', '.join(TARGETS)}")
    engine = args.engine
    if engine == "auto":
        engine = "atheris" if importlib.util.find_spec("atheris") else "mutate"
    share = args.minutes * 60 / len(names)
    summary: dict[str, dict[str, object]] = {}
    started = time.monotonic()
    for name in names:
        t0 = time.monotonic()
        if engine == "atheris":
            executed, crashes = _atheris(name, share, args.max_len)
        else:
            executed, crashes = _mutation(name, share)
        summary[name] = {"inputs": executed, "crashes": [str(p.relative_to(ROOT)) for p in crashes],
                         "seconds": round(time.monotonic() - t0, 1)}
        print(f"{name:<14} {executed:>10,} inputs  {len(crashes)} crash(es)  {summary[name]['seconds']} s",
              flush=True)
    total = sum(int(s["inputs"]) for s in summary.values())  # type: ignore[call-overload]
    found = sum(len(s["crashes"]) for s in summary.values())  # type: ignore[arg-type]
    WORK.mkdir(exist_ok=True)
    (WORK / "summary.json").write_text(json.dumps({"engine": engine, "targets": summary, "inputs": total,
                                                   "crashes": found,
                                                   "seconds": round(time.monotonic() - started, 1)}, indent=2))
    print(f"total: {total:,} inputs, {found} crash(es), engine {engine}; details in .fuzz/summary.json")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
