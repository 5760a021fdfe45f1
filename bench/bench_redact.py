"""Redaction cost, in one run: record overhead per model call with a 20-rule policy against none, and `scan`
throughput (MB/s) on a large cassette next to one `verify` of the same file.

    python bench/bench_redact.py [--calls 300] [--mb 150] [--repeat 3]

The recorder runs as a session would drive it (a model step of a growing conversation, then the turn's tool
call and result); only the redactor differs.  Figures are medians of `--repeat` rounds, interleaved.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from blackbox.format.cassette import StepChain
from blackbox.format.secrets import Secrets
from blackbox.format.verify import verify
from blackbox.format.writing import atomic_write, dumps
from blackbox.live.recorder import Recorder
from blackbox.live.scan import scan_paths, scanner_for
from blackbox.providers.neutral import CallIds
from blackbox.redaction.apply import Redactor
from blackbox.redaction.policy import policy_from_table

TEXT = ("The customer wrote from a phone at the airport; the booking for two nights failed twice and the agent "
        "retried with the corporate rate. ") * 4


def policy_20() -> Redactor:
    rules: list[dict[str, Any]] = [{"name": f"ticket-{i}", "action": "mask", "pattern": f"T{i}-[0-9]{{6}}"}
                                   for i in range(8)]
    rules += [{"name": "crm-notes", "action": "drop", "tool": "crm_*", "path": "notes"},
              {"name": "session", "action": "mask", "header": "x-session"},
              {"name": "loopback", "action": "keep", "pattern": r"127\.0\.0\.1"}]
    table = {"rules": rules, "detectors": ["private-key", "url-credentials", "jwt", "credential", "cloud-key",
                                           "email", "card", "phone", "ip"]}
    redactor = Redactor(policy_from_table(table, "bench"), b"k" * 32, "bench")
    assert len(redactor.policy.rules) == 20
    return redactor


def record_run(folder: Path, calls: int, redactor: Redactor | None) -> float:
    """Seconds per model call (with its tool round) over `calls` calls."""
    rec = Recorder(folder / "run.json", "run", 0, CallIds(), secrets=Secrets.known(), journal=False, redactor=redactor)
    messages: list[dict[str, Any]] = [{"role": "user", "content": TEXT + " mail ops@example.com"}]
    tools = [{"name": "crm_lookup", "description": "Look up a customer.", "inputSchema": {"type": "object"}}]
    start = time.perf_counter()
    for i in range(calls):
        model_input = {"messages": list(messages[-12:]), "tools": tools, "model": "claude-sonnet-4-6"}
        output = {"type": "tool_calls", "calls": [{"toolCallId": f"call-{i}", "toolName": "crm_lookup",
                                                   "toolInput": {"id": f"T3-{i:06d}"}}]}
        rec.model_step(model_input, i, output, i)  # type: ignore[arg-type]
        slot = rec.tool_started("crm_lookup", {"id": f"T3-{i:06d}"}, i)
        result = {"name": "Ada", "notes": "prefers e-mail", "phone": "+1 415 555 0100", "text": TEXT}
        rec.tool_finished(slot, {"result": result}, i)
        messages += [{"role": "assistant", "content": [{"type": "tool_use", "toolCallId": f"call-{i}",
                                                        "toolName": "crm_lookup", "toolInput": {"id": i}}]},
                     {"role": "user", "content": [{"type": "tool_result", "toolCallId": f"call-{i}",
                                                   "toolName": "crm_lookup", "result": result}]}]
    return (time.perf_counter() - start) / calls


def big_cassette(path: Path, mb: int) -> int:
    """Tool rounds whose results are 40 rows of text, every string different (no cache helps the scan)."""
    chain = StepChain("big")
    size = 0
    i = 0
    while size < mb * 1_000_000:
        result = {"rows": [{"id": n, "note": f"{TEXT} (row {i}.{n})", "seen": "2026-12-03T12:00:00Z"}
                           for n in range(40)]}
        payload = {"toolCallId": f"call-{i}", "toolName": "search", "result": result}
        chain.append("tool_result" if i % 2 else "tool_call", i, payload if i % 2 else
                     {"toolCallId": f"call-{i}", "toolName": "search", "toolInput": {"q": TEXT[:80]}})
        size += 40 * (len(TEXT) + 60) if i % 2 else 200
        i += 1
    data = dumps(chain.cassette(0))
    atomic_write(path, data)
    return len(data)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--mb", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    redactor = policy_20()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain, redacted = [], []
        for _ in range(args.repeat):
            plain.append(record_run(folder, args.calls, None))
            redacted.append(record_run(folder, args.calls, redactor))
        p, r = statistics.median(plain), statistics.median(redacted)
        print(f"record, per model call with its tool round ({args.calls} calls, a 12-message window):")
        print(f"  no policy       {p * 1e3:8.3f} ms")
        print(f"  20-rule policy  {r * 1e3:8.3f} ms   overhead {(r - p) * 1e3:.3f} ms/call ({r / p:.2f}x)")

        path = folder / "big.json"
        size = big_cassette(path, args.mb)
        scanner = scanner_for(redactor, env={})
        verify_s, scan_s = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            assert verify(path).ok
            verify_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            result = scan_paths([path], scanner)
            scan_s.append(time.perf_counter() - t)
        v, s = statistics.median(verify_s), statistics.median(scan_s)
        print(f"a {size / 1e6:.0f} MB cassette ({len(result.hits)} hits):")
        print(f"  verify          {v:8.2f} s   {size / 1e6 / v:7.1f} MB/s")
        print(f"  scan            {s:8.2f} s   {size / 1e6 / s:7.1f} MB/s   ({s / v:.2f}x one verify)")


if __name__ == "__main__":
    main()
