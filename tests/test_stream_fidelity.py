"""The recording equals what the agent received: hostile streams, read by the real SDKs from the fake API.

A stream is a stream by what the request asked, not only by its header (none, or `application/json`); events
after the terminal one are refused rather than recorded as a third version of the answer; a type-confused
event never raises into the agent's read; a stream past the recording limit stops being recorded while the
agent's bytes flow on.  Each call the recording misses says so on stderr.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.live import tee
from tests.fakeapi import FakeAPI, anthropic_message, chat_completion, response_object, stream_reply

PROVIDERS = ("anthropic", "openai", "responses")
HI: Any = [{"role": "user", "content": "hi"}]
TEXT = "Sunny in Paris, and warm."


def body_of(provider: str, text: str = TEXT) -> dict[str, Any]:
    if provider == "anthropic":
        return anthropic_message(text=text)
    return chat_completion(content=text) if provider == "openai" else response_object(text=text)


MADE: list[Any] = []  # the clients `client` made, closed (with their pools' sockets) as their test ends


@pytest.fixture(autouse=True)
def _clients_closed() -> Iterator[None]:
    yield
    while MADE:
        MADE.pop().close()


def client(provider: str, fake: FakeAPI, http: Any) -> Any:
    import anthropic
    import openai

    if provider == "anthropic":
        MADE.append(anthropic.Anthropic(base_url=fake.url, api_key="k", http_client=http, max_retries=0))
    else:
        MADE.append(openai.OpenAI(base_url=fake.openai_url, api_key="k", http_client=http, max_retries=0))
    return MADE[-1]


def sdk_text(provider: str, sdk: Any) -> str:
    """The answer as the SDK's stream helper assembles it for the agent."""
    if provider == "anthropic":
        with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as s:
            message = s.get_final_message()
            return "".join(block.text for block in message.content) + f"|{message.stop_reason}"
    if provider == "openai":
        with sdk.chat.completions.stream(model="m", messages=HI) as s:
            return str(s.get_final_completion().choices[0].message.content)
    with sdk.responses.stream(model="m", input="hi") as s:
        return str(s.get_final_response().output_text)


