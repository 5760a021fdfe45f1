"""Benchmark of `blackbox import --from claude-code` on a large generated session, against a floor.

Run: `python bench/bench_import.py [--lines 100000] [--turns 150] [--seed 7]`.

It writes a realistic Claude Code session: the main conversation's assistant turns split into one line per block
(thinking, text, each tool_use), tool results of a few KB (JSON and plain text, some errors, each duplicated in
`toolUseResult` as Claude Code does), some parallel calls, subagent (Task) work on `isSidechain` lines, and the
`progress` and `file-history-snapshot` lines that fill real session files.  Every model_input of a cassette
holds the whole conversation so far, so the cassette grows with the square of the main conversation's turns:
`--turns` sets that, and the rest of `--lines` is lines the import must read and skip.

Each measurement runs in a fresh process started by a small wrapper that reports its child's wall time and peak
RSS (`resource.getrusage(RUSAGE_CHILDREN)`), so one run's peak never hides another's.  The floor, measured in
the same run, is a process that msgspec-decodes every line of the file: the least any reader must do.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parent.parent
_PROSE = (
    "the checkout service reads tax rules from config and applies VAT per region before totals are shown "
    "naïve café Zürich 東京 — “quoted” ✔ function return const let await import export 42 0.2"
)
WORDS = _PROSE.split()
TOOLS = ("Read", "Bash", "Grep", "Edit", "Glob", "WebFetch")

_WRAPPER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall": wall, "peak_mb": peak_kb / 1024, "code": proc.returncode,
                  "stderr": proc.stderr.decode(errors="replace")[-2000:]}))
"""

_FLOOR = """
import sys, msgspec
decoder = msgspec.json.Decoder()
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        if line.strip():
            decoder.decode(line)
"""

_READ_PASS = """
import sys
from blackbox.importers.claude_code import read_session
read_session(sys.argv[1])
"""


