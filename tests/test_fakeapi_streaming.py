"""The fake API server streams the way the providers do, and Blackbox's assemblers rebuild its streams into
bodies that normalize exactly like the same answer unstreamed (the server's streams are written independently
of the codecs, so each checks the other). Also the fault scenarios: unknown events, a mid-stream error event, a
server that stops or drops mid-stream."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from blackbox.providers import anthropic as PA
from blackbox.providers import anthropic_stream, openai_chat_stream, responses_stream
from blackbox.providers import openai_chat as PC
from blackbox.providers import openai_responses as PR
from blackbox.providers.neutral import CallIds
from blackbox.providers.sse import parse_all
from blackbox.providers.stream import StreamCodec, StreamResult, StreamStatus
from tests.fakeapi import (
    FakeAPI,
    anthropic_message,
    chat_completion,
    response_object,
    stream_reply,
    weather_brain,
)

pytest_plugins = ["tests.conftest_fakeapi"]

HI = [{"role": "user", "content": "Weather in Paris?"}]
TOOL_ANSWERS = {
    "anthropic": lambda: anthropic_message(text="Let me check.", tool_uses=[("get_weather", {"city": "Paris"})]),
    "openai": lambda: chat_completion(content=None, tool_calls=[("get_weather", {"city": "Paris"}), ("t", {})]),
    "responses": lambda: response_object(text="Let me check.", tool_calls=[("get_weather", {"city": "Zürich"})]),
}
CODECS: dict[str, tuple[StreamCodec, Any, str, dict[str, Any]]] = {
    "anthropic": (
        anthropic_stream.CODEC,
        PA.normalize_response,
        "/v1/messages",
        {"model": "m", "max_tokens": 10, "messages": HI},
    ),
    "openai": (
        openai_chat_stream.CODEC,
        PC.normalize_response,
        "/v1/chat/completions",
        {"model": "m", "messages": HI, "stream_options": {"include_usage": True}},
    ),
    "responses": (responses_stream.CODEC, PR.normalize_response, "/v1/responses", {"model": "m", "input": "hi"}),
}


def raw_stream(fake: FakeAPI, provider: str) -> list[bytes]:
    """POST a streaming request with a plain HTTP client; the body's chunks as the network delivered them."""
    _, _, path, body = CODECS[provider]
    with (
        httpx2.Client() as client,
        client.stream("POST", fake.url + path, json={**body, "stream": True}) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        return list(response.iter_raw())


def assemble(codec: StreamCodec, chunks: list[bytes]) -> StreamResult:
    assembler = codec.assembler()
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler.finish()


@pytest.mark.parametrize("provider", ["anthropic", "openai", "responses"])
def test_streamed_and_unstreamed_answers_normalize_identically(fake_api: FakeAPI, provider: str) -> None:
    codec, normalize, path, body = CODECS[provider]
    answer = TOOL_ANSWERS[provider]()
    fake_api.queue(answer, answer)
    with httpx2.Client() as client:
        unstreamed = client.post(fake_api.url + path, json=body).json()
    assert unstreamed == answer
    result = assemble(codec, raw_stream(fake_api, provider))
    assert result.status is StreamStatus.COMPLETE and result.body is not None
    assert normalize(result.body, CallIds()) == normalize(answer, CallIds())
    assert fake_api.requests[-1].body["stream"] is True


def test_anthropic_stream_has_pings_and_split_deltas(fake_api: FakeAPI) -> None:
    fake_api.queue(TOOL_ANSWERS["anthropic"]())
    events = parse_all(b"".join(raw_stream(fake_api, "anthropic")))
    names = [e.event for e in events]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_delta") > 3
    assert all(e.event for e in events), "every Anthropic event has an event: line"


def test_chat_stream_ends_with_usage_and_done(fake_api: FakeAPI) -> None:
    fake_api.queue(chat_completion(content="It is 18C in Paris today."))
    events = parse_all(b"".join(raw_stream(fake_api, "openai")))
    assert events[-1].data == "[DONE]"
    usage = json.loads(events[-2].data)
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] == 99
    assert json.loads(events[0].data)["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}


def test_responses_stream_is_numbered(fake_api: FakeAPI) -> None:
    fake_api.queue(TOOL_ANSWERS["responses"]())
    events = [json.loads(e.data) for e in parse_all(b"".join(raw_stream(fake_api, "responses")))]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"


def test_sdk_helpers_on_the_fake_streams(fake_api: FakeAPI) -> None:
    fake_api.brain = weather_brain("anthropic")
    with fake_api.anthropic().messages.stream(model="m", max_tokens=10, messages=HI) as stream:
        text = "".join(stream.text_stream)
        message = stream.get_final_message()
    assert text == "Let me check." and message.content[1].input == {"city": "Paris"}

    fake_api.brain = weather_brain("openai", cities=("Paris", "Oslo"))
    with fake_api.openai().chat.completions.stream(model="m", messages=HI) as chat:
        completion = chat.get_final_completion()
    calls = completion.choices[0].message.tool_calls
    assert [json.loads(c.function.arguments) for c in calls] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert completion.choices[0].finish_reason == "tool_calls"

    fake_api.brain = weather_brain("responses")
    client = fake_api.openai()
    with client.responses.stream(model="m", input="Weather in Paris?") as responses:
        response = responses.get_final_response()
    call = next(item for item in response.output if item.type == "function_call")
    assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "Paris"})
    final = client.responses.create(
        model="m",
        input=[
            {"role": "user", "content": "Weather in Paris?"},
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": "18C"},
        ],
    )
    assert final.output_text == "Weather: 18C"
    events = list(client.responses.create(model="m", input="Weather in Paris?", stream=True))
    assert events[-1].type == "response.completed"