def recorded_outputs(path: Path) -> list[Any]:
    return [step.payload for step in load(path).steps if step.type == "model_output"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_without_a_content_type_is_recorded(fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    fake_api.queue(stream_reply(body_of(provider), content_type=None))
    bb = blackbox.session("record", out=tmp_path / "run.json")
    got = sdk_text(provider, client(provider, fake_api, bb.http_client()))
    assert got.split("|")[0] == TEXT
    assert bb.finish().steps == 3
    assert recorded_outputs(tmp_path / "run.json") == [{"type": "final_answer", "text": TEXT}]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_event_stream_labelled_json_reaches_the_agent_as_it_comes(
        fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    release = threading.Event()  # the rest of the stream is sent only once the agent holds the first event
    fake_api.queue(stream_reply(body_of(provider), content_type="application/json", hold=release))
    bb = blackbox.session("record", out=tmp_path / "run.json")
    sdk = client(provider, fake_api, bb.http_client())
    if provider == "anthropic":
        events = iter(sdk.messages.create(model="m", max_tokens=50, messages=HI, stream=True))
    elif provider == "openai":
        events = iter(sdk.chat.completions.create(model="m", messages=HI, stream=True))
    else:
        events = iter(sdk.responses.create(model="m", input="hi", stream=True))
    first = next(events)
    held_back = not release.is_set()
    release.set()
    rest = list(events)
    assert held_back and first is not None and len(rest) > 3  # the first event came before the rest was sent
    assert bb.finish().steps == 3
    assert recorded_outputs(tmp_path / "run.json") == [{"type": "final_answer", "text": TEXT}]


def test_an_unstreamed_call_answered_with_events_gets_what_the_sdk_makes_of_them(
        fake_api: FakeAPI, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Not a stream request, and a body that is not JSON: the SDK's own verdict, not a Blackbox 400."""
    import httpx2

    def attempt(http: Any) -> str:
        fake_api.queue(stream_reply(body_of("anthropic"), content_type="application/json"))
        try:
            return repr(client("anthropic", fake_api, http).messages.create(model="m", max_tokens=5, messages=HI))
        except Exception as exc:
            return f"{type(exc).__name__}"

    plain = attempt(httpx2.Client())
    bb = blackbox.session("record", out=tmp_path / "run.json")
    assert attempt(bb.http_client()) == plain
    assert "[blackbox]" not in plain
    bb.finish()
    assert recorded_outputs(tmp_path / "run.json") == []
    assert "not recorded: a 200 answer whose body is not JSON (application/json)" in capfd.readouterr().err


@pytest.mark.parametrize("provider", PROVIDERS)
def test_events_after_the_final_event_are_refused_never_recorded_as_a_third_version(
        fake_api: FakeAPI, tmp_path: Path, provider: str, capfd: pytest.CaptureFixture[str]) -> None:
    import httpx2

    fake_api.queue(stream_reply(body_of(provider), after_end=True))
    alone = sdk_text(provider, client(provider, fake_api, httpx2.Client()))  # what the SDK hands the agent
    fake_api.queue(stream_reply(body_of(provider), after_end=True))
    bb = blackbox.session("record", out=tmp_path / "run.json")
    assert sdk_text(provider, client(provider, fake_api, bb.http_client())) == alone
    bb.finish()
    if provider == "openai":  # the SDK stops reading at `[DONE]`: what came after it reached nobody
        assert "AFTER" not in alone
        assert recorded_outputs(tmp_path / "run.json") == [{"type": "final_answer", "text": TEXT}]
        return
    if provider == "anthropic":
        assert alone == f"{TEXT} AFTER-STOP|max_tokens"  # the SDK applied the late events
    assert recorded_outputs(tmp_path / "run.json") == []
    err = capfd.readouterr().err
    assert "[blackbox] a model call was not recorded" in err and "after the stream's final event" in err


@pytest.mark.parametrize("kind", ["index", "text", "content"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_type_confused_event_never_reaches_the_agents_bytes(
        fake_api: FakeAPI, tmp_path: Path, provider: str, kind: str, capfd: pytest.CaptureFixture[str]) -> None:
    reply = stream_reply(body_of(provider), confused=kind)
    assert reply.chunks is not None
    sent = b"".join(reply.chunks)
    fake_api.queue(reply)
    bb = blackbox.session("record", out=tmp_path / "run.json")
    url = fake_api.url + "/v1/messages" if provider == "anthropic" else fake_api.openai_url + (
        "/chat/completions" if provider == "openai" else "/responses")
    request = {"model": "m", "max_tokens": 5, "messages": HI, "stream": True} if provider != "responses" else {
        "model": "m", "input": "hi", "stream": True}
    with bb.http_client() as http, http.stream("POST", url, json=request, headers={"x-api-key": "k"}) as response:
        received = b"".join(response.iter_bytes())
    assert received == sent
    bb.finish()
    assert recorded_outputs(tmp_path / "run.json") == []
    assert "[blackbox] a model call was not recorded: a streamed answer: event" in capfd.readouterr().err


def test_a_stream_past_the_recording_limit_flows_on_unrecorded(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    long = "word " * 4000
    monkeypatch.setattr(tee, "RECORD_LIMIT", 8000)
    fake_api.queue(stream_reply(anthropic_message(text=long)), stream_reply(anthropic_message(text=TEXT)))
    bb = blackbox.session("record", out=tmp_path / "run.json")
    sdk = client("anthropic", fake_api, bb.http_client())
    assert sdk_text("anthropic", sdk) == f"{long}|end_turn"  # every byte reached the agent
    assert sdk_text("anthropic", sdk) == f"{TEXT}|end_turn"
    bb.finish()
    assert recorded_outputs(tmp_path / "run.json") == [{"type": "final_answer", "text": TEXT}]
    assert "the stream passed 8,000 bytes, Blackbox's recording limit" in capfd.readouterr().err


def test_a_stream_read_to_its_final_event_is_recorded_when_the_agent_goes_on(
        fake_api: FakeAPI, tmp_path: Path) -> None:
    """The call is recorded once the stream is over for the agent: at the body's end, or, for an agent that
    stops at the final event and never closes the stream, at its next call (or tool, or finish())."""
    import anthropic

    fake_api.queue(anthropic_message(text="first"), anthropic_message(text="second"))
    bb = blackbox.session("record", out=tmp_path / "run.json")
    sdk = anthropic.Anthropic(base_url=fake_api.url, api_key="k", http_client=bb.http_client(), max_retries=0)
    events = iter(sdk.messages.create(model="m", max_tokens=50, messages=HI, stream=True))
    kinds = []
    for event in events:  # stops at message_stop: the body's end is never read, the stream never closed
        kinds.append(event.type)
        if event.type == "message_stop":
            break
    assert bb._engine.steps() == 0
    sdk.messages.create(model="m", max_tokens=50, messages=HI)
    assert bb.finish().steps == 5
    assert recorded_outputs(tmp_path / "run.json") == [{"type": "final_answer", "text": "first"},
                                                       {"type": "final_answer", "text": "second"}]
    del events
    sdk.close()
