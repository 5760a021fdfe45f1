"""Blackbox reads a stream's bytes exactly as each SDK reads them, held to the SDKs' own readers.

google-genai's `HttpResponse` reader (over a real httpx / httpx2 response, sync and async) against
`gemini_frames.GenaiFrames`; the anthropic and openai SDKs' `SSEDecoder` against `sse.SSEParser`: the same
frames or events, in the same order, for any bytes — the hostile ones included (`data:` without its space,
comments, `event:` and `id:` lines, a byte-order mark, bare or pretty JSON, a last frame with no blank line, raw
U+2028 or NEL inside JSON, bytes that are not UTF-8, `\\r` line ends split across chunks) — in any chunking.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackbox.providers.gemini_frames import GenaiFrames, charset_of
from blackbox.providers.sse import SSEEvent, SSEParser

genai_client = pytest.importorskip("google.genai._api_client")

# Pieces a hostile (or merely unusual) stream is made of.
PIECES = [b"data: ", b"data:", b"event: x", b"event:", b"id: 7", b"id:", b"retry: 5", b"retry: x", b": note",
          b"{", b"}", b'{"a":1}', b'{"text":"}{"}', b"[DONE]", b"\n", b"\r", b"\r\n", b"\n\n", b"\r\n\r\n", b" ",
          b"\xef\xbb\xbf", "\u2028".encode(), "\x85".encode(), b"\x0b", b"\x1c", "é☀".encode(), b"\xff", b"\xc3",
          b"data: {\"candidates\":[]}\n\n", b"null", b"x"]


@st.composite
def chunked_bodies(draw: st.DrawFn, pieces: list[bytes]) -> list[bytes]:
    """A body of hostile pieces, cut at arbitrary byte boundaries (inside a UTF-8 character or a `\\r\\n` too)."""
    body = b"".join(draw(st.lists(st.sampled_from(pieces), max_size=30)))
    cuts = sorted(draw(st.sets(st.integers(0, len(body)), max_size=8)))
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True) if body[a:b]]


def ours(chunks: list[bytes], charset: str = "utf-8") -> list[str]:
    reader = GenaiFrames(charset)
    frames = [frame for chunk in chunks for frame in reader.feed(chunk)]
    return frames + reader.close()


def genai_sync(http: Any, chunks: list[bytes], content_type: str) -> list[str]:
    """What google-genai's sync reader makes of the body: the frame texts it hands to `json.loads`."""
    response = http.Response(200, headers={"content-type": content_type}, content=iter(chunks))
    return list(genai_client.HttpResponse(response.headers, response)._iter_response_stream())


def genai_async(http: Any, chunks: list[bytes], content_type: str) -> list[str]:
    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    async def read() -> list[str]:
        response = http.Response(200, headers={"content-type": content_type}, content=body())
        return [frame async for frame in genai_client.HttpResponse(response.headers, response)._aiter_response_stream()]

    return asyncio.run(read())


