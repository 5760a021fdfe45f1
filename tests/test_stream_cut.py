"""A stream the server cuts, read through the real async SDK of every provider, behaves as the sync one does.

Cut in the middle of an event or between two (the body ends before the terminal event), or dropped with the
connection: the agent gets what it gets without Blackbox, nothing is recorded, and stderr says so exactly as the
sync path says it — one warning for a body that ended early (the agent may not see it as a fault), none for a
dropped connection (the agent's SDK raised).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from tests.fakeapi import FakeAPI, Reply, anthropic_message, chat_completion, response_object, stream_reply
from tests.fakeapi_gemini import gemini_response

pytest_plugins = ["tests.conftest_fakeapi"]

PROVIDERS = ("anthropic", "openai", "responses", "gemini")
TEXT = "Sunny and warm in Paris, all week long."
KEY = "AIzaSyFAKE-gemini-test-key-0123456789"
HI: Any = [{"role": "user", "content": "hi"}]


def cut(provider: str, how: str) -> Reply:
    body = {"anthropic": anthropic_message(text=TEXT), "openai": chat_completion(content=TEXT),
            "responses": response_object(text=TEXT), "gemini": gemini_response(text=TEXT)}[provider]
    reply = stream_reply(body, cut_after=4, drop=how == "dropped")
    if how == "between-events":
        assert reply.chunks is not None
        reply.chunks = reply.chunks[:-1]  # the half event left out: the body ends at an event's end
    return reply


async def read(provider: str, fake: FakeAPI, bb: blackbox.Session | None) -> str:
    """Everything the async SDK hands over from the stream, or the type of what it raised."""
    import anthropic
    import httpx
    import openai
    from google import genai
    from google.genai import types

    try:
        if provider == "gemini":
            options = (bb.genai_http_options(base_url=fake.url) if bb is not None else
                       types.HttpOptions(base_url=fake.url, httpx_client=httpx.Client(),
                                         httpx_async_client=httpx.AsyncClient()))
            try:
                stream = await genai.Client(api_key=KEY, http_options=options).aio.models.generate_content_stream(
                    model="gemini-2.5-flash", contents="hi")
                return "|".join([chunk.text or "" async for chunk in stream])
            finally:
                await options.httpx_async_client.aclose()
                options.httpx_client.close()
        kwargs: dict[str, Any] = {"api_key": "k", "max_retries": 0}
        if bb is not None:
            kwargs["http_client"] = bb.async_http_client()
        if provider == "anthropic":
            async with anthropic.AsyncAnthropic(base_url=fake.url, **kwargs) as sdk:
                events = await sdk.messages.create(model="m", max_tokens=50, messages=HI, stream=True)
                return "|".join([event.type async for event in events])
        async with openai.AsyncOpenAI(base_url=fake.openai_url, **kwargs) as client:
            if provider == "openai":
                chunks = await client.chat.completions.create(model="m", messages=HI, stream=True)
                return "|".join([delta(chunk) async for chunk in chunks])
            events = await client.responses.create(model="m", input="hi", stream=True)
            return "|".join([event.type async for event in events])
    except Exception as exc:
        return f"raised {type(exc).__name__}"


def delta(chunk: Any) -> str:
    return str(chunk.choices[0].delta.content if chunk.choices else "")


def read_sync(provider: str, fake: FakeAPI, bb: blackbox.Session) -> str:
    import anthropic
    import openai
    from google import genai

    try:
        if provider == "gemini":
            options = bb.genai_http_options(base_url=fake.url)
            try:
                models = genai.Client(api_key=KEY, http_options=options).models
                return "|".join(chunk.text or "" for chunk in models.generate_content_stream(model="gemini-2.5-flash",
                                                                                            contents="hi"))
            finally:
                options.httpx_client.close()
        kwargs: dict[str, Any] = {"api_key": "k", "max_retries": 0, "http_client": bb.http_client()}
        if provider == "anthropic":
            with anthropic.Anthropic(base_url=fake.url, **kwargs) as sdk:
                events = sdk.messages.create(model="m", max_tokens=50, messages=HI, stream=True)
                return "|".join(event.type for event in events)
        with openai.OpenAI(base_url=fake.openai_url, **kwargs) as client:
            if provider == "openai":
                chunks = client.chat.completions.create(model="m", messages=HI, stream=True)
                return "|".join(delta(chunk) for chunk in chunks)
            return "|".join(event.type for event in client.responses.create(model="m", input="hi", stream=True))
    except Exception as exc:
        return f"raised {type(exc).__name__}"


def recorded(path: Path) -> list[str]:
    return [step.type for step in load(path).steps if step.type in ("model_input", "model_output")]


@pytest.mark.parametrize("how", ["mid-event", "between-events", "dropped"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_async_stream_cut_by_the_server_warns_as_the_sync_one_does(
        fake_api: FakeAPI, tmp_path: Path, capfd: pytest.CaptureFixture[str], provider: str, how: str) -> None:
    fake_api.queue(cut(provider, how))
    plain = asyncio.run(read(provider, fake_api, None))
    capfd.readouterr()

    said = {}
    for mode in ("sync", "async"):
        fake_api.queue(cut(provider, how))
        out = tmp_path / f"{mode}.json"
        bb = blackbox.session("record", out=out)
        got = read_sync(provider, fake_api, bb) if mode == "sync" else asyncio.run(read(provider, fake_api, bb))
        assert got == plain, mode  # passed on as it came (a dropped connection: the SDK's own error)
        bb.finish()
        assert recorded(out) == [], mode
        said[mode] = [line for line in capfd.readouterr().err.splitlines() if line.startswith("[blackbox]")]
    assert said["async"] == said["sync"]
    if how == "dropped":
        assert said["sync"] == []  # the agent's SDK raised: nothing to add
    else:
        (line,) = said["sync"]
        assert line.startswith("[blackbox] a model call was not recorded: a streamed answer: the stream ended")
