"""Reading many events at once (the tee's batches, the Anthropic assembler's runs of pings and deltas) records
exactly what reading them one by one records: the same body, the same status, the same reason, on any
chunking — also where decoding the deltas joined would differ from decoding each alone (a surrogate pair or a
`\\u` escape split over two events, a character's UTF-8 bytes split over two events, a control character).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackbox.live.calls import ModelCall
from blackbox.live.tee import BATCH, StreamRecording
from blackbox.providers import by_name
from blackbox.providers.anthropic_stream import AnthropicStreamAssembler
from blackbox.providers.sse import SSEEvent, encode_event
from blackbox.providers.stream import StreamResult


class OneByOne(AnthropicStreamAssembler):
    """The reference: every event read alone by `_event` (no runs)."""

    def _runs(self, chunk: bytes, pos: int) -> int:
        return pos


def _event(name: str, data: dict[str, Any]) -> bytes:
    return encode_event(data, name)


def _raw_delta(string: bytes, index: int = 0, kind: bytes = b"text_delta", key: bytes = b"text") -> bytes:
    """A delta event whose JSON string is given as raw bytes (so it may be any escape or byte)."""
    return (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,"delta":{"type":"%s",'
            b'"%s":"%s"}}\n\n' % (index, kind, key, string))


def _delta(text: str, index: int = 0) -> bytes:
    return _raw_delta(json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass"), index)


START = _event("message_start", {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": None,
    "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}}})
PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def _block(index: int, block: dict[str, Any]) -> bytes:
    return _event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


def _stop(index: int) -> bytes:
    return _event("content_block_stop", {"type": "content_block_stop", "index": index})


END = [_event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                "usage": {"output_tokens": 9}}),
       _event("message_stop", {"type": "message_stop"})]


def _stream(*middle: bytes) -> list[bytes]:
    return [START, PING, _block(0, {"type": "text", "text": ""}), *middle, _stop(0), *END]


def _chunkings(chunks: list[bytes], seed: int) -> list[list[bytes]]:
    """The stream as sent, whole, one byte at a time, in random cuts, and in the tee's batches."""
    data = b"".join(chunks)
    rng = random.Random(seed)
    cuts, position = [], 0
    while position < len(data):
        size = rng.choice([1, 2, 3, 7, 50, 300, 5000])
        cuts.append(data[position : position + size])
        position += size
    batches = [b"".join(chunks[i : i + BATCH]) for i in range(0, len(chunks), BATCH)]
    return [chunks, [data], [data[i : i + 1] for i in range(len(data))], cuts, batches]


def _outcome(assembler: AnthropicStreamAssembler, chunks: list[bytes]) -> tuple[Any, ...]:
    for chunk in chunks:
        assembler.feed(chunk)
    result = assembler.finish()
    return result.status, result.body, result.error, assembler.events


def _same_everywhere(chunks: list[bytes], seed: int = 0) -> tuple[Any, ...]:
    reference = _outcome(OneByOne(), chunks)
    for chunking in _chunkings(chunks, seed):
        assert _outcome(AnthropicStreamAssembler(), chunking) == reference
    return reference


def _text(outcome: tuple[Any, ...]) -> str:
    return str(outcome[1]["content"][0]["text"])


def test_a_long_answer_in_small_deltas_with_pings_reads_as_one_by_one() -> None:
    text = "Lisbon in three days: Alfama, Belém ☀, LX Factory; \"quoted\"\n\ttabbed \\ 😀 " * 40
    middle = [_delta(text[i : i + 4]) for i in range(0, len(text), 4)]
    middle[100:100] = [PING] * 300
    outcome = _same_everywhere(_stream(*middle))
    assert outcome[0].value == "complete" and _text(outcome) == text


@pytest.mark.parametrize("strings", [
    [b"\\ud83d", b"\\ude00"],  # a surrogate pair split over two events: two lone surrogates, as apart
    [b"ok \\u00", b"e9 then"],  # an escape's digits split: the first event is not valid JSON
    [b"caf\xc3", b"\xa9 au lait"],  # a character's UTF-8 bytes split over two events
    [b"bad \\x escape", b"after"],
    [b"raw \x01 control", b"after"],
    [b"fine \\u00e9 \\n \\\\u not an escape", b"\\\\", b"\\\"", b"end"],
    [b"\\u00e9\\u00E9\\uFFFF\\u0000"],
    [b"\xff\xfe not UTF-8", b"after"],
])
def test_deltas_that_differ_when_decoded_joined_read_as_one_by_one(strings: list[bytes]) -> None:
    middle = [_delta("before ")] * 5 + [_raw_delta(s) for s in strings] + [_delta(" after")] * 5
    _same_everywhere(_stream(*middle))