class _Writer:
    """Writes session lines with Claude Code's envelope fields and a steadily advancing clock."""

    def __init__(self, fh: Any, rng: random.Random) -> None:
        self.fh, self.rng = fh, rng
        self.count = 0
        self.clock = 1_790_000_000_000
        self.parent: str | None = None
        self.encoder = msgspec.json.Encoder()

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def line(self, kind: str, message: dict[str, Any] | None = None, *, sidechain: bool = False,
             **extra: Any) -> None:
        self.clock += self.rng.randint(50, 3000)
        seconds, millis = divmod(self.clock, 1000)
        iso = _iso(seconds, millis)
        uuid = f"{self.count:08x}-5e1f-4c1a-9d2b-{self.rng.getrandbits(48):012x}"
        event: dict[str, Any] = {"parentUuid": self.parent, "isSidechain": sidechain, "userType": "external",
                                 "cwd": "/home/dev/shop", "sessionId": "9c1d2e3f-bench", "version": "2.0.14",
                                 "gitBranch": "main", "type": kind, "uuid": uuid, "timestamp": iso}
        if message is not None:
            event["message"] = message
        event.update(extra)
        self.fh.write(self.encoder.encode(event) + b"\n")
        self.parent = uuid
        self.count += 1

    def user_text(self, text: str, *, sidechain: bool = False) -> None:
        self.line("user", {"role": "user", "content": text}, sidechain=sidechain)

    def tool_result(self, tool_id: str, *, sidechain: bool = False) -> None:
        size = self.rng.randint(1000, 5000)
        if self.rng.random() < 0.4:
            body = {"path": f"src/{self.words(1)}.ts", "lines": [self.words(12) for _ in range(size // 80)],
                    "rate": 0.2, "ok": True}
            content = json.dumps(body, ensure_ascii=False)
        else:
            content = "\n".join(self.words(12) for _ in range(size // 80))
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if self.rng.random() < 0.05:
            block["is_error"] = True
        self.line("user", {"role": "user", "content": [block]}, sidechain=sidechain,
                  toolUseResult={"stdout": content, "stderr": "", "interrupted": False})

    def turn(self, n: int, uses: int, *, final: bool = False, sidechain: bool = False) -> list[str]:
        """One model turn, one line per block; returns the tool_use ids."""
        message_id = f"msg_01{n:06d}Bench{self.rng.getrandbits(32):08x}"

        def assistant(block: dict[str, Any]) -> None:
            self.line("assistant", {"id": message_id, "type": "message", "role": "assistant",
                                    "model": "claude-sonnet-4-5", "content": [block],
                                    "stop_reason": "end_turn" if final else None, "stop_sequence": None,
                                    "usage": {"input_tokens": 4, "cache_read_input_tokens": 31000,
                                              "output_tokens": 120}},
                      sidechain=sidechain, requestId=f"req_011C{self.rng.getrandbits(40):010x}")

        if self.rng.random() < 0.6:
            assistant({"type": "thinking", "thinking": self.words(60), "signature": "Eq0B" + "x" * 200})
        assistant({"type": "text", "text": self.words(self.rng.randint(10, 60))})
        ids = []
        for k in range(uses):
            tool_id = f"toolu_01{n:06d}{k}{self.rng.getrandbits(40):010x}"
            ids.append(tool_id)
            tool_input = {"command": self.words(8), "description": self.words(6)} if k % 2 else \
                {"file_path": f"/home/dev/shop/src/{self.words(1)}.ts", "limit": 400}
            assistant({"type": "tool_use", "id": tool_id, "name": self.rng.choice(TOOLS), "input": tool_input})
        return ids

    def noise(self) -> None:
        """Lines the import reads and skips."""
        if self.rng.random() < 0.7:
            self.line("progress", None, data={"type": "bash_progress", "output": self.words(30)},
                      toolUseID=f"toolu_01{self.rng.getrandbits(40):010x}")
        else:
            self.line("file-history-snapshot", None, messageId="m", snapshot={
                "trackedFileBackups": {f"src/{self.words(1)}.ts": {"version": 3, "backupTime": "t"}}})


def _iso(seconds: int, millis: int) -> str:
    import datetime as dt

    moment = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


def generate(path: Path, lines: int, turns: int, seed: int) -> None:
    """A session of about `lines` lines whose main conversation has `turns` model turns."""
    rng = random.Random(seed)
    with path.open("wb") as fh:
        w = _Writer(fh, rng)
        w.user_text("Why does checkout fail for EU customers? " + w.words(40))
        budget_per_turn = max(0, (lines - turns * 6) // max(turns, 1))
        for n in range(turns):
            uses = rng.choice((1, 1, 1, 2, 3))
            ids = w.turn(n, uses)
            filler_end = w.count + budget_per_turn
            while w.count < filler_end:  # a subagent's work and progress while the tools run
                if rng.random() < 0.5:
                    side_ids = w.turn(100_000 + w.count, rng.choice((1, 2)), sidechain=True)
                    for tool_id in side_ids:
                        w.noise()
                        w.tool_result(tool_id, sidechain=True)
                else:
                    w.noise()
            for tool_id in rng.sample(ids, len(ids)):  # parallel results come back in any order
                w.tool_result(tool_id)
            if n % 40 == 39:
                w.user_text("Also check the " + w.words(10))
        w.turn(turns, 0, final=True)


def measure(argv: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    if result["code"] != 0:
        raise SystemExit(f"measured command failed ({result['code']}): {result['stderr']}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--turns", type=int, default=150, help="model turns of the main conversation")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--with-key", action="store_true",
                        help="set OPENAI_API_KEY (a key the session does not hold) so the import's key check runs")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    if args.with_key:
        env["OPENAI_API_KEY"] = "sk-proj-" + "".join(random.Random(args.seed).choices("abcdefXYZ0123456789", k=43))
    os.environ.clear()
    os.environ.update({**env, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)})
    with tempfile.TemporaryDirectory() as tmp:
        session, out = Path(tmp) / "session.jsonl", Path(tmp) / "session.json"
        generate(session, args.lines, args.turns, args.seed)
        os.sync()  # the import's fsync must not pay for flushing the generator's writes
        n_lines = sum(1 for _ in session.open("rb"))
        floor = measure([sys.executable, "-c", _FLOOR, str(session)])
        read = measure([sys.executable, "-c", _READ_PASS, str(session)])
        full = measure([sys.executable, "-m", "blackbox", "import", "--from", "claude-code", "--in", str(session),
                        "--out", str(out)])
        from blackbox.format.cassette import load

        steps = len(load(out).steps)
        in_mb, out_mb = session.stat().st_size / 1e6, out.stat().st_size / 1e6
    print(f"input   {n_lines:,} lines, {in_mb:,.1f} MB ({args.turns} main-conversation turns)")
    print(f"output  {steps:,} steps, {out_mb:,.1f} MB")
    print(f"{'':34}{'wall s':>9}{'× floor':>9}{'peak MB':>10}{'× floor':>9}")
    for name, r in (("floor: msgspec-decode every line", floor), ("read pass (read_session)", read),
                    ("blackbox import (CLI, verify, write)", full)):
        print(f"{name:34}{r['wall']:9.2f}{r['wall'] / floor['wall']:9.2f}{r['peak_mb']:10.1f}"
              f"{r['peak_mb'] / floor['peak_mb']:9.2f}")
    print(f"read throughput {in_mb / read['wall']:,.0f} MB/s (floor {in_mb / floor['wall']:,.0f} MB/s)")


if __name__ == "__main__":
    main()