def test_async_clients_on_the_fake_streams(fake_api: FakeAPI) -> None:
    fake_api.brain = weather_brain("anthropic")

    async def go() -> list[Any]:
        async with (
            fake_api.async_anthropic() as client,
            client.messages.stream(model="m", max_tokens=10, messages=HI) as stream,
        ):
            message = await stream.get_final_message()
        fake_api.brain = weather_brain("openai")
        async with fake_api.async_openai() as oai:
            chunks = [c async for c in await oai.chat.completions.create(model="m", messages=HI, stream=True)]
        return [message, chunks]

    message, chunks = asyncio.run(go())
    assert message.stop_reason == "tool_use"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


# ---------------------------------------------------------------------------------------------------------
# faults


def test_unknown_events(fake_api: FakeAPI) -> None:
    import anthropic

    fake_api.stream_knobs = {"unknown_event": True}
    for provider in CODECS:
        fake_api.queue(TOOL_ANSWERS[provider]())
        result = assemble(CODECS[provider][0], raw_stream(fake_api, provider))
        assert result.complete, provider
    # the default (lenient) SDK clients skip them
    fake_api.brain = weather_brain("anthropic")
    lenient = fake_api.anthropic(_strict_response_validation=False)
    with lenient.messages.stream(model="m", max_tokens=10, messages=HI) as stream:
        assert stream.get_final_message().stop_reason == "tool_use"
    with pytest.raises(anthropic.APIResponseValidationError):  # strict validation rejects an unknown event
        list(fake_api.anthropic().messages.create(model="m", max_tokens=10, messages=HI, stream=True))
    fake_api.brain = weather_brain("openai")
    with fake_api.openai().chat.completions.stream(model="m", messages=HI) as chat:
        assert chat.get_final_completion().choices[0].finish_reason == "tool_calls"
    fake_api.brain = weather_brain("responses")
    with fake_api.openai(_strict_response_validation=False).responses.stream(model="m", input="x") as responses:
        assert responses.get_final_response().status == "completed"


@pytest.mark.parametrize("provider", ["anthropic", "openai", "responses"])
def test_mid_stream_error_event(fake_api: FakeAPI, provider: str) -> None:
    fake_api.queue(stream_reply(TOOL_ANSWERS[provider](), error_after=4))
    result = assemble(CODECS[provider][0], raw_stream(fake_api, provider))
    assert result.status is StreamStatus.ERROR
    assert result.error is not None and ("Overloaded" in result.error or "server had an error" in result.error)