def test_thinking_and_tool_input_deltas_and_deltas_for_an_earlier_block_read_as_one_by_one() -> None:
    chunks = [START,
              _block(0, {"type": "thinking", "thinking": "", "signature": ""}),
              *[_raw_delta(f"step {n}; ".encode(), 0, b"thinking_delta", b"thinking") for n in range(300)],
              _event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "signature_delta", "signature": "sig"}}),
              _stop(0),
              _block(1, {"type": "text", "text": "pre"}),
              *[_delta(f"t{n} ", 1) for n in range(200)],
              _block(2, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}),
              *[_raw_delta(piece, 2, b"input_json_delta", b"partial_json")
                for piece in (b'{\\"city', b'\\": \\"Par', b'is\\", \\"n\\": [1, ', b'2.5]}')] * 1,
              *[_delta(f"late {n} ", 1) for n in range(50)],  # deltas to block 1 after block 2 began
              _stop(1), _stop(2), *END]
    outcome = _same_everywhere(chunks)
    body = outcome[1]
    assert body["content"][0]["thinking"].startswith("step 0; step 1;") and body["content"][0]["signature"] == "sig"
    assert body["content"][1]["text"].startswith("pret0 t1 ") and body["content"][1]["text"].endswith("late 49 ")
    assert body["content"][2]["input"] == {"city": "Paris", "n": [1, 2.5]}


_HEAD = b'event: content_block_delta\ndata: {"type":"content_block_delta",'
_TEXT = b'"delta":{"type":"text_delta","text":'


@pytest.mark.parametrize("bad", [
    _HEAD + b'"index":0,' + _TEXT + b'7}}\n\n',  # a number for text
    _HEAD + b'"index":[0],' + _TEXT + b'"x"}}\n\n',
    _HEAD + b'"index":0,' + _TEXT + b'"x"}\n\n',  # not JSON
    _HEAD + b'"index":0,' + _TEXT + b'"a"}, "extra": {"type":"content_block_delta","index":0,' + _TEXT + b'"b"}}}\n\n',
    _HEAD + b'"index":0,' + _TEXT + b'"x"}}\r\n\r\n',
    _HEAD + b'"index":0,' + _TEXT.replace(b'"text":', b'\ndata: "text":') + b'"x"}}\n\n',  # two data lines
    b": a comment\n\n",
    _HEAD.replace(b"\ndata", b"\nid: 4\ndata") + b'"index":0,' + _TEXT + b'"x"}}\n\n',
])
def test_an_event_of_another_shape_among_the_deltas_reads_as_one_by_one(bad: bytes) -> None:
    middle = [_delta("x")] * 300
    middle[150:150] = [bad]
    _same_everywhere(_stream(*middle), seed=len(bad))


def test_a_delta_after_the_final_event_is_refused_in_a_run_too() -> None:
    chunks = _stream(*[_delta("ok ")] * 10) + [_delta("AFTER-STOP")] * 200 + [PING] * 10
    outcome = _same_everywhere(chunks)
    assert outcome[0].value == "refused" and "came after the stream's final event" in outcome[2]


def test_a_stream_cut_in_the_middle_of_a_run_ended_early_where_one_by_one_does() -> None:
    data = b"".join(_stream(*[_delta("abcd")] * 400))
    for cut in (len(data) // 2, len(data) // 2 + 1, len(data) - len(END[1]) - 3):
        _same_everywhere([data[:cut]])


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.text(max_size=6), min_size=1, max_size=400), pings=st.integers(0, 50),
       seed=st.integers(0, 1000))
