"""The streaming codecs with the real SDKs: a synthesized stream is what the SDKs' own stream helpers assemble to
the recorded message, and an assembled stream normalizes exactly as the unstreamed response would.

The SDK clients here talk to a tiny in-test transport (no session, no network) that answers with the
synthesized event stream chunk by chunk.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackbox.providers import anthropic as PA
from blackbox.providers import anthropic_stream, openai_chat_stream, responses_stream
from blackbox.providers import openai_chat as PC
from blackbox.providers import openai_responses as PR
from blackbox.providers.neutral import CallIds
from blackbox.providers.sse import encode_event
from blackbox.providers.stream import ContentDecoder, StreamCodec, StreamResult, StreamStatus
from tests.fakeapi import sample

OUTPUTS: list[dict[str, Any]] = [
    {"type": "final_answer", "text": "18C in Paris."},
    {"type": "final_answer", "text": "Zürich: ☀ «ok»\nsecond line"},
    {"type": "final_answer", "text": "Partial", "stop": "length"},
    {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
        "text": "Let me check.",
    },
    {
        "type": "tool_calls",
        "calls": [
            {"toolCallId": "call-3", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
            {"toolCallId": "call-4", "toolName": "get_time", "toolInput": {"tz": "Europe/Paris", "n": [1, 2.5]}},
            {"toolCallId": "call-5", "toolName": "noop", "toolInput": {}},
        ],
    },
]
REFUSAL = {"type": "final_answer", "text": "I can't help with that.", "stop": "refusal"}


class Wire:
    """One provider's codecs, how to build its SDK client, and how to normalize what the SDK assembled."""

    def __init__(
        self,
        name: str,
        codec: StreamCodec,
        synthesize: Callable[[dict[str, Any]], dict[str, Any]],
        normalize: Callable[[dict[str, Any], CallIds], dict[str, Any]],
    ) -> None:
        self.name, self.codec, self._synthesize, self.normalize = name, codec, synthesize, normalize

    def body(self, output: dict[str, Any]) -> dict[str, Any]:
        return self._synthesize(output)

    def chunks(self, output: dict[str, Any], piece_size: int | None = None) -> list[bytes]:
        return self.codec.synthesize(self.body(output), piece_size=piece_size)

    def __repr__(self) -> str:
        return self.name


ANTHROPIC = Wire(
    "anthropic",
    anthropic_stream.CODEC,
    lambda out: PA.synthesize_response(out, step_index=3, model="claude-sonnet-4-6"),
    PA.normalize_response,
)
CHAT = Wire(
    "chat",
    openai_chat_stream.CODEC,
    lambda out: PC.synthesize_response(out, step_index=3, model="gpt-5.1", timestamp_ms=1_760_000_000_000),
    PC.normalize_response,
)
RESPONSES = Wire(
    "responses",
    responses_stream.CODEC,
    lambda out: PR.synthesize_response(out, step_index=3, model="gpt-5.1", timestamp_ms=1_760_000_000_000),
    PR.normalize_response,
)
WIRES = [ANTHROPIC, CHAT, RESPONSES]


def bound(output: dict[str, Any]) -> CallIds:
    """The ids replay binds: `call-N` handed back as if it were the provider's id."""
    ids = CallIds()
    for call in output.get("calls", []):
        ids.bind(call["toolCallId"], call["toolCallId"])
    return ids


def normalized(wire: Wire, body: dict[str, Any], output: dict[str, Any]) -> dict[str, Any]:
    return wire.normalize(body, bound(output))


# ---------------------------------------------------------------------------------------------------------
# SDK clients on an in-test transport


def _transport(chunks: list[bytes], seen: list[httpx2.Request]) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter(chunks))

    return httpx2.MockTransport(handler)


def _async_transport(chunks: list[bytes], seen: list[httpx2.Request]) -> httpx2.MockTransport:
    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunks:
            await asyncio.sleep(0)
            yield chunk

    async def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=stream())

    return httpx2.MockTransport(handler)


def anthropic_client(chunks: list[bytes], seen: list[httpx2.Request] | None = None, *, strict: bool = True) -> Any:
    import anthropic

    http = httpx2.Client(transport=_transport(chunks, [] if seen is None else seen))
    return anthropic.Anthropic(
        api_key="k", base_url="http://api.test", http_client=http, max_retries=0, _strict_response_validation=strict
    )


