"""Streamed calls: what recording (the tee) and replay (the synthesized stream) cost, against the SDK alone.

    python bench/bench_stream.py [--calls 200] [--gap-ms 2] [--repeat 3] [--provider anthropic openai responses]

Every variant drives the real SDK's `create(stream=True)` and iterates its events, over an `httpx2.Client`
whose innermost transport is an in-process fake network answering with the provider's event stream for one
answer (~400 characters of text, cut in 7-character deltas as the APIs stream it: ~60 events), so the figures
are the SDK's own cost and what Blackbox adds to it:

- **latency** (`--gap-ms` between events, like a model generating): time from the call to the first event
  reaching the agent (this includes the request side: Blackbox normalizes the request before sending it),
  the time from the network handing over the first chunk to the agent holding the first event (the tee's
  own latency), and the time to the last event, for the SDK alone and while recording
  (`blackbox.session("record")`, crash journal on). The tee hands each chunk on as it arrives, so the
  first-chunk ratio should be ≈ 1.0 and far below the whole stream's time.
- **overhead** (no gap): total time per streamed call, alone and recording; the difference divided by the
  number of network chunks is the per-chunk cost of the tee (decode, SSE parse, assemble) plus, once per call,
  normalizing and recording the two steps.
- **replay**: a replay session answering every streamed request from a cassette (the synthesized stream),
  against the SDK parsing the same canned stream through a do-nothing transport.

The variants run interleaved, round by round, and the best of `--repeat` rounds counts (the machine is shared).
Session start and `finish()` are outside the clocks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2

import blackbox
from tests.fakeapi import anthropic_message, chat_completion, response_object, stream_reply

ANSWER = ("Day 1: Alfama and tram 28, lunch at a tasca by the river. Day 2: Belém, the monastery and the "
          "Gulbenkian museum. Day 3: LX Factory, a market lunch and the sunset at a miradouro. ") * 2
USER = [{"role": "user", "content": "Plan three days in Lisbon."}]
BASE_URLS = {"anthropic": "http://bench.invalid", "openai": "http://bench.invalid/v1",
             "responses": "http://bench.invalid/v1"}


SENT = [0.0]  # when the network side handed over the first chunk of the current call


class Events(httpx2.SyncByteStream):
    """The network side of one streamed response: the chunks, `gap` seconds apart."""

    def __init__(self, chunks: list[bytes], gap: float) -> None:
        self.chunks = chunks
        self.gap = gap

    def __iter__(self) -> Iterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if index and self.gap:
                time.sleep(self.gap)
            if not index:
                SENT[0] = time.perf_counter()
            yield chunk


class Network(httpx2.BaseTransport):
    """Every request gets the same event stream."""

    def __init__(self, chunks: list[bytes], gap: float) -> None:
        self.chunks = chunks
        self.gap = gap

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=[("content-type", "text/event-stream")],
                               stream=Events(self.chunks, self.gap), request=request)


def chunks_for(provider: str) -> list[bytes]:
    body = {"anthropic": lambda: anthropic_message(text=ANSWER, model="m"),
            "openai": lambda: chat_completion(content=ANSWER, model="m"),
            "responses": lambda: response_object(text=ANSWER, model="m")}[provider]()
    chunks = stream_reply(body, pings=False).chunks
    assert chunks is not None
    return chunks


def sdk(provider: str, http: Any) -> Callable[[], Iterator[Any]]:
    """A function making one streamed call and returning its event iterator."""
    import anthropic
    import openai

    if provider == "anthropic":
        client: Any = anthropic.Anthropic(base_url=BASE_URLS[provider], api_key="bench", http_client=http,
                                          max_retries=0)
        return lambda: iter(client.messages.create(model="m", max_tokens=500, messages=USER, stream=True))
    client = openai.OpenAI(base_url=BASE_URLS[provider], api_key="bench", http_client=http, max_retries=0)
    if provider == "openai":
        return lambda: iter(client.chat.completions.create(model="m", messages=USER, stream=True))
    return lambda: iter(client.responses.create(model="m", input="Plan three days in Lisbon.", stream=True))


def timed(call: Callable[[], Iterator[Any]], calls: int) -> tuple[float, float, float]:
    """Means over `calls` streamed calls: (time to the first event, to the last event, and from the network
    handing over the first chunk to the agent holding the first event)."""
    for _ in call():  # warm the SDK's lazily built parsers
        pass
    first = total = passed = 0.0
    for _ in range(calls):
        started = time.perf_counter()
        events = call()
        next(events)
        now = time.perf_counter()
        first += now - started
        passed += now - SENT[0]
        for _ in events:
            pass
        total += time.perf_counter() - started
    return first / calls, total / calls, passed / calls


def alone(provider: str, chunks: list[bytes], gap: float, calls: int) -> tuple[float, float, float]:
    return timed(sdk(provider, httpx2.Client(transport=Network(chunks, gap))), calls)


def recording(provider: str, chunks: list[bytes], gap: float, calls: int, out: Path) -> tuple[float, float, float]:
    bb = blackbox.session("record", out=out)
    try:
        return timed(sdk(provider, bb.http_client(transport=Network(chunks, gap))), calls)
    finally:
        bb.finish()


def replaying(provider: str, cassette: Path, calls: int) -> float:
    bb = blackbox.session("replay", cassette=cassette)
    try:
        return timed(sdk(provider, bb.http_client()), calls)[1]
    finally:
        bb.finish()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--latency-calls", type=int, default=20)
    parser.add_argument("--gap-ms", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--provider", nargs="+", default=["anthropic", "openai", "responses"])
    args = parser.parse_args()
    gap = args.gap_ms / 1000
    work = Path(tempfile.mkdtemp(prefix="bench-stream-"))
    for provider in args.provider:
        chunks = chunks_for(provider)
        cassette = work / f"{provider}.json"
        best: dict[str, float] = {}

        def keep(name: str, value: float, best: dict[str, float] = best) -> None:
            best[name] = min(best.get(name, value), value)

        for round_ in range(args.repeat):
            first, last, passed = alone(provider, chunks, gap, args.latency_calls)
            keep("alone first", first)
            keep("alone total", last)
            keep("alone passed", passed)
            first, last, passed = recording(provider, chunks, gap, args.latency_calls, work / f"lat-{round_}.json")
            keep("record first", first)
            keep("record total", last)
            keep("record passed", passed)
            keep("alone nogap", alone(provider, chunks, 0, args.calls)[1])
            keep("record nogap", recording(provider, chunks, 0, args.calls, cassette)[1])
            keep("replay", replaying(provider, cassette, args.calls))
        per_chunk = (best["record nogap"] - best["alone nogap"]) / len(chunks) * 1e6
        print(f"{provider}: {len(chunks)} chunks per stream, gap {args.gap_ms:g} ms")
        print(f"  first event   alone {best['alone first'] * 1e3:7.3f} ms   recording "
              f"{best['record first'] * 1e3:7.3f} ms   ratio {best['record first'] / best['alone first']:.2f}")
        added = (best["record passed"] - best["alone passed"]) * 1e6
        print(f"  first chunk, network → agent  alone {best['alone passed'] * 1e6:6.1f} µs   recording "
              f"{best['record passed'] * 1e6:6.1f} µs   (+{added:.1f} µs)")
        print(f"  whole stream  alone {best['alone total'] * 1e3:7.3f} ms   recording "
              f"{best['record total'] * 1e3:7.3f} ms   ratio {best['record total'] / best['alone total']:.3f}")
        print(f"  no gap        alone {best['alone nogap'] * 1e3:7.3f} ms   recording "
              f"{best['record nogap'] * 1e3:7.3f} ms   overhead {per_chunk:.1f} µs per chunk "
              f"({(best['record nogap'] - best['alone nogap']) * 1e3:.3f} ms per call)")
        print(f"  replay        {best['replay'] * 1e3:7.3f} ms per streamed call   SDK parsing the canned "
              f"stream {best['alone nogap'] * 1e3:.3f} ms   ratio {best['replay'] / best['alone nogap']:.2f}")


if __name__ == "__main__":
    main()