def test_mid_stream_error_reaches_the_sdks(fake_api: FakeAPI) -> None:
    import anthropic
    import openai

    fake_api.stream_knobs = {"error_after": 3}
    fake_api.brain = weather_brain("anthropic")
    with (
        pytest.raises(anthropic.APIStatusError, match="Overloaded"),
        fake_api.anthropic().messages.stream(model="m", max_tokens=10, messages=HI) as stream,
    ):
        stream.get_final_message()
    fake_api.brain = weather_brain("openai")
    with pytest.raises(openai.APIError, match="server had an error"):
        list(fake_api.openai().chat.completions.create(model="m", messages=HI, stream=True))
    fake_api.brain = weather_brain("responses")
    events = list(fake_api.openai().responses.create(model="m", input="x", stream=True))
    assert events[-1].type == "error" and events[-1].message == "The server had an error"


@pytest.mark.parametrize("provider", ["anthropic", "openai", "responses"])
@pytest.mark.parametrize("drop", [False, True], ids=["ends", "drops"])
def test_server_stops_mid_stream(fake_api: FakeAPI, provider: str, drop: bool) -> None:
    fake_api.queue(stream_reply(TOOL_ANSWERS[provider](), cut_after=5, drop=drop))
    chunks: list[bytes] = []
    _, _, path, body = CODECS[provider]
    with httpx2.Client() as client, client.stream("POST", fake_api.url + path, json={**body, "stream": True}) as r:
        try:
            for chunk in r.iter_raw():
                chunks.append(chunk)
        except httpx2.RemoteProtocolError:
            assert drop
        else:
            assert not drop
    result = assemble(CODECS[provider][0], chunks)
    assert result.status is StreamStatus.ENDED_EARLY
    assert result.error is not None and "in the middle of an event" in result.error


def _dropped_stream_error(fake_api: FakeAPI, provider: str, http_client: Any) -> BaseException:
    """What the agent catches when the server drops its stream mid-body, with the SDK's own client setup."""
    fake_api.stream_knobs = {"cut_after": 6, "drop": True}
    fake_api.brain = weather_brain(provider)
    try:
        if provider == "anthropic":
            client = fake_api.anthropic(http_client=http_client)
            with client.messages.stream(model="m", max_tokens=10, messages=HI) as stream:
                stream.get_final_message()
        else:
            client = fake_api.openai(http_client=http_client)
            list(client.chat.completions.create(model="m", messages=HI, stream=True))
    except Exception as exc:  # the SDK decides the class; the test compares the two runs
        return exc
    raise AssertionError(f"{provider}: a dropped stream raised nothing")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_sdk_sees_a_dropped_stream_the_same_with_and_without_blackbox(
        fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    """The promise is that Blackbox changes nothing the agent sees, not which class one SDK version raises.

    anthropic 2.15 let httpx2's RemoteProtocolError through from the middle of a stream and 2.17 wraps it in
    APIConnectionError; whatever the installed SDK does bare, it must do the same through a recording session.
    """
    import blackbox

    bare = _dropped_stream_error(fake_api, provider, httpx2.Client())
    bb = blackbox.session("record", out=tmp_path / "run.json")
    recorded = _dropped_stream_error(fake_api, provider, bb.http_client())
    bb.finish(error=recorded)
    assert type(recorded) is type(bare)
    assert str(recorded) == str(bare)
    assert "incomplete chunked read" in f"{bare} {bare.__cause__}"  # it is the drop, not some other failure
    assert not blackbox.is_blackbox_error(recorded)


def test_non_streaming_requests_are_unchanged_by_knobs(fake_api: FakeAPI) -> None:
    fake_api.stream_knobs = {"error_after": 1}
    fake_api.brain = weather_brain("responses")
    response = fake_api.openai().responses.create(model="m", input="x")
    assert response.output[1].type == "function_call"
    assert fake_api.requests[-1].path == "/v1/responses" and fake_api.requests[-1].provider == "responses"