def openai_client(chunks: list[bytes], seen: list[httpx2.Request] | None = None) -> Any:
    import openai

    http = httpx2.Client(transport=_transport(chunks, [] if seen is None else seen))
    return openai.OpenAI(
        api_key="k", base_url="http://api.test/v1", http_client=http, max_retries=0, _strict_response_validation=True
    )


USER = [{"role": "user", "content": "Weather in Paris?"}]


@pytest.mark.parametrize("output", [*OUTPUTS, REFUSAL], ids=lambda o: o["type"] + "-" + o.get("stop", ""))
def test_anthropic_messages_stream_helper(output: dict[str, Any]) -> None:
    seen: list[httpx2.Request] = []
    client = anthropic_client(ANTHROPIC.chunks(output), seen)
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100, messages=USER) as stream:
        text = "".join(stream.text_stream)
        message = stream.get_final_message()
    assert json.loads(seen[0].content)["stream"] is True
    assert text == output.get("text", "")
    assert normalized(ANTHROPIC, message.model_dump(), output) == output
    body = ANTHROPIC.body(output)
    assert (message.id, message.model, message.stop_reason) == (body["id"], body["model"], body["stop_reason"])
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100, messages=USER) as stream:
        stream.until_done()
        if output.get("text"):
            assert stream.get_final_text() == output["text"]


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o["type"] + "-" + o.get("stop", ""))
def test_anthropic_create_stream_true(output: dict[str, Any]) -> None:
    client = anthropic_client(ANTHROPIC.chunks(output))
    events = list(client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=USER, stream=True))
    kinds = [event.type for event in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta")
    assert text == output.get("text", "")
    stop = next(e.delta.stop_reason for e in events if e.type == "message_delta")
    assert stop == ANTHROPIC.body(output)["stop_reason"]
    names = [
        e.content_block.name for e in events if e.type == "content_block_start" and e.content_block.type == "tool_use"
    ]
    assert names == [call["toolName"] for call in output.get("calls", [])]


@pytest.mark.parametrize("output", [*OUTPUTS, REFUSAL], ids=lambda o: o["type"] + "-" + o.get("stop", ""))
def test_chat_completions_stream_helper(output: dict[str, Any]) -> None:
    import openai

    client = openai_client(CHAT.chunks(output))
    if output.get("stop") == "length":  # the helper raises on a cut answer, streamed or not
        with (
            pytest.raises(openai.LengthFinishReasonError),
            client.chat.completions.stream(model="gpt-5.1", messages=USER) as stream,
        ):
            list(stream)
            stream.get_final_completion()
        return
    with client.chat.completions.stream(model="gpt-5.1", messages=USER) as stream:
        kinds = [event.type for event in stream]
        completion = stream.get_final_completion()
    assert "chunk" in kinds
    body = completion.model_dump()
    assert normalized(CHAT, body, output) == output
    assert body["choices"][0]["finish_reason"] == CHAT.body(output)["choices"][0]["finish_reason"]
    if output.get("calls"):
        assert "tool_calls.function.arguments.done" in kinds


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o["type"] + "-" + o.get("stop", ""))
def test_chat_create_stream_true(output: dict[str, Any]) -> None:
    client = openai_client(CHAT.chunks(output))
    chunks = list(client.chat.completions.create(model="gpt-5.1", messages=USER, stream=True))
    deltas = [chunk.choices[0].delta for chunk in chunks]
    assert deltas[0].role == "assistant"
    assert "".join(d.content or "" for d in deltas) == output.get("text", "")
    arguments: dict[int, str] = {}
    names: dict[int, str] = {}
    ids: dict[int, str] = {}
    for delta in deltas:
        for call in delta.tool_calls or []:
            arguments[call.index] = arguments.get(call.index, "") + (call.function.arguments or "")
            if call.function.name:
                names[call.index] = call.function.name
            if call.id:
                ids[call.index] = call.id
    calls = output.get("calls", [])
    assert [ids[i] for i in sorted(ids)] == [call["toolCallId"] for call in calls]
    assert [names[i] for i in sorted(names)] == [call["toolName"] for call in calls]
    assert [json.loads(arguments[i]) for i in sorted(arguments)] == [call["toolInput"] for call in calls]
    assert chunks[-1].choices[0].finish_reason == CHAT.body(output)["choices"][0]["finish_reason"]


