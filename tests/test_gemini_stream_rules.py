"""A recorded Gemini stream is what google-genai handed the agent, frame for frame, for every way of writing it.

google-genai reads its `alt=sse` stream line by line, not by the event-stream rules: it raises on `data:` without
its space, a `:` comment, an `event:` line, a byte-order mark or a raw U+2028 inside a frame (each makes a line
that is not JSON), and it hands over a last frame with no blank line after it, bare or pretty-printed JSON lines,
frames after the `finishReason` frame, and a frame with `error` as any key but the first.  Each way (the fake
API's `hostile_stream`) goes through the real SDK with no Blackbox, then recorded, then replayed: the agent gets
the same with and without Blackbox; a stream the SDK raised on records nothing; an answer it handed over is
recorded as it was handed over and replays to the agent unchanged — a chat's history too (a frame without
content makes google-genai's chat leave the turn out of the history it sends next).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi_gemini import HOSTILE, frame_bytes, gemini_frames, gemini_response, hostile_stream

genai = pytest.importorskip("google.genai")
from google.genai import types  # noqa: E402

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "AIzaSyFAKE-gemini-test-key-0123456789"
MODEL = "gemini-2.5-flash"
BODY = gemini_response(text="Sunny and warm in Paris.", thought="Look it up.", signature="c2lnbmF0dXJl")
NEXT_STREAM = b"".join(frame_bytes(frame) for frame in gemini_frames(gemini_response(text="Rome is mild.")))
#: What google-genai does with each way: raise, or hand the agent the answer.
RAISES = {"data-no-space", "comment", "event-line", "byte-order-mark", "line-separator", "comment-after"}
assert set(HOSTILE) > RAISES
#: (API, async, chunking): each way is read by the SDK's sync and async readers, models and chats, the bytes in
#: one network chunk or in 7-byte pieces (cut inside lines, `\r\n` and UTF-8 characters).
WAYS = [("models", False, "whole"), ("models", False, "pieces"), ("models", True, "whole"), ("chat", False, "whole"),
        ("chat", True, "pieces")]


def reply(raw: bytes, chunking: str) -> Reply:
    chunks = [raw] if chunking == "whole" else [raw[i:i + 7] for i in range(0, len(raw), 7)]
    return Reply(content_type="text/event-stream", chunks=chunks)


def seen(chunks: list[Any]) -> dict[str, Any]:
    """What the agent got from a stream's chunks: the answer and thought text, the calls, the finish reason,
    and whether a chunk came without content (google-genai's chat then keeps the turn out of its history)."""
    text, thoughts, finish, hollow = [], [], None, False
    for chunk in chunks:
        content = chunk.candidates[0].content if chunk.candidates else None
        hollow = hollow or not (content and content.parts)
        for part in (content.parts if content and content.parts else []):
            (thoughts if part.thought else text).append(part.text or "")
        if chunk.candidates and chunk.candidates[0].finish_reason:
            finish = str(chunk.candidates[0].finish_reason)
    return {"text": "".join(text), "thoughts": "".join(thoughts), "finish": finish, "hollow": hollow}


def options(bb: blackbox.Session | None, fake: FakeAPI) -> Any:
    """Blackbox's clients, or (no session) plain httpx clients: the HTTP stack google-genai uses by default."""
    if bb is None:
        import httpx

        return types.HttpOptions(base_url=fake.url, httpx_client=httpx.Client(), httpx_async_client=httpx.AsyncClient())
    return bb.genai_http_options(base_url=fake.url)


def run_sync(api: str, http_options: Any) -> Any:
    client = genai.Client(api_key=KEY, http_options=http_options)
    if api == "models":
        return seen(list(client.models.generate_content_stream(model=MODEL, contents="Weather in Paris?")))
    chat = client.chats.create(model=MODEL)
    first = seen(list(chat.send_message_stream("Weather in Paris?")))
    second = seen(list(chat.send_message_stream("And Rome?")))
    return first, second, turns(chat.get_history(curated=True))


def turns(history: list[Any]) -> list[str]:
    """A chat's history as the turns it sends next: each role's consecutive contents (one a frame) as one."""
    merged: list[str] = []
    for content in history:
        if merged and merged[-1].startswith(f"{content.role}:"):
            continue
        merged.append(f"{content.role}:")
    return merged


async def run_async(api: str, http_options: Any) -> Any:
    client = genai.Client(api_key=KEY, http_options=http_options).aio
    try:
        if api == "models":
            stream = await client.models.generate_content_stream(model=MODEL, contents="Weather in Paris?")
            return seen([chunk async for chunk in stream])
        chat = client.chats.create(model=MODEL)
        first = seen([chunk async for chunk in await chat.send_message_stream("Weather in Paris?")])
        second = seen([chunk async for chunk in await chat.send_message_stream("And Rome?")])
        return first, second, turns(chat.get_history(curated=True))
    finally:
        if http_options.httpx_async_client is not None:
            await http_options.httpx_async_client.aclose()


def agent(api: str, asynchronous: bool, http_options: Any) -> Any:
    """The agent's view of one run: what it got, or the exception type google-genai raised."""
    try:
        if asynchronous:
            return asyncio.run(run_async(api, http_options))
        return run_sync(api, http_options)
    except Exception as exc:
        return f"raised {type(exc).__name__}"
    finally:
        if http_options.httpx_client is not None:
            http_options.httpx_client.close()


def outputs(path: Path) -> list[Any]:
    return [step.payload for step in load(path).steps if step.type == "model_output"]


@pytest.mark.parametrize(("api", "asynchronous", "chunking"), WAYS, ids=["-".join(map(str, way)) for way in WAYS])
@pytest.mark.parametrize("how", HOSTILE)
def test_the_recording_is_what_google_genai_handed_the_agent(
        fake_api: FakeAPI, tmp_path: Path, capfd: pytest.CaptureFixture[str], how: str, api: str, asynchronous: bool,
        chunking: str) -> None:
    def queue() -> None:
        fake_api.queue(reply(hostile_stream(BODY, how), chunking), reply(NEXT_STREAM, chunking))

    queue()
    plain = agent(api, asynchronous, options(None, fake_api))
    raised = isinstance(plain, str)
    assert raised == (how in RAISES), plain  # the fake's hostile streams do what the table says, without Blackbox

    fake_api.reset()
    queue()
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out)
    assert agent(api, asynchronous, options(bb, fake_api)) == plain
    bb.finish()
    recorded = outputs(out)
    if raised:
        assert recorded == []  # the agent got an error: no model step, never a success it did not get
        return
    first = plain if api == "models" else plain[0]
    assert recorded[0]["text"] == first["text"]
    assert "".join(thought["text"] for thought in recorded[0]["thoughts"]) == first["thoughts"]
    assert ("hollowFrame" in recorded[0]) == first["hollow"]
    assert len(recorded) == (1 if api == "models" else 2)

    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert agent(api, asynchronous, options(bb, fake_api)) == plain  # a chat's history as recorded, too
    bb.finish()
    assert fake_api.requests == []
    assert "[blackbox]" not in capfd.readouterr().err


