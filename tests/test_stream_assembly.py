"""The assemblers on hostile streams: a terminal event without output, events after it, values of the wrong
type, lines cut into many chunks.  An assembler returns a result (complete, or refused with a reason); it
never raises, and it never records what the SDK would not hand the agent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackbox.providers.sse import SSEParser, encode_event
from blackbox.providers.stream import StreamStatus, Text
from tests.test_streaming_codecs import (
    ANTHROPIC,
    CHAT,
    OUTPUTS,
    RESPONSES,
    WIRES,
    Wire,
    assemble,
    normalized,
    openai_client,
)


def _events(chunks: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(chunk.split(b"data: ", 1)[1]) for chunk in chunks]


def _chunks(events: list[dict[str, Any]]) -> list[bytes]:
    return [encode_event(event, event["type"]) for event in events]


@pytest.mark.parametrize("output", [OUTPUTS[0], OUTPUTS[3]], ids=["text", "tool-calls"])
@pytest.mark.parametrize("terminal", ["empty", "missing"])
def test_a_responses_terminal_event_without_output_takes_the_deltas(output: dict[str, Any], terminal: str) -> None:
    """Only the deltas carry the text: no `.done` events, and a `response.completed` with no output."""
    events = _events(RESPONSES.chunks(output, piece_size=3))
    kept = [e for e in events if not e["type"].endswith(".done")]
    if terminal == "empty":
        kept[-1]["response"]["output"] = []
    else:
        del kept[-1]["response"]["output"]
    result = assemble(RESPONSES.codec, _chunks(kept))
    assert result.complete and result.body is not None
    assert normalized(RESPONSES, result.body, output) == output


def test_a_responses_terminal_event_without_output_matches_the_sdk() -> None:
    """With the `.done` events and no output on `response.completed`, the SDK takes the finished items."""
    events = _events(RESPONSES.chunks(OUTPUTS[3], piece_size=3))
    del events[-1]["response"]["output"]
    chunks = _chunks(events)
    sdk = openai_client(chunks)
    sdk._strict_response_validation = False  # strict validation wants `output` on every response
    with sdk.responses.stream(model="m", input="x") as stream:
        final = stream.get_final_response().model_dump()
    result = assemble(RESPONSES.codec, chunks)
    assert result.body is not None
    assert normalized(RESPONSES, result.body, OUTPUTS[3]) == normalized(RESPONSES, final, OUTPUTS[3]) == OUTPUTS[3]


LATE = {
    "anthropic": encode_event({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "text_delta", "text": " AFTER-STOP"}}, "content_block_delta"),
    "responses": encode_event({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                               "delta": " AFTER-STOP", "sequence_number": 99}, "response.output_text.delta"),
    "chat": encode_event({"choices": [{"index": 0, "delta": {"content": " AFTER-DONE"}}]}),
}


@pytest.mark.parametrize("wire", WIRES, ids=repr)
def test_an_event_after_the_final_one_refuses_the_call_unless_the_sdk_stops_before_it(wire: Wire) -> None:
    chunks = wire.chunks(OUTPUTS[0])
    assembler = wire.codec.assembler()
    results = [assembler.feed(chunk) for chunk in chunks]
    assert results[-1] is not None and results[-1].complete
    late = assembler.feed(LATE[wire.name])
    if wire is CHAT:  # the SDK stops at `[DONE]`: nothing after it reaches the agent
        assert late is None and assembler.finish().complete
        return
    assert late is not None and late.status is StreamStatus.REFUSED and late.body is None
    assert late.error is not None and "after the stream's final event" in late.error
    assert assembler.finish() is late


@pytest.mark.parametrize("wire", [ANTHROPIC, RESPONSES], ids=repr)
def test_pings_and_unknown_events_after_the_final_one_change_nothing(wire: Wire) -> None:
    chunks = wire.chunks(OUTPUTS[0])
    extra = [b": keep-alive\n\n", encode_event({"type": "ping"}, "ping"),
             encode_event({"type": "future_thing"}, "future_thing")]
    assert assemble(wire.codec, [*chunks, *extra]) == assemble(wire.codec, chunks)


def test_responses_done_sentinel_ends_what_the_sdk_reads() -> None:
    chunks = RESPONSES.chunks(OUTPUTS[0])
    result = assemble(RESPONSES.codec, [*chunks[:3], b"data: [DONE]\n\n", *chunks[3:]])
    assert result.status is StreamStatus.ENDED_EARLY  # the SDK never reads the terminal event after it


WRONG = st.one_of(st.integers(), st.lists(st.integers(), max_size=2), st.text(max_size=3), st.none(),
                  st.booleans(), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(WIRES), st.sampled_from(OUTPUTS), st.data())
def test_a_value_of_any_type_anywhere_never_raises(wire: Wire, output: dict[str, Any], data: st.DataObject) -> None:
    """`"index": [0]`, a text delta that is a number, `content: 7`: refused or recorded, never an exception."""
    chunks = wire.chunks(output, piece_size=4)
    position = data.draw(st.integers(0, len(chunks) - 1))
    head, _, raw = chunks[position].partition(b"data: ")
    if raw.startswith(b"[DONE]"):
        return
    event = json.loads(raw)
    paths = _paths(event)
    if not paths:
        return
    _replace(event, data.draw(st.sampled_from(paths)), data.draw(WRONG))
    chunks[position] = head + b"data: " + json.dumps(event).encode() + b"\n\n"
    assembler = wire.codec.assembler()
    for chunk in chunks:
        assembler.feed(chunk)
    result = assembler.finish()
    assert result.status in StreamStatus
    if result.status is StreamStatus.REFUSED:
        assert result.error is not None and "could not be assembled" in result.error


def test_a_block_of_a_confused_type_with_many_deltas_in_one_chunk_never_raises() -> None:
    """Found by the test above: a `content_block` whose `type` is a list, then its deltas arriving together
    (the bulk reader's path) raised TypeError (unhashable) out of the assembler."""
    wire = next(w for w in WIRES if w.name == "anthropic")
    chunks = wire.chunks({"type": "final_answer", "text": "18C in Paris."}, piece_size=4)
    at = next(n for n, chunk in enumerate(chunks) if b"content_block_start" in chunk)
    head, _, raw = chunks[at].partition(b"data: ")
    event = json.loads(raw)
    event["content_block"]["type"] = []
    chunks[at] = head + b"data: " + json.dumps(event).encode() + b"\n\n"
    assembler = wire.codec.assembler()
    assembler.feed(b"".join(chunks))
    assert assembler.finish().status in StreamStatus


def test_a_long_line_cut_into_many_chunks_is_one_event() -> None:
    text = "x" * 50_000
    raw = encode_event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                       "content_block_delta")
    parser = SSEParser()
    events = []
    for i in range(0, len(raw), 7):
        events += parser.feed(raw[i : i + 7])
    assert len(events) == 1 and json.loads(events[0].data)["delta"]["text"] == text
    assert not parser.pending