def test_any_deltas_read_as_one_by_one(pieces: list[str], pings: int, seed: int) -> None:
    middle = [_delta(piece) for piece in pieces]
    middle[len(middle) // 2 : len(middle) // 2] = [PING] * pings
    outcome = _same_everywhere(_stream(*middle), seed)
    assert outcome[0].value == "complete"
    assert _text(outcome) == "".join(pieces)


# ---------------------------------------------------------------------------------------------------------
# the tee: chunks held and read in batches, everything held read before the outcome is looked at


class Outcomes:
    def __init__(self) -> None:
        self.results: list[StreamResult] = []

    def __call__(self, call: ModelCall, result: StreamResult) -> None:
        self.results.append(result)


def _recording() -> tuple[StreamRecording, Outcomes]:
    provider = by_name("anthropic")
    done = Outcomes()
    return StreamRecording(ModelCall(provider, {}, 0, stream=True), provider.stream, None, done), done


def test_a_stream_whose_final_event_is_held_is_recorded_when_the_agent_goes_on() -> None:
    """The agent read to `message_stop` and went on without closing the stream: the chunks still held (fewer
    than a batch) are read when the session settles, and the call is recorded."""
    recording, done = _recording()
    for chunk in _stream(*[_delta("abc")] * 10):
        recording.feed(chunk)
    assert done.results == []  # held, not yet read
    assert recording.settle()
    assert [r.status.value for r in done.results] == ["complete"]
    assert done.results[0].body is not None and done.results[0].body["content"][0]["text"] == "abc" * 10


def test_a_stream_the_agent_drops_early_is_not_recorded_even_with_its_chunks_held() -> None:
    recording, done = _recording()
    for chunk in _stream(*[_delta("abc")] * 10)[:-1]:
        recording.feed(chunk)
    assert not recording.settle()
    recording.fail("the agent closed the stream before its end")
    assert [(r.status.value, r.error) for r in done.results] == [
        ("ended_early", "the agent closed the stream before its end")]


def test_a_refusal_is_reported_at_the_batch_that_holds_it_and_later_bytes_are_not_read() -> None:
    recording, done = _recording()
    chunks = _stream(*[_delta("x")] * 10) + [_delta("AFTER-STOP")] + [_delta("y")] * (3 * BATCH)
    for chunk in chunks[: BATCH]:
        recording.feed(chunk)
    assert [r.status.value for r in done.results] == ["refused"]
    for chunk in chunks[BATCH:]:
        recording.feed(chunk)
    recording.end()
    assert len(done.results) == 1 and recording._held == []


def test_the_one_by_one_reference_really_reads_one_event_at_a_time() -> None:
    """The reference of these tests is not the code under test: `OneByOne` reads every event through
    `_event`, while the assembler reads the runs in bulk (fewer `_event` calls)."""
    counts = {}
    for cls in (OneByOne, AnthropicStreamAssembler):

        class Counting(cls):  # type: ignore[valid-type,misc]
            seen: ClassVar[list[SSEEvent]] = []

            def _event(self, event: SSEEvent) -> Any:
                self.seen.append(event)
                return super()._event(event)

        _outcome(Counting(), [b"".join(_stream(*[_delta("abcd")] * 300))])
        counts[cls.__name__] = len(Counting.seen)
    assert counts["OneByOne"] == 300 + 6 and counts["AnthropicStreamAssembler"] < 20, counts


# ---------------------------------------------------------------------------------------------------------
# the relay: the agent's read of a recorded body (batches taken by `islice`, pings counted by their bytes)

PING_COMPACT = b'event: ping\ndata: {"type":"ping"}\n\n'


_OPENING = [START, PING, _block(0, {"type": "text", "text": ""})]
_CLOSING = [_stop(0), *END]


def _relayed(chunks: list[bytes]) -> tuple[Any, ...]:
    """What the agent got through the relay, and what the recording made of it."""
    recording, done = _recording()
    passed = list(recording.relay(iter(chunks)))
    assert passed == chunks  # the agent's bytes, exactly, whatever the recorder made of them
    assert len(done.results) == 1, done.results
    result = done.results[0]
    return result.status, result.body, result.error, recording._assembler.events


def _reference(chunks: list[bytes]) -> tuple[Any, ...]:
    return _outcome(OneByOne(), [b"".join(chunks)])


@pytest.mark.parametrize("pings", [0, 1, BATCH - 3, BATCH - 2, BATCH - 1, BATCH, 5 * BATCH + 7])
def test_batches_of_pings_are_counted_as_the_events_they_are(pings: int) -> None:
    """Both spellings of a ping, in runs that fill whole batches (counted by their bytes, not parsed) and
    end at every offset from a batch's end (the body's end found by the relay's probe)."""
    middle = [_delta("a")] * 3 + [PING, PING_COMPACT] * (pings // 2) + [PING] * (pings % 2) + [_delta("b")]
    chunks = _stream(*middle)
    outcome = _relayed(chunks)
    assert outcome == _reference(chunks)
    assert outcome[0].value == "complete" and _text(outcome) == "aaab" and outcome[3] == len(chunks)


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n"])  # kept by the fast reading / by the general rules
def test_a_ping_shaped_chunk_inside_an_event_is_read_as_part_of_that_event(line_end: bytes) -> None:
    """A batch of chunks that are each exactly a ping's bytes, but whose first comes while an event is still
    open (its blank line not yet sent): by the event-stream rules its lines join that event, so the batch is
    parsed, not counted: the open delta takes the first ping's name and is skipped as a ping, as the SDK
    skips it."""
    open_event = _delta("open")[:-2].replace(b"\n", line_end) + line_end  # no closing blank line
    before = [*_OPENING, *[_delta("x")] * (BATCH - 4), open_event]
    chunks = [*before, *[PING] * (3 * BATCH), _delta("y"), *_CLOSING]
    assert len(before) == BATCH  # the open event ends a batch; the next batches are pings alone
    outcome = _relayed(chunks)
    assert outcome == _reference(chunks)
    assert outcome[0].value == "complete" and _text(outcome) == "x" * (BATCH - 4) + "y"


def test_ping_shaped_chunks_after_a_carried_event_start_are_parsed_with_it() -> None:
    """A batch ends with the start of an event (carried to the next bytes) and the next batch is pings
    alone: they are not counted apart, the carried bytes and the first ping read as the one event they make
    (a `data:` line that is not JSON: refused, as by the SDK), not completed later by the event's real end."""
    start = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_'
    rest = b'delta","text":"z"}}\n\n'
    before = [*_OPENING, *[_delta("x")] * (BATCH - 4), start]
    chunks = [*before, *[PING] * BATCH, rest, _delta("y"), *_CLOSING]
    outcome = _relayed(chunks)
    assert outcome == _reference(chunks)
    assert outcome[0].value == "refused" and "not JSON" in outcome[2]


def test_after_a_refusal_the_relay_passes_the_rest_on_unread() -> None:
    recording, done = _recording()
    chunks = _stream(*[_delta("x")] * 10) + [_delta("AFTER-STOP")] + [_delta("y")] * (3 * BATCH)
    relay = recording.relay(iter(chunks))
    passed = [next(relay) for _ in range(BATCH)]
    assert [r.status.value for r in done.results] == ["refused"]
    passed += list(relay)
    assert passed == chunks and len(done.results) == 1 and recording._held == []


class _Clock:
    """The tee's clock (`calls._clock`), moved by the test's network as each chunk arrives."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _arriving(clock: _Clock, chunks: list[bytes], gaps: list[float]) -> Iterator[bytes]:
    for chunk, gap in zip(chunks, gaps, strict=True):
        clock.now += gap
        yield chunk


def _answer_read_to_its_final_event(monkeypatch: pytest.MonkeyPatch, gap: float) -> tuple[float, float, int]:
    """A stream whose chunks come `gap` seconds apart, its final event after a pause of 5 s; the agent
    reads to that event and stops (the body's end never read), then goes on a minute later.  (when the
    final event came, when its batch began, the recorded arrival in ms)."""
    from blackbox.live import calls

    clock = _Clock()
    monkeypatch.setattr(calls, "_clock", clock)
    chunks = _stream(*[_delta("x")] * (BATCH + 20))
    gaps = [gap] * (len(chunks) - 1) + [5.0]
    recording, done = _recording()
    relay = recording.relay(_arriving(clock, chunks, gaps))
    for _ in chunks:
        next(relay)
    final_came = clock.now
    batch_began = final_came - 5.0 - gap * (len(chunks) - BATCH - 1)
    clock.now += 60
    assert recording.settle() and done.results[0].status.value == "complete"
    arrived = recording._call.arrived_at
    assert arrived is not None
    relay.close()
    return final_came, batch_began, arrived


def test_a_slow_stream_is_dated_at_the_chunk_that_completed_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks at a network's pace (here 1 ms apart): every chunk is stamped, so the answer is dated when its
    final event came, not when the agent went on."""
    final_came, _, arrived = _answer_read_to_its_final_event(monkeypatch, 0.001)
    assert arrived == int(final_came * 1000)


def test_a_fast_stream_is_dated_within_the_batch_that_completed_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks faster than `SLOW_BATCH` allows (1 µs apart) are stamped a batch at a time: the answer is
    dated no earlier than its batch began and no later than its final event came, never when the agent went
    on."""
    final_came, batch_began, arrived = _answer_read_to_its_final_event(monkeypatch, 1e-6)
    assert int(batch_began * 1000) <= arrived <= int(final_came * 1000)