def test_a_cut_gemini_stream_warns_once_and_a_hostile_one_raises_as_without_blackbox(
        fake_api: FakeAPI, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Cut in the middle of a frame, the SDK raises on the half frame at the body's end: nothing is recorded and
    the stream is named as cut (a server fault the agent may not see as one); a frame the SDK raises on mid-stream
    (not JSON) is the agent's error, and Blackbox adds nothing to it."""
    raw = hostile_stream(BODY, "no-blank-line")
    cases: list[tuple[bytes, Callable[[str], bool]]] = [
        (raw[:-20], lambda err: err.count("[blackbox] a model call was not recorded") == 1
         and "in the middle of a frame" in err),
        (b": hi\r\n\r\n" + raw, lambda err: "[blackbox]" not in err),
    ]
    for body, says in cases:
        fake_api.queue(reply(body, "whole"))
        plain = agent("models", False, options(None, fake_api))
        fake_api.queue(reply(body, "whole"))
        bb = blackbox.session("record", out=tmp_path / "cut.json")
        assert agent("models", False, options(bb, fake_api)) == plain == "raised UnknownApiResponseError"
        bb.finish()
        assert outputs(tmp_path / "cut.json") == []
        assert says(capfd.readouterr().err)


def test_a_stream_in_another_charset_is_recorded_as_the_sdk_decoded_it(fake_api: FakeAPI, tmp_path: Path) -> None:
    """A server that says latin-1 and writes UTF-8: httpx decodes by the header, so the agent gets mojibake, and
    the recording holds the same mojibake (not the text the bytes meant)."""
    raw = b"".join(frame_bytes(frame) for frame in gemini_frames(gemini_response(text="Zürich is sunny.")))

    def queue() -> None:
        fake_api.queue(Reply(content_type="text/event-stream; charset=iso-8859-1", chunks=[raw]))

    queue()
    plain = agent("models", False, options(None, fake_api))
    assert plain["text"] == "Zürich is sunny.".encode().decode("latin-1")
    queue()
    bb = blackbox.session("record", out=tmp_path / "latin.json")
    assert agent("models", False, options(bb, fake_api)) == plain
    bb.finish()
    assert outputs(tmp_path / "latin.json")[0]["text"] == plain["text"]
