"""Benchmark of `blackbox import --from codex` on a 10,000-record rollout, next to `--from claude-code` on a
Claude Code session of the same size, in one run, each against its own floor.

Run: `python bench/bench_import_agents.py [--records 10000] [--turns 150] [--seed 7]`.

Both files hold `--records` lines and the same conversation: `--turns` model turns of one to three tool calls with
results of a few KB.  The Codex rollout has its record mix (turn_context, reasoning, assistant messages,
function_call and custom_tool_call items and their outputs, and the event_msg lines that repeat them for the UI:
token counts, reasoning, command ends), one compaction half way; the Claude Code session is `bench_import.py`'s
(one line per block, sidechain and progress lines).  Every model_input holds the conversation so far, so the
cassettes grow with the square of `--turns`.

Each measurement is a fresh process started by the wrapper of `bench_import.py` (wall time, peak RSS of the child).
The floor of each file, measured in the same run, is a process that msgspec-decodes every line of it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_import import _FLOOR, ROOT, WORDS, measure  # the sibling benchmark's wrapper and floor
from bench_import import generate as generate_claude

_READ_PASS = """
import sys
from blackbox.importers.codex import read_rollout
read_rollout(sys.argv[1])
"""


class _Rollout:
    def __init__(self, fh: Any, rng: random.Random) -> None:
        self.fh, self.rng = fh, rng
        self.count = 0
        self.clock = 1_790_000_000_000
        self.encoder = msgspec.json.Encoder()
        self.calls = 0

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def record(self, kind: str, payload: dict[str, Any]) -> None:
        import datetime as dt

        self.clock += self.rng.randint(50, 3000)
        seconds, millis = divmod(self.clock, 1000)
        iso = dt.datetime.fromtimestamp(seconds, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"
        self.fh.write(self.encoder.encode({"timestamp": iso, "type": kind, "payload": payload}) + b"\n")
        self.count += 1

    def output(self) -> str:
        size = self.rng.randint(1000, 5000)
        text = "\n".join(self.words(12) for _ in range(size // 80))
        code = 1 if self.rng.random() < 0.05 else 0
        return json.dumps({"output": text, "metadata": {"exit_code": code, "duration_seconds": 0.4}},
                          ensure_ascii=False)

    def noise(self) -> None:
        """event_msg lines: the UI's copy of what the items say, read and dropped."""
        kind = self.rng.random()
        if kind < 0.5:
            self.record("event_msg", {"type": "token_count", "info": {"total_token_usage": {
                "input_tokens": 31000 + self.count, "cached_input_tokens": 30000, "output_tokens": 120,
                "total_tokens": 31120 + self.count}}, "rate_limits": {"primary": {"used_percent": 12.0}}})
        elif kind < 0.8:
            self.record("event_msg", {"type": "agent_reasoning", "text": self.words(40)})
        else:
            self.record("event_msg", {"type": "exec_command_end", "call_id": f"call_{self.calls:06d}",
                                      "stdout": self.words(60), "stderr": "", "exit_code": 0})

    def turn(self) -> None:
        self.record("response_item", {"type": "reasoning", "summary": [{"type": "summary_text",
                                                                        "text": self.words(8)}],
                                      "encrypted_content": "gAAAAAB" + "x" * 400})
        if self.rng.random() < 0.5:
            self.record("response_item", {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": self.words(self.rng.randint(10, 60))}]})
        ids = []
        for _ in range(self.rng.choice((1, 1, 1, 2, 3))):
            self.calls += 1
            call_id = f"call_{self.calls:06d}{self.rng.getrandbits(64):016x}"
            ids.append(call_id)
            if self.rng.random() < 0.25:
                self.record("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call_id,
                                              "name": "apply_patch", "input": "*** Begin Patch\n*** Update File: "
                                              f"src/{self.words(1)}.ts\n@@\n-{self.words(6)}\n+{self.words(6)}\n"
                                              "*** End Patch\n"})
            else:
                self.record("response_item", {"type": "function_call", "name": "shell", "call_id": call_id,
                                              "arguments": json.dumps({"command": ["bash", "-lc", self.words(8)],
                                                                       "workdir": "/home/dev/shop"})})
        for call_id in ids:
            kind = "custom_tool_call_output" if self.rng.random() < 0.25 else "function_call_output"
            self.record("response_item", {"type": kind, "call_id": call_id, "output": self.output()})


def generate_codex(path: Path, records: int, turns: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("wb") as fh:
        w = _Rollout(fh, rng)
        w.record("session_meta", {"id": "019a0000-bench", "cwd": "/home/dev/shop", "originator": "codex_cli_rs",
                                  "cli_version": "0.63.0", "model_provider": "openai"})
        w.record("turn_context", {"cwd": "/home/dev/shop", "approval_policy": "on-request", "model": "gpt-5-codex"})
        w.record("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Why does checkout fail for EU customers? " + w.words(40)}]})
        budget = max(0, (records - turns * 6 - 10) // max(turns, 1))
        for n in range(turns):
            w.turn()
            for _ in range(budget):
                w.noise()
            if n == turns // 2:
                w.record("compacted", {"message": "Summary so far: " + w.words(200)})
        while w.count < records - 1:
            w.noise()
        w.record("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Done: " + w.words(30)}]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=150, help="model turns of the conversation, in both files")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--with-key", action="store_true",
                        help="set OPENAI_API_KEY (a key the sessions do not hold) so the imports' key check runs")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    if args.with_key:  # a key the sessions do not hold: the imports' key check then searches for it
        env["OPENAI_API_KEY"] = "sk-proj-" + "".join(random.Random(args.seed).choices("abcdefXYZ0123456789", k=43))
    os.environ.clear()
    os.environ.update({**env, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)})
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {"codex": Path(tmp) / "rollout.jsonl", "claude-code": Path(tmp) / "session.jsonl"}
        generate_codex(files["codex"], args.records, args.turns, args.seed)
        generate_claude(files["claude-code"], args.records, args.turns, args.seed)
        os.sync()
        from blackbox.format.cassette import load

        for source in ("codex", "claude-code"):  # interleaved in one run, so both see the same machine
            path, out = files[source], Path(tmp) / f"{source}.json"
            floor = measure([sys.executable, "-c", _FLOOR, str(path)])
            full = measure([sys.executable, "-m", "blackbox", "import", "--from", source, "--in", str(path),
                            "--out", str(out)])
            read = measure([sys.executable, "-c", _READ_PASS, str(path)]) if source == "codex" else None
            lines = sum(1 for _ in path.open("rb"))
            rows.append((source, lines, path.stat().st_size / 1e6, len(load(out).steps), out.stat().st_size / 1e6,
                         floor, read, full))
    print(f"{'':40}{'records':>9}{'in MB':>8}{'steps':>7}{'out MB':>8}{'wall s':>8}{'× floor':>9}{'peak MB':>9}"
          f"{'× floor':>9}")
    for source, lines, in_mb, steps, out_mb, floor, read, full in rows:
        for name, r in ((f"{source}: floor (msgspec every line)", floor), (f"{source}: read pass", read),
                        (f"{source}: blackbox import", full)):
            if r is None:
                continue
            print(f"{name:40}{lines:9,}{in_mb:8.1f}{steps:7,}{out_mb:8.1f}{r['wall']:8.2f}"
                  f"{r['wall'] / floor['wall']:9.2f}{r['peak_mb']:9.1f}{r['peak_mb'] / floor['peak_mb']:9.2f}")
    codex, claude = rows[0][-1], rows[1][-1]
    print(f"codex import / claude-code import: {codex['wall'] / claude['wall']:.2f}× the time, "
          f"{codex['peak_mb'] / claude['peak_mb']:.2f}× the peak memory")


if __name__ == "__main__":
    main()
