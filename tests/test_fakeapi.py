"""The fake API server answers the real SDKs (sync and async) like the real APIs do, keeps what it received,
and stops cleanly; a recording through it shows the normalizers strip every provider-specific datum."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from blackbox.providers import anthropic as A
from blackbox.providers import openai_chat as O
from blackbox.providers.neutral import CallIds
from tests.fakeapi import (
    FakeAPI,
    anthropic_message,
    chat_completion,
    error_reply,
    json_reply,
    last_tool_results,
    sample,
    sse_reply,
    turn_brain,
    weather_brain,
)
from tests.waiting import HANG_GUARD

pytest_plugins = ["tests.conftest_fakeapi"]

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
CHAT_WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get weather",
        "parameters": WEATHER_TOOL["input_schema"],
    },
}
HI = [{"role": "user", "content": "Weather in Paris?"}]


def get_weather(city: str) -> str:
    return {"Paris": "18C", "London": "12C", "Oslo": "3C"}.get(city, "unknown")


# ---------------------------------------------------------------------------------------------------------
# Anthropic


def test_anthropic_tool_use_parallel_final_refusal_and_max_tokens(fake_api: FakeAPI) -> None:
    fake_api.queue(
        anthropic_message(text="Let me check.", tool_uses=[("get_weather", {"city": "Paris"})]),
        anthropic_message(tool_uses=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]),
        anthropic_message(text="It is 18C in Paris."),
        anthropic_message(text="I can't help with that.", stop_reason="refusal"),
        anthropic_message(text="It is", stop_reason="max_tokens"),
    )
    client = fake_api.anthropic()
    replies = [client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=HI) for _ in range(5)]

    assert [r.stop_reason for r in replies] == ["tool_use", "tool_use", "end_turn", "refusal", "max_tokens"]
    first = replies[0]
    assert first.id.startswith("msg_01") and first.content[1].id.startswith("toolu_01")
    assert first.content[1].input == {"city": "Paris"} and first.usage.input_tokens > 0
    assert [b.input["city"] for b in replies[1].content] == ["Paris", "Oslo"]
    assert replies[1].content[0].id != replies[1].content[1].id
    assert replies[2].content[0].text == "It is 18C in Paris."
    assert fake_api.pending == 0 and len(fake_api.requests) == 5


def test_anthropic_async_overlapping_requests(fake_api: FakeAPI) -> None:
    fake_api.brain = lambda body: anthropic_message(text=body["messages"][0]["content"].upper())

    async def go() -> list[str]:
        async with fake_api.async_anthropic() as client:
            replies = await asyncio.gather(
                *[
                    client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": f"q{i}"}])
                    for i in range(4)
                ]
            )
            return [r.content[0].text for r in replies]

    assert asyncio.run(go()) == ["Q0", "Q1", "Q2", "Q3"]
    assert all(r.header("x-stainless-async") == "async:asyncio" for r in fake_api.requests)


def test_anthropic_stream_sample_is_accumulated_by_the_sdk_helper(fake_api: FakeAPI) -> None:
    fake_api.queue(sse_reply(sample("anthropic/stream_thinking_tool_use.sse")))
    client = fake_api.anthropic()
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=HI) as stream:
        final = stream.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
    assert final.content[2].input == {"city": "Paris"} and final.stop_reason == "tool_use"
    assert fake_api.requests[0].body["stream"] is True


def test_anthropic_stream_from_events_and_gzip(fake_api: FakeAPI) -> None:
    events = [
        ("message_start", {"type": "message_start", "message": anthropic_message(text=None, stop_reason=None)}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    fake_api.queue(sse_reply(events, delay=0.001), sse_reply(events, encoding="gzip"))
    client = fake_api.anthropic()
    for _ in range(2):
        with client.messages.stream(model="m", max_tokens=8, messages=HI) as stream:
            assert stream.get_final_text() == "Hi"


# ---------------------------------------------------------------------------------------------------------
# OpenAI Chat Completions


def test_openai_tool_calls_parallel_final_refusal_and_length(fake_api: FakeAPI) -> None:
    fake_api.queue(
        chat_completion(tool_calls=[("get_weather", {"city": "Paris"})]),
        chat_completion(
            content="Checking both.", tool_calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
        ),
        chat_completion(content="18C in Paris."),
        chat_completion(refusal="I can't help with that."),
        chat_completion(content="It is", finish_reason="length"),
    )
    client = fake_api.openai()
    replies = [client.chat.completions.create(model="gpt-5.1", messages=HI) for _ in range(5)]
    assert [r.choices[0].finish_reason for r in replies] == ["tool_calls", "tool_calls", "stop", "stop", "length"]
    assert replies[0].id.startswith("chatcmpl-") and replies[0].choices[0].message.tool_calls[0].id.startswith("call_")
    parallel = replies[1].choices[0].message
    assert [json.loads(c.function.arguments)["city"] for c in parallel.tool_calls] == ["Paris", "Oslo"]
    assert replies[3].choices[0].message.refusal == "I can't help with that."
    assert replies[4].usage.total_tokens > 0


def test_openai_async_client(fake_api: FakeAPI) -> None:
    fake_api.brain = weather_brain("openai", cities=["Paris", "London"])

    async def go() -> str:
        async with fake_api.async_openai() as client:
            messages: list[Any] = list(HI)
            while True:
                reply = await client.chat.completions.create(
                    model="gpt-5.1", messages=messages, tools=[CHAT_WEATHER_TOOL]
                )
                message = reply.choices[0].message
                if not message.tool_calls:
                    return message.content
                messages.append(message.model_dump(exclude_none=True))
                for tc in message.tool_calls:
                    city = json.loads(tc.function.arguments)["city"]
                    messages.append({"role": "tool", "tool_call_id": tc.id, "content": get_weather(city)})

    assert asyncio.run(go()) == "Weather: 18C; 12C"
    assert len(fake_api.requests) == 2


def test_openai_stream_sample(fake_api: FakeAPI) -> None:
    fake_api.queue(sse_reply(sample("openai/chat_stream_tool_call.sse")))
    client = fake_api.openai()
    chunks = list(client.chat.completions.create(model="gpt-5.1", messages=HI, stream=True))
    arguments = "".join(
        tc.function.arguments or ""
        for chunk in chunks
        for choice in chunk.choices
        for tc in choice.delta.tool_calls or []
    )
    assert json.loads(arguments) == {"city": "Paris"}
    assert chunks[-1].usage.total_tokens == 28


def test_openai_stream_from_data_items(fake_api: FakeAPI) -> None:
    base = {"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5.1"}
    fake_api.queue(
        sse_reply(
            [
                dict(
                    base,
                    choices=[{"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": None}],
                ),
                dict(base, choices=[{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]),
                "[DONE]",
            ],
            encoding="br",
        )
    )
    client = fake_api.openai()
    text = "".join(
        c.choices[0].delta.content or "" for c in client.chat.completions.create(model="m", messages=HI, stream=True)
    )
    assert text == "Hello"


# ---------------------------------------------------------------------------------------------------------
# errors and encodings


@pytest.mark.parametrize(
    ("status", "anthropic_error", "openai_error"),
    [
        (400, anthropic.BadRequestError, openai.BadRequestError),
        (401, anthropic.AuthenticationError, openai.AuthenticationError),
        (429, anthropic.RateLimitError, openai.RateLimitError),
        (500, anthropic.InternalServerError, openai.InternalServerError),
    ],
)
def test_errors_in_each_providers_shape(
    fake_api: FakeAPI, status: int, anthropic_error: type, openai_error: type
) -> None:
    fake_api.queue(error_reply("anthropic", status, "nope"), error_reply("openai", status, "nope", encoding="gzip"))
    with pytest.raises(anthropic_error) as a_info:
        fake_api.anthropic().messages.create(model="m", max_tokens=8, messages=HI)
    with pytest.raises(openai_error) as o_info:
        fake_api.openai().chat.completions.create(model="m", messages=HI)
    assert a_info.value.status_code == status and o_info.value.status_code == status
    assert a_info.value.body["error"]["message"] == "nope"
    assert o_info.value.body["message"] == "nope"
    assert len(fake_api.requests) == 2  # max_retries=0: one attempt each


def test_error_shapes_match_the_samples() -> None:
    a = json.loads(error_reply("anthropic", 400, "m").body)
    o = json.loads(error_reply("openai", 400, "m").body)
    assert set(a) == set(sample("anthropic/error_400.response.json"))
    assert set(a["error"]) == set(sample("anthropic/error_400.response.json")["error"])
    assert set(o["error"]) == set(sample("openai/error_400.response.json")["error"])


def test_sdk_retries_a_429_then_succeeds(fake_api: FakeAPI) -> None:
    fake_api.queue(error_reply("anthropic", 429, retry_after_ms=1), anthropic_message(text="ok"))
    reply = fake_api.anthropic(max_retries=1).messages.create(model="m", max_tokens=8, messages=HI)
    assert reply.content[0].text == "ok"
    assert [r.header("x-stainless-retry-count") for r in fake_api.requests] == ["0", "1"]


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_encoded_json_bodies_are_decoded_by_both_sdks(fake_api: FakeAPI, encoding: str) -> None:
    fake_api.queue(
        json_reply(anthropic_message(text="é ünïcode"), encoding=encoding),
        json_reply(chat_completion(content="é ünïcode"), encoding=encoding),
    )
    assert fake_api.anthropic().messages.create(model="m", max_tokens=8, messages=HI).content[0].text == "é ünïcode"
    completion = fake_api.openai().chat.completions.create(model="m", messages=HI)
    assert completion.choices[0].message.content == "é ünïcode"


def test_encoded_body_on_the_wire() -> None:
    with FakeAPI() as fake:
        fake.queue(json_reply({"a": 1}, encoding="br"))
        with httpx2.Client() as client:
            raw = client.post(fake.url + "/v1/messages", json={})
        assert raw.headers["content-encoding"] == "br" and raw.json() == {"a": 1}


# ---------------------------------------------------------------------------------------------------------
# what the server keeps, brains, unanswered requests


def test_requests_are_kept_with_method_path_headers_and_body(fake_api: FakeAPI) -> None:
    assert fake_api.requests == []
    fake_api.queue(anthropic_message(text="hi"), chat_completion(content="hi"))
    fake_api.anthropic(api_key="sk-ant-secret").messages.create(
        model="m", max_tokens=8, messages=HI, tools=[WEATHER_TOOL]
    )
    fake_api.openai(api_key="sk-secret").chat.completions.create(model="gpt-5.1", messages=HI)
    first, second = fake_api.requests
    assert (first.method, first.path, first.provider) == ("POST", "/v1/messages", "anthropic")
    assert first.body == {"max_tokens": 8, "messages": HI, "model": "m", "tools": [WEATHER_TOOL]}
    assert first.header("Authorization") == "Bearer sk-ant-secret" and first.header("anthropic-version")
    assert json.loads(first.raw) == first.body
    assert (second.path, second.provider) == ("/v1/chat/completions", "openai")
    assert second.header("authorization") == "Bearer sk-secret"
    assert fake_api.paths() == ["/v1/messages", "/v1/chat/completions"]
    assert fake_api.bodies()[1]["model"] == "gpt-5.1"
    fake_api.reset()
    assert fake_api.requests == [] and fake_api.pending == 0


def test_unqueued_requests_get_a_non_retried_400_and_are_noted(fake_api: FakeAPI) -> None:
    with pytest.raises(anthropic.BadRequestError, match="no reply queued"):
        fake_api.anthropic(max_retries=2).messages.create(model="m", max_tokens=8, messages=HI)
    with pytest.raises(openai.BadRequestError, match="no reply queued"):
        fake_api.openai(max_retries=2).chat.completions.create(model="m", messages=HI)
    assert len(fake_api.unanswered) == 2 and len(fake_api.requests) == 2


def test_unknown_paths_are_404(fake_api: FakeAPI) -> None:
    with httpx2.Client() as client:
        response = client.get(fake_api.url + "/v1/models")
    assert response.status_code == 404
    assert fake_api.unanswered[0].path == "/v1/models"


def test_turn_brain_answers_by_conversation_state() -> None:
    brain = turn_brain([{"turn": 0}, lambda body: {"turn": 1, "results": last_tool_results(body)}])
    assert brain({"messages": HI}) == {"turn": 0}
    history = [
        *HI,
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "r"}]}],
        },
    ]
    assert brain({"messages": history}) == {"turn": 1, "results": ["r"]}
    with pytest.raises(AssertionError, match="no scripted answer for turn 2"):
        brain({"messages": [*history, {"role": "assistant", "content": "x"}]})


def test_a_failing_brain_is_reported() -> None:
    def broken(body: Any) -> Any:
        raise KeyError("oops")

    with FakeAPI() as fake:
        fake.brain = broken
        with pytest.raises(anthropic.BadRequestError, match="the brain failed"):
            fake.anthropic().messages.create(model="m", max_tokens=8, messages=HI)
        assert isinstance(fake.brain_errors[0], KeyError)


def test_queue_takes_precedence_over_the_brain(fake_api: FakeAPI) -> None:
    fake_api.brain = lambda body: chat_completion(content="brain")
    fake_api.queue(chat_completion(content="queued"))
    client = fake_api.openai()
    texts = [client.chat.completions.create(model="m", messages=HI).choices[0].message.content for _ in range(2)]
    assert texts == ["queued", "brain"]


# ---------------------------------------------------------------------------------------------------------
# start and stop


def test_close_frees_the_port_even_with_a_keep_alive_connection_open() -> None:
    """close() does not wait for a client to hang up: it returns while a client still holds a keep-alive
    connection (which it drops) and frees the port.  A close that waited would never return here: the client
    below never closes its side until close() has returned."""
    fake = FakeAPI().start()
    port = int(fake.url.rsplit(":", 1)[1])
    fake.queue(anthropic_message(text="x"), anthropic_message(text="y"))
    client = fake.anthropic()
    client.messages.create(model="m", max_tokens=8, messages=HI)  # leaves a pooled keep-alive connection
    with socket.create_connection(("127.0.0.1", port)) as kept:  # and one nobody closes before close() returns
        body = json.dumps({"model": "m", "max_tokens": 8, "messages": HI}).encode()
        kept.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))
        kept.settimeout(HANG_GUARD)  # a hang fails, late, rather than hang the run
        reader = kept.makefile("rb")
        assert reader.readline().startswith(b"HTTP/1.1 200"), "the kept connection was answered"
        length = 0
        while (line := reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        reader.read(length)  # the whole answer: the server now waits on this connection for the next request
        closing = threading.Thread(target=fake.close)
        closing.start()
        closing.join(HANG_GUARD)
        assert not closing.is_alive(), "close() waited for the client"
        assert reader.read() == b"", "the server dropped the kept connection"
        reader.close()
    fake.close()  # twice is fine
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD):
        pass
    with pytest.raises(RuntimeError):
        _ = fake.url


def test_listens_on_loopback_only(fake_api: FakeAPI) -> None:
    assert fake_api.url.startswith("http://127.0.0.1:")


# ---------------------------------------------------------------------------------------------------------
# a recording through the fake server: normalized steps hold no provider data


PROVIDER_MARKERS = ("msg_01", "toolu_01", "chatcmpl-", "call_", "usage", "claude-sonnet-4-5-2025", "fp_")


def _assert_neutral(payload: Any) -> None:
    text = json.dumps(payload)
    for marker in PROVIDER_MARKERS:
        assert marker not in text, (marker, text)


def test_recording_an_anthropic_agent_strips_provider_data(fake_api: FakeAPI) -> None:
    fake_api.brain = weather_brain("anthropic", cities=["Paris", "Oslo"])
    client = fake_api.anthropic()
    messages: list[Any] = list(HI)
    ids = CallIds()
    steps = []
    while True:
        reply = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, system="Be brief.", messages=messages, tools=[WEATHER_TOOL]
        )
        steps.append(A.normalize_request(fake_api.requests[-1].body, ids))
        steps.append(A.normalize_response(reply.model_dump(mode="json"), ids))
        if reply.stop_reason != "tool_use":
            break
        messages.append({"role": "assistant", "content": reply.content})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": b.id, "content": get_weather(b.input["city"])}
                    for b in reply.content
                    if b.type == "tool_use"
                ],
            }
        )
    for step in steps:
        _assert_neutral(step)
    assert steps[1] == {
        "type": "tool_calls",
        "calls": [
            {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
            {"toolCallId": "call-1", "toolName": "get_weather", "toolInput": {"city": "Oslo"}},
        ],
        "text": "Let me check.",
    }
    assert steps[2]["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather", "result": "18C"},
            {"type": "tool_result", "toolCallId": "call-1", "toolName": "get_weather", "result": "3C"},
        ],
    }
    assert steps[2]["systemPrompt"] == "Be brief." and steps[2]["params"] == {"maxTokens": 256}
    assert steps[3] == {"type": "final_answer", "text": "Weather: 18C; 3C"}


def test_recording_an_openai_agent_strips_provider_data(fake_api: FakeAPI) -> None:
    fake_api.brain = weather_brain("openai", cities=["London"], text=None)
    client = fake_api.openai()
    messages: list[Any] = [{"role": "system", "content": "Be brief."}, *HI]
    ids = CallIds()
    steps = []
    while True:
        reply = client.chat.completions.create(
            model="gpt-5.1", messages=messages, tools=[CHAT_WEATHER_TOOL], max_completion_tokens=100, seed=1
        )
        steps.append(O.normalize_request(fake_api.requests[-1].body, ids))
        steps.append(O.normalize_response(reply.model_dump(mode="json"), ids))
        message = reply.choices[0].message
        if not message.tool_calls:
            break
        messages.append(message.model_dump(exclude_none=True))
        for tc in message.tool_calls:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": tc.id,
                    "content": get_weather(json.loads(tc.function.arguments)["city"]),
                }
            )
    for step in steps:
        _assert_neutral(step)
    assert steps[2]["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "London"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather", "result": "12C"}],
        },
    ]
    assert steps[2]["params"] == {"maxTokens": 100, "seed": 1}
    assert steps[3] == {"type": "final_answer", "text": "Weather: 12C"}