@pytest.mark.parametrize("flavor", ["httpx", "httpx2"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=chunked_bodies(PIECES))
def test_gemini_frames_are_google_genais_own(flavor: str, chunks: list[bytes]) -> None:
    http = pytest.importorskip(flavor)
    assert ours(chunks) == genai_sync(http, chunks, "text/event-stream")


@settings(max_examples=60, deadline=None)
@given(chunks=chunked_bodies(PIECES))
def test_gemini_frames_are_google_genais_own_async(chunks: list[bytes]) -> None:
    import httpx

    assert ours(chunks) == genai_async(httpx, chunks, "text/event-stream")


@pytest.mark.parametrize("content_type", ["text/event-stream; charset=iso-8859-1", "text/event-stream; charset=UTF-16",
                                          "text/event-stream; charset=no-such-codec", "text/event-stream"])
def test_the_body_is_decoded_in_the_charset_the_sdk_decodes_it_in(content_type: str) -> None:
    """A server that names another charset than it writes in: the agent gets mojibake, and so does the recording."""
    import httpx

    text = 'data: {"text":"Zürich ☀"}\r\n\r\n'
    raw = text.encode("utf-16" if "UTF-16" in content_type else "utf-8")
    chunks = [raw[:7], raw[7:]]
    sdk = genai_sync(httpx, chunks, content_type)
    assert ours(chunks, charset_of(content_type)) == sdk
    assert (sdk == ['{"text":"Zürich ☀"}']) == ("iso-8859-1" not in content_type)


# ---------------------------------------------------------------------------------------------------------
# the SSE decoder of the anthropic and openai SDKs


def sdk_events(decoder: Any, chunks: list[bytes]) -> tuple[list[tuple[Any, ...]], bool]:
    """The events the SDK's decoder dispatches, and whether it raised (a line that is not UTF-8)."""
    got: list[tuple[Any, ...]] = []
    try:
        for event in decoder.iter_bytes(iter(chunks)):
            got.append((event.event, event.data, event.id, event.retry))
    except UnicodeDecodeError:
        return got, True
    return got, False


def parser_events(chunks: list[bytes]) -> tuple[list[tuple[Any, ...]], bool]:
    parser = SSEParser()
    events: list[SSEEvent] = [event for chunk in chunks for event in parser.feed(chunk)]
    parser.close()
    return [(e.event, e.data, e.id, e.retry) for e in events], parser.error is not None


SSE_PIECES = [piece for piece in PIECES if piece not in (b"\x0b", b"\x1c")] + [b"data: x\n\n", b"event: ping\n"]


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
@settings(max_examples=400, deadline=None)
@given(chunks=chunked_bodies(SSE_PIECES))
def test_sse_events_are_the_sdks_own(sdk: str, chunks: list[bytes]) -> None:
    streaming = pytest.importorskip(f"{sdk}._streaming")
    assert parser_events(chunks) == sdk_events(streaming.SSEDecoder(), chunks)


def test_the_hostile_sse_edges_one_by_one() -> None:
    """The cases the property test finds, spelled out: the id is kept (so an extra blank line dispatches an event
    with no data, which the openai SDK raises on), an empty `event:` is no name and dispatches nothing, `retry`
    is read by `int()`, a line that is not UTF-8 stops the stream where the SDK raises."""
    def events(raw: bytes) -> list[tuple[Any, ...]]:
        return parser_events([raw])[0]

    assert events(b"id: 1\ndata: a\n\n\n") == [(None, "a", "1", None), (None, "", "1", None)]
    assert events(b"event:\n\nevent:\ndata: a\n\n") == [(None, "a", None, None)]
    assert events(b"retry: +7\n\n") == [(None, "", None, 7)]
    assert parser_events([b"data: a\n\n: \xff\n\ndata: b\n\n"]) == ([(None, "a", None, None)], True)
    assert parser_events([b"data: a\n\ndata: \xc3"]) == ([(None, "a", None, None)], True)  # the last line too


def frames_in(chunks: Iterator[bytes]) -> list[str]:
    return ours(list(chunks))


def test_the_hostile_gemini_edges_one_by_one() -> None:
    assert frames_in(iter([b'data: {"a":1}'])) == ['{"a":1}']  # the last frame needs no blank line
    assert frames_in(iter([b'{"a":\n1}\n'])) == ['{"a":1}']  # bare JSON, lines glued until the braces even out
    assert frames_in(iter([b': note\n'])) == [": note"]  # a comment is a frame of its own (not JSON: the SDK raises)
    assert frames_in(iter([b'data:{"a":1}\n\n'])) == ['data:{"a":1}']
    assert frames_in(iter([b'data: {"a":"x\xe2\x80\xa8y"}\n\n'])) == ['{"a":"x', 'y"}']  # U+2028 ends a line
    assert frames_in(iter([b'data: {"a":2}\n{"b":1}\n\n'])) == ['{"b":1}', '{"a":2}']  # the loose frame first
    assert frames_in(iter([b"\xef\xbb\xbfdata: {}\n\n"])) == ["\ufeffdata: {}"]
