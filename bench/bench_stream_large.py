"""A long streamed answer and an endless run of pings: what recording costs against reading them plainly.

    python bench/bench_stream_large.py [--chars 1600000] [--delta 4] [--pings 200000] [--repeat 5]

The real `anthropic.Anthropic` client iterates `messages.create(stream=True)` over an `httpx2.Client` whose
innermost transport is an in-process network (`bench_stream.Network`: one event per chunk, as a server
flushes them), so the figures are the SDK's own cost and what Blackbox adds to it:

- **long answer**: `--chars` characters of text in `--delta`-character `text_delta` events (1.6 MB in 4
  characters: 400,000 events, ~45 MB of event stream). Plain: the SDK alone. Recorded: the same over
  `blackbox.session("record").http_client(...)`, the call assembled, normalized and recorded.
- **endless pings**: `--pings` `ping` events before a short answer (a server keeping a slow call alive).

Both variants of a case run interleaved round by round in one process (which goes first alternates), timed by
the process's CPU time (the network is in-process and one thread does everything, so other jobs on the shared
machine count less than in wall time).  The figure is the median of the rounds' ratios, each round's two runs
being close in time; the ratio of the best runs is printed beside it, and the load average before and after.
Session start and `finish()` are outside the clocks.  The ratio's goal is ≤ 1.1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx2
from bench_stream import Network, sdk

import blackbox


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def answer_stream(chars: int, delta: int, pings: int = 0) -> list[bytes]:
    """The Messages event stream of one text answer of `chars` characters in `delta`-character deltas, after
    `pings` ping events."""
    text = ("Lisbon in three days: Alfama, Belém, LX Factory; " * (chars // 49 + 1))[:chars]
    start = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "m", "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    chunks = [_event("message_start", {"type": "message_start", "message": start})]
    chunks += [_event("ping", {"type": "ping"})] * pings
    chunks.append(_event("content_block_start", {"type": "content_block_start", "index": 0,
                                                 "content_block": {"type": "text", "text": ""}}))
    chunks += [_event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta", "text": text[i : i + delta]}})
               for i in range(0, len(text), delta)]
    chunks.append(_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    chunks.append(_event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                           "stop_sequence": None}, "usage": {"output_tokens": chars // 4}}))
    chunks.append(_event("message_stop", {"type": "message_stop"}))
    return chunks


def read(call: Callable[[], Iterator[Any]]) -> float:
    """CPU time of the process (everything runs in its one thread, so other jobs on the machine do not
    count), from the call to the last event."""
    started = time.process_time()
    for _ in call():
        pass
    return time.process_time() - started


def plain(chunks: list[bytes]) -> float:
    return read(sdk("anthropic", httpx2.Client(transport=Network(chunks, 0))))


def recorded(chunks: list[bytes], out: Path) -> float:
    bb = blackbox.session("record", out=out)
    try:
        return read(sdk("anthropic", bb.http_client(transport=Network(chunks, 0))))
    finally:
        summary = bb.finish()
        assert summary.steps == 3, f"the call was not recorded ({summary})"


def compare(name: str, chunks: list[bytes], repeat: int, work: Path) -> float:
    """Plain and recorded, `repeat` rounds, alternating which goes first; the median of the rounds' ratios
    (each round's two runs close in time, so a burst of load on the shared machine hits both) and the ratio
    of the best runs.  Returns the median ratio."""
    size = sum(map(len, chunks))
    warm = answer_stream(40, 4, 2)
    plain(warm)  # warm the SDK's lazily built parsers, and Blackbox's
    recorded(warm, work / f"{name[:4]}-warm.json")
    plains, records = [], []
    for round_ in range(repeat):
        if round_ % 2:
            records.append(recorded(chunks, work / f"{name[:4]}-{round_}.json"))
            plains.append(plain(chunks))
        else:
            plains.append(plain(chunks))
            records.append(recorded(chunks, work / f"{name[:4]}-{round_}.json"))
    ratios = sorted(r / p for p, r in zip(plains, records, strict=True))
    median = statistics.median(ratios)
    print(f"{name}: {len(chunks):,} events, {size / 1e6:.1f} MB of event stream")
    print(f"  plain    best {min(plains):8.3f} s  median {statistics.median(plains):8.3f} s")
    print(f"  recorded best {min(records):8.3f} s  median {statistics.median(records):8.3f} s")
    print(f"  ratio: median of the rounds {median:.3f} (rounds {', '.join(f'{r:.3f}' for r in ratios)}); "
          f"best against best {min(records) / min(plains):.3f}; "
          f"+{(statistics.median(records) - statistics.median(plains)) / len(chunks) * 1e6:.2f} µs an event")
    return median


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=1_600_000)
    parser.add_argument("--delta", type=int, default=4)
    parser.add_argument("--pings", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-stream-large-"))
    print(f"load average {_load()} ({os.cpu_count()} cores)")
    long = compare(f"long answer ({args.chars:,} characters in {args.delta}-character deltas)",
                   answer_stream(args.chars, args.delta), args.repeat, work)
    pings = compare(f"endless pings ({args.pings:,} pings, then a 400-character answer)",
                    answer_stream(400, 7, args.pings), args.repeat, work)
    print(f"load average {_load()}; goal ≤ 1.1: long answer {long:.3f}, pings {pings:.3f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