@pytest.mark.parametrize("output", [*OUTPUTS, REFUSAL], ids=lambda o: o["type"] + "-" + o.get("stop", ""))
def test_responses_stream_helper(output: dict[str, Any]) -> None:
    client = openai_client(RESPONSES.chunks(output))
    with client.responses.stream(model="gpt-5.1", input="Weather in Paris?") as stream:
        kinds = [event.type for event in stream]
        if output.get("stop") == "length":
            # the API ends a cut answer with response.incomplete, on which this helper gives no final response
            assert kinds[-1] == "response.incomplete"
            with pytest.raises(RuntimeError, match=r"response\.completed"):
                stream.get_final_response()
            return
        response = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert normalized(RESPONSES, response.model_dump(), output) == output
    if output.get("stop") != "refusal":
        assert response.output_text == output.get("text", "")
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        (c["toolCallId"], c["toolName"], c["toolInput"]) for c in output.get("calls", [])
    ]


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o["type"] + "-" + o.get("stop", ""))
def test_responses_create_stream_true(output: dict[str, Any]) -> None:
    client = openai_client(RESPONSES.chunks(output))
    events = list(client.responses.create(model="gpt-5.1", input="Weather in Paris?", stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == output.get("text", "")
    final = events[-1].response
    assert normalized(RESPONSES, final.model_dump(), output) == output


def test_async_clients_assemble_the_same() -> None:
    import anthropic
    import openai

    output = OUTPUTS[3]

    async def run() -> list[dict[str, Any]]:
        seen: list[httpx2.Request] = []
        a = anthropic.AsyncAnthropic(
            api_key="k",
            base_url="http://api.test",
            http_client=httpx2.AsyncClient(transport=_async_transport(ANTHROPIC.chunks(output), seen)),
            max_retries=0,
            _strict_response_validation=True,
        )
        async with a.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
            message = await stream.get_final_message()

        def oai(chunks: list[bytes]) -> Any:
            http = httpx2.AsyncClient(transport=_async_transport(chunks, seen))
            return openai.AsyncOpenAI(
                api_key="k",
                base_url="http://api.test/v1",
                http_client=http,
                max_retries=0,
                _strict_response_validation=True,
            )

        async with oai(CHAT.chunks(output)).chat.completions.stream(model="m", messages=USER) as chat:
            completion = await chat.get_final_completion()
        async with oai(RESPONSES.chunks(output)).responses.stream(model="m", input="x") as responses:
            response = await responses.get_final_response()
        return [message.model_dump(), completion.model_dump(), response.model_dump()]

    bodies = asyncio.run(run())
    for wire, body in zip(WIRES, bodies, strict=True):
        assert normalized(wire, body, output) == output


# ---------------------------------------------------------------------------------------------------------
# the assemblers


def assemble(codec: StreamCodec, chunks: list[bytes]) -> StreamResult:
    assembler = codec.assembler()
    early = None
    for chunk in chunks:
        result = assembler.feed(chunk)
        if result is not None:
            assert early is None, "feed returns the result once"
            early = result
    final = assembler.finish()
    if early is not None:
        assert final is early
    return final


@pytest.mark.parametrize("wire", WIRES, ids=repr)
@pytest.mark.parametrize("output", [*OUTPUTS, REFUSAL], ids=lambda o: o["type"] + "-" + o.get("stop", ""))
def test_assembled_synthesized_stream_is_the_unstreamed_body(wire: Wire, output: dict[str, Any]) -> None:
    result = assemble(wire.codec, wire.chunks(output))
    assert result.status is StreamStatus.COMPLETE and result.error is None
    assert result.body is not None
    assert normalized(wire, result.body, output) == output
    assert normalized(wire, result.body, output) == normalized(wire, wire.body(output), output)


PAIRS = [
    (ANTHROPIC, "anthropic/stream_text_tool_use.sse", "anthropic/create_tool_use.response.json"),
    (RESPONSES, "openai/responses_stream_tool_call.sse", "openai/responses_tool_call.response.json"),
]


@pytest.mark.parametrize(("wire", "stream", "unstreamed"), PAIRS, ids=[p[1] for p in PAIRS])
def test_sample_streams_normalize_like_the_unstreamed_samples(wire: Wire, stream: str, unstreamed: str) -> None:
    result = assemble(wire.codec, [sample(stream).encode()])
    assert result.complete and result.body is not None
    assert wire.normalize(result.body, CallIds()) == wire.normalize(sample(unstreamed), CallIds())


WEATHER_CALL = {
    "type": "tool_calls",
    "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
    "text": "Let me check.",
}
SAMPLE_STREAMS = [
    (ANTHROPIC, "anthropic/stream_text_tool_use.sse"),
    (ANTHROPIC, "anthropic/stream_thinking_tool_use.sse"),
    (CHAT, "openai/chat_stream_tool_call.sse"),
    (RESPONSES, "openai/responses_stream_tool_call.sse"),
]


@pytest.mark.parametrize(("wire", "stream"), SAMPLE_STREAMS, ids=[s[1] for s in SAMPLE_STREAMS])
def test_sample_streams_assemble(wire: Wire, stream: str) -> None:
    result = assemble(wire.codec, [sample(stream).encode()])
    assert result.complete and result.body is not None
    assert wire.normalize(result.body, CallIds()) == WEATHER_CALL


def test_chat_sample_keeps_usage_and_ids_for_the_record() -> None:
    result = assemble(CHAT.codec, [sample("openai/chat_stream_tool_call.sse").encode()])
    assert result.body is not None
    assert result.body["id"] == "chatcmpl-03" and result.body["object"] == "chat.completion"
    assert result.body["usage"]["total_tokens"] == 28
    assert result.body["choices"][0]["message"]["tool_calls"][0]["id"] == "call_01"


def _split(raw: bytes, cuts: set[int]) -> list[bytes]:
    points = sorted(cuts)
    return [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_chunking_assembles_the_same(data: st.DataObject) -> None:
    wire, stream = data.draw(st.sampled_from(SAMPLE_STREAMS))
    raw = sample(stream).encode()
    if data.draw(st.booleans()):
        raw = raw.replace(b"\n", b"\r\n")
    cuts = data.draw(st.sets(st.integers(0, len(raw)), max_size=60))
    assert assemble(wire.codec, _split(raw, cuts)) == assemble(wire.codec, [raw])


@pytest.mark.parametrize("wire", WIRES, ids=repr)
def test_every_byte_boundary(wire: Wire) -> None:
    raw = b"".join(wire.chunks(OUTPUTS[4]))
    whole = assemble(wire.codec, [raw])
    assert whole.complete
    assert assemble(wire.codec, [raw[i : i + 1] for i in range(len(raw))]) == whole
    for cut in range(0, len(raw) + 1, 7):
        assert assemble(wire.codec, [raw[:cut], raw[cut:]]) == whole


def _with_extra_events(wire: Wire, chunks: list[bytes]) -> list[bytes]:
    """Pings, comments and event types no codec knows, between every event."""
    if wire is ANTHROPIC:
        extra = [encode_event({"type": "ping"}, "ping"), encode_event({"type": "future_event", "x": 1}, "future_event")]
    elif wire is CHAT:
        extra = [b": keep-alive\n\n", encode_event({"type": "future"}, "future_event")]
    else:
        extra = [encode_event({"type": "response.future_thing", "sequence_number": 99}, "response.future_thing")]
    out: list[bytes] = []
    for chunk in chunks:
        out += [chunk, *extra]
    return out


@pytest.mark.parametrize("wire", WIRES, ids=repr)
def test_ping_and_unknown_events_are_ignored(wire: Wire) -> None:
    chunks = wire.chunks(OUTPUTS[3])
    assert assemble(wire.codec, _with_extra_events(wire, chunks)).body == assemble(wire.codec, chunks).body


def test_sdk_accepts_pings_and_unknown_anthropic_events() -> None:
    """The default client skips unknown event types; under strict validation the SDK rejects them."""
    import anthropic

    chunks = _with_extra_events(ANTHROPIC, ANTHROPIC.chunks(OUTPUTS[3]))
    strict = anthropic_client(chunks)
    with pytest.raises(anthropic.APIResponseValidationError):
        list(strict.messages.create(model="m", max_tokens=5, messages=USER, stream=True))
    with anthropic_client(chunks, strict=False).messages.stream(model="m", max_tokens=5, messages=USER) as stream:
        message = stream.get_final_message()
    assert normalized(ANTHROPIC, message.model_dump(), OUTPUTS[3]) == OUTPUTS[3]


ERROR_EVENTS = {
    "anthropic": encode_event(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error"
    ),
    "chat": encode_event({"error": {"message": "Overloaded", "type": "server_error", "param": None, "code": None}}),
    "responses": encode_event(
        {"type": "error", "code": "server_error", "message": "Overloaded", "param": None, "sequence_number": 4},
        "error",
    ),
}


@pytest.mark.parametrize("wire", WIRES, ids=repr)
def test_mid_stream_error_event(wire: Wire) -> None:
    chunks = wire.chunks(OUTPUTS[3])
    broken = [*chunks[:3], ERROR_EVENTS[wire.name], *chunks[3:]]
    assembler = wire.codec.assembler()
    results = [assembler.feed(chunk) for chunk in broken]
    assert results[3] is not None and results[3].status is StreamStatus.ERROR
    assert results[3].error is not None and "Overloaded" in results[3].error
    assert all(r is None for r in results[:3] + results[4:]), "the rest of the stream is ignored"
    assert assembler.finish() is results[3]


def test_responses_failed_event_is_an_error() -> None:
    body = RESPONSES.body(OUTPUTS[0]) | {"status": "failed", "error": {"code": "server_error", "message": "boom"}}
    failed = encode_event({"type": "response.failed", "response": body, "sequence_number": 2}, "response.failed")
    result = assemble(RESPONSES.codec, [*RESPONSES.chunks(OUTPUTS[0])[:2], failed])
    assert (result.status, result.error) == (StreamStatus.ERROR, "boom")


@pytest.mark.parametrize("wire", WIRES, ids=repr)
def test_truncated_stream_ends_early(wire: Wire) -> None:
    raw = b"".join(wire.chunks(OUTPUTS[4]))
    terminal = len(raw) - len(wire.chunks(OUTPUTS[4])[-1])  # where the terminal event starts
    for cut in range(0, terminal, 5):
        result = assemble(wire.codec, [raw[:cut]])
        if wire is CHAT and result.complete:
            # `[DONE]` is optional: a chat stream whose finish_reason chunk arrived whole is complete
            assert b'"finish_reason":"tool_calls"' in raw[:cut]
            continue
        assert result.status is StreamStatus.ENDED_EARLY, cut
        assert result.error is not None and "ended" in result.error


def test_result_arrives_with_the_terminal_event_even_if_never_closed() -> None:
    chunks = ANTHROPIC.chunks(OUTPUTS[0])
    assembler = ANTHROPIC.codec.assembler()
    assert [assembler.feed(chunk) for chunk in chunks[:-1]] == [None] * (len(chunks) - 1)
    assert assembler.result is None
    result = assembler.feed(chunks[-1])
    assert result is not None and result.complete and assembler.result is result
    assert assembler.feed(b"event: junk\ndata: {}\n\n") is None


def test_chat_without_done_is_complete_after_the_finish_reason() -> None:
    chunks = CHAT.chunks(OUTPUTS[0])
    assert chunks[-1] == b"data: [DONE]\n\n"
    result = assemble(CHAT.codec, chunks[:-1])
    assert result.complete and result.body is not None
    assert CHAT.normalize(result.body, CallIds()) == OUTPUTS[0]


def test_chat_tool_calls_with_an_empty_opening_content_normalize() -> None:
    """The API opens with `content: ""` even before tool calls; unstreamed that content is null."""
    raw = sample("openai/chat_stream_tool_call.sse").replace('"content":"Let me check."', '"content":""')
    result = assemble(CHAT.codec, [raw.encode()])
    assert result.body is not None
    assert CHAT.normalize(result.body, CallIds())["type"] == "tool_calls"


def test_anthropic_partial_body_of_a_cut_stream_is_for_diagnostics() -> None:
    chunks = ANTHROPIC.chunks(OUTPUTS[3])
    result = assemble(ANTHROPIC.codec, chunks[:4])
    assert result.status is StreamStatus.ENDED_EARLY
    assert result.body is not None and result.body["content"][0]["text"] == "Let me check."


def test_synthesized_responses_events_are_numbered_and_complete() -> None:
    events = [json.loads(chunk.split(b"data: ", 1)[1]) for chunk in RESPONSES.chunks(OUTPUTS[3])]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]


def test_synthesize_does_not_change_its_input() -> None:
    for wire in WIRES:
        body = wire.body(OUTPUTS[4])
        before = copy.deepcopy(body)
        wire.codec.synthesize(body)
        assert body == before


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def model_outputs(draw: st.DrawFn) -> dict[str, Any]:
    text = draw(st.text(max_size=40))
    count = draw(st.integers(0, 3))
    if count == 0:
        stop = draw(st.sampled_from([None, "length", "refusal"]))
        if stop == "refusal" and not text:
            stop = None
        out: dict[str, Any] = {"type": "final_answer", "text": text}
    else:
        stop = draw(st.sampled_from([None, "length"]))
        calls = [
            {
                "toolCallId": f"call-{n}",
                "toolName": draw(st.from_regex(r"[a-z_]{1,12}", fullmatch=True)),
                "toolInput": draw(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3)),
            }
            for n in range(count)
        ]
        out = {"type": "tool_calls", "calls": calls}
        if text:
            out["text"] = text
    if stop is not None:
        out["stop"] = stop
    return out


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(WIRES), model_outputs(), st.sampled_from([None, 1, 5]), st.data())
def test_any_output_streams_and_assembles_back(
    wire: Wire, out: dict[str, Any], piece_size: int | None, data: st.DataObject
) -> None:
    raw = b"".join(wire.chunks(out, piece_size))
    cuts = data.draw(st.sets(st.integers(0, len(raw)), max_size=20))
    result = assemble(wire.codec, _split(raw, cuts))
    assert result.complete and result.body is not None
    assert normalized(wire, result.body, out) == out


