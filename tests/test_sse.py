"""The incremental SSE parser and the writer: the line rules of the event-stream format, fed in any chunking."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from blackbox.providers.sse import DONE, SSEEvent, SSEParser, encode_event, parse_all
from tests.fakeapi import SAMPLES


def feed_in(chunks: list[bytes]) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events


def test_basic_events_and_names() -> None:
    raw = b'event: ping\ndata: {"type":"ping"}\n\ndata: {"a":1}\n\ndata: [DONE]\n\n'
    events = parse_all(raw)
    assert [(e.event, e.data) for e in events] == [("ping", '{"type":"ping"}'), (None, '{"a":1}'), (None, DONE)]
    assert events[1].json() == {"a": 1}
    assert events[2].is_done and not events[0].is_done


def test_line_endings_comments_multiline_and_fields() -> None:
    raw = b": keep-alive\r\nevent: x\r\ndata: one\r\ndata:two\r\ndata:  three\r\nid: 7\r\nretry: 30\r\n\r\n"
    raw += b"data: cr\r\rdata: lf\n\n"
    events = parse_all(raw)
    assert events[0] == SSEEvent("x", "one\ntwo\n three", "7", 30)
    assert [e.data for e in events[1:]] == ["cr", "lf"]


def test_comment_only_and_blank_lines_make_no_event() -> None:
    assert parse_all(b": hello\n\n\n\n: again\n\n") == []
    assert parse_all(b"unknown: field\n\n") == []


def test_event_line_without_data_is_dispatched() -> None:
    assert parse_all(b"event: message_stop\n\n") == [SSEEvent("message_stop", "")]


def test_event_is_returned_as_soon_as_its_blank_line_arrives() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n") == []
    assert parser.pending
    assert parser.feed(b"\n") == [SSEEvent(None, "a")]
    assert not parser.pending


def test_cut_mid_event_is_pending_and_dropped_at_close() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: whole\n\ndata: half") == [SSEEvent(None, "whole")]
    assert parser.pending
    parser.close()
    assert not parser.pending


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    assert feed_in([b"data: a\r", b"\n", b"\r", b"\n", b"data: b\r\n\r\n"]) == [
        SSEEvent(None, "a"),
        SSEEvent(None, "b"),
    ]


def test_utf8_split_inside_a_character() -> None:
    raw = encode_event({"text": "Zürich ☀"}, "x")
    middle = raw.index("☀".encode()) + 1
    assert feed_in([raw[:middle], raw[middle:]]) == parse_all(raw)
    assert parse_all(raw)[0].json() == {"text": "Zürich ☀"}


def test_writer_round_trips_multiline_text() -> None:
    raw = encode_event("line 1\nline 2", "note") + encode_event({"a": [1, "é"]})
    assert raw.startswith(b"event: note\ndata: line 1\ndata: line 2\n\n")
    assert b'data: {"a":[1,"\xc3\xa9"]}\n\n' in raw
    assert [(e.event, e.data) for e in parse_all(raw)] == [("note", "line 1\nline 2"), (None, '{"a":[1,"é"]}')]


SAMPLE_STREAMS = sorted(SAMPLES.glob("*/*.sse"))


@given(st.data())
def test_any_chunking_gives_the_same_events(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(SAMPLE_STREAMS))
    raw = path.read_bytes()
    if data.draw(st.booleans()):
        raw = raw.replace(b"\n", b"\r\n")
    cuts = sorted(data.draw(st.sets(st.integers(0, len(raw)), max_size=40)))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert feed_in(chunks) == parse_all(raw)


def test_every_single_byte_boundary() -> None:
    raw = (SAMPLES / "anthropic" / "stream_text_tool_use.sse").read_bytes().replace(b"\n", b"\r\n")
    whole = parse_all(raw)
    assert len(whole) == 13
    assert feed_in([raw[i : i + 1] for i in range(len(raw))]) == whole
    for cut in range(len(raw) + 1):
        assert feed_in([raw[:cut], raw[cut:]]) == whole