def test_text_refuses_a_piece_that_is_not_text_and_joins_once() -> None:
    text = Text("a")
    for piece in ("b", "c", ""):
        text.add(piece)
    assert text.text() == "abc" and text.text() == "abc"
    with pytest.raises(ValueError, match="a delta of type int, not text"):
        text.add(7)


def test_a_gemini_stream_gathers_its_text_as_pieces_joined_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini frames each carry a piece of the answer: they are kept and joined once at the end (`old + piece`
    in a dict is quadratic: 1.6 MB in 4-character frames would stall the agent's read)."""
    import blackbox.providers.gemini_stream as gemini_stream

    joins: list[int] = []

    class Counted(Text):
        def text(self) -> str:
            joins.append(len(self._pieces))
            return super().text()

    monkeypatch.setattr(gemini_stream, "Text", Counted)
    assembler = gemini_stream.GeminiStreamAssembler()

    def frame(text: str, **extra: Any) -> bytes:
        body = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, **extra}]}
        return b"data: " + json.dumps(body).encode() + b"\r\n\r\n"

    for _ in range(1000):
        assert assembler.feed(frame("abcd")) is None
    result = assembler.feed(frame("!", finishReason="STOP"))
    assert result is not None and result.status is StreamStatus.COMPLETE
    assert result.body["candidates"][0]["content"]["parts"] == [{"text": "abcd" * 1000 + "!"}]
    assert joins == [1001]