@settings(max_examples=30, deadline=None)
@given(model_outputs(), st.sampled_from([None, 3]))
def test_any_output_through_the_sdk_stream_helpers(out: dict[str, Any], size: int | None) -> None:
    client = anthropic_client(ANTHROPIC.chunks(out, size))
    with client.messages.stream(model="m", max_tokens=5, messages=USER) as stream:
        assert normalized(ANTHROPIC, stream.get_final_message().model_dump(), out) == out
    if out.get("stop") == "length":
        return  # the OpenAI helpers raise on a cut answer (see the tests above)
    with openai_client(CHAT.chunks(out, size)).chat.completions.stream(model="m", messages=USER) as chat:
        assert normalized(CHAT, chat.get_final_completion().model_dump(), out) == out
    with openai_client(RESPONSES.chunks(out, size)).responses.stream(model="m", input="x") as responses:
        assert normalized(RESPONSES, responses.get_final_response().model_dump(), out) == out


@pytest.mark.parametrize("encoding", [None, "identity", "gzip", "deflate", "raw-deflate", "br", "gzip, br"])
def test_content_decoder_feeds_an_assembler_from_encoded_bytes(encoding: str | None) -> None:
    import gzip
    import zlib

    import brotli

    raw = b"".join(ANTHROPIC.chunks(OUTPUTS[3]))
    encoders = {
        "gzip": gzip.compress,
        "deflate": zlib.compress,
        "br": brotli.compress,
    }
    data = raw
    if encoding == "raw-deflate":
        compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        data = compressor.compress(raw) + compressor.flush()
    else:
        for name in [n.strip() for n in (encoding or "").split(",") if n.strip() and n.strip() != "identity"]:
            data = encoders[name](data)
    decoder = ContentDecoder("deflate" if encoding == "raw-deflate" else encoding)
    assembler = ANTHROPIC.codec.assembler()
    out = b""
    for i in range(0, len(data), 5):
        piece = decoder.decode(data[i : i + 5])
        out += piece
        assembler.feed(piece)
    tail = decoder.flush()
    assembler.feed(tail)
    assert out + tail == raw
    assert assembler.finish() == assemble(ANTHROPIC.codec, [raw])


def test_content_decoder_refuses_an_unknown_encoding() -> None:
    with pytest.raises(ValueError, match="unknown content-encoding 'zstd'"):
        ContentDecoder("zstd")


@pytest.mark.parametrize("wire", WIRES, ids=repr)
def test_piece_size_cuts_text_and_arguments_into_more_events(wire: Wire) -> None:
    whole, cut = wire.chunks(OUTPUTS[3]), wire.chunks(OUTPUTS[3], piece_size=2)
    # "Let me check." is 7 deltas of 2 characters instead of 1; '{"city":"Paris"}' 8 instead of 1
    assert len(cut) - len(whole) == (7 - 1) + (8 - 1)
    assert assemble(wire.codec, cut) == assemble(wire.codec, whole)
