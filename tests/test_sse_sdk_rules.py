"""Anthropic, Chat Completions and Responses streams the SDKs read by their own rules, where those part from the
event-stream standard: a recording equals what the SDK handed the agent, or there is none where it raised.

The SDKs decode each line as strict UTF-8 (a byte that is not raises, wherever the line is); the openai SDK keeps
an event's id for every later event, so a blank line after an `id:` dispatches an event with no data, which it
raises on; it reads every chunk of a chat stream whatever the event's name; the anthropic SDK reads an event by its
data's `type` (the name only skips pings and nameless events, or raises on `error`); the Responses helper knows an
event by its `type` alone.  Each case goes through the real SDK without Blackbox, recorded, then replayed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from tests.fakeapi import FakeAPI, Reply, anthropic_message, chat_completion, response_object, stream_events

pytest_plugins = ["tests.conftest_fakeapi"]

TEXT = "Sunny and warm in Paris."
HI: Any = [{"role": "user", "content": "hi"}]


def body_of(provider: str) -> dict[str, Any]:
    if provider == "anthropic":
        return anthropic_message(text=TEXT)
    return chat_completion(content=TEXT) if provider == "openai" else response_object(text=TEXT)


def write(name: str | None, data: Any) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return (f"event: {name}\n" if name is not None else "").encode() + f"data: {text}\n\n".encode()


def hostile(provider: str, how: str) -> bytes:
    """The body's stream as the fake API writes it, made hostile one way."""
    events = stream_events(body_of(provider))
    raw = [write(name, data) for name, data in events]
    first_text = next(n for n, chunk in enumerate(raw) if b"Sunny" in chunk)
    if how == "not-utf8-comment":  # a comment line with a byte that is not UTF-8, between two events
        raw.insert(first_text, b": \xff\n\n")
    elif how == "not-utf8-text":
        raw[first_text] = raw[first_text].replace(b"Sunny", b"Sun\xffy")
    elif how == "kept-id":  # an id on the first event; later, one blank line too many
        raw[0] = b"id: 1\n" + raw[0]
        raw[first_text] += b"\n"
    elif how == "named":  # every event under one name the API never uses
        raw = [write("chunk", data) for _, data in events]
    elif how == "no-blank-line":  # the last event (chat: `[DONE]`) never ended: the SDK never dispatches it
        raw[-1] = raw[-1].rstrip(b"\n")
    elif how == "typeless-terminal":  # the terminal event without its type (the SDK knows events by type alone)
        name, data = events[-1]
        raw[-1] = write(name, {key: value for key, value in data.items() if key != "type"})
    return b"".join(raw)


#: (provider, how) → what the SDK does with it: raise, or hand the agent the answer.
CASES = {
    ("anthropic", "not-utf8-comment"): "raises", ("openai", "not-utf8-comment"): "raises",
    ("responses", "not-utf8-comment"): "raises", ("anthropic", "not-utf8-text"): "raises",
    ("responses", "not-utf8-text"): "raises", ("openai", "kept-id"): "raises", ("responses", "kept-id"): "raises",
    ("anthropic", "named"): "answers", ("openai", "named"): "answers", ("openai", "no-blank-line"): "answers",
    ("responses", "typeless-terminal"): "raises",
}


def client(provider: str, fake: FakeAPI, http: Any, asynchronous: bool) -> Any:
    import anthropic
    import openai

    kwargs: dict[str, Any] = {"api_key": "k", "max_retries": 0}
    if http is not None:
        kwargs["http_client"] = http
    if provider == "anthropic":
        return (anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic)(base_url=fake.url, **kwargs)
    return (openai.AsyncOpenAI if asynchronous else openai.OpenAI)(base_url=fake.openai_url, **kwargs)


def answer_sync(provider: str, sdk: Any) -> str:
    with sdk:
        if provider == "anthropic":
            with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as stream:
                message = stream.get_final_message()
                return "".join(block.text for block in message.content if block.type == "text")
        if provider == "openai":
            with sdk.chat.completions.stream(model="m", messages=HI) as stream:
                return str(stream.get_final_completion().choices[0].message.content)
        with sdk.responses.stream(model="m", input="hi") as stream:
            return str(stream.get_final_response().output_text)


async def answer_async(provider: str, sdk: Any) -> str:
    async with sdk:
        if provider == "anthropic":
            async with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as stream:
                message = await stream.get_final_message()
                return "".join(block.text for block in message.content if block.type == "text")
        if provider == "openai":
            async with sdk.chat.completions.stream(model="m", messages=HI) as stream:
                return str((await stream.get_final_completion()).choices[0].message.content)
        async with sdk.responses.stream(model="m", input="hi") as stream:
            return str((await stream.get_final_response()).output_text)


def agent(provider: str, fake: FakeAPI, bb: blackbox.Session | None, asynchronous: bool) -> str:
    """The answer the SDK's stream helper assembled, or the type of what it raised."""
    try:
        if asynchronous:
            http = bb.async_http_client() if bb is not None else None
            return asyncio.run(answer_async(provider, client(provider, fake, http, True)))
        http = bb.http_client() if bb is not None else None
        return answer_sync(provider, client(provider, fake, http, False))
    except Exception as exc:
        return f"raised {type(exc).__name__}"


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(("provider", "how"), list(CASES), ids=[f"{p}-{h}" for p, h in CASES])
def test_the_recording_is_what_the_sdk_handed_the_agent(
        fake_api: FakeAPI, tmp_path: Path, provider: str, how: str, asynchronous: bool) -> None:
    raw = hostile(provider, how)

    def queue() -> None:
        fake_api.queue(Reply(content_type="text/event-stream", chunks=[raw]))

    queue()
    plain = agent(provider, fake_api, None, asynchronous)
    assert plain.startswith("raised") == (CASES[provider, how] == "raises"), plain

    queue()
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out)
    assert agent(provider, fake_api, bb, asynchronous) == plain
    bb.finish()
    recorded = [step.payload for step in load(out).steps if step.type == "model_output"]
    if plain.startswith("raised"):
        assert recorded == []  # never a success the agent did not get
        return
    assert recorded == [{"type": "final_answer", "text": plain}]
    bb = blackbox.session("replay", cassette=out)
    assert agent(provider, fake_api, bb, asynchronous) == plain
    bb.finish()
