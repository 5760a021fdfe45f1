"""The OpenAI Chat Completions normalizer (docs/format.md, "OpenAI Chat Completions"): neutral payloads, refusals,
and replayed responses that
the real SDK accepts and that normalize back to the recorded output."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from blackbox.errors import BlackboxUnsupportedError
from blackbox.providers import openai_chat as O
from blackbox.providers.neutral import CallIds, parse_tool_arguments
from tests.fakeapi import chat_completion, json_reply, sample

pytest_plugins = ["tests.conftest_fakeapi"]

CASSETTES = Path(__file__).parent / "fixtures" / "fleet-triage" / "cassettes"
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "description": "Get weather", "parameters": WEATHER_SCHEMA},
}
NEUTRAL_WEATHER_TOOL = {"name": "get_weather", "description": "Get weather", "inputSchema": WEATHER_SCHEMA}


def request(*messages: Any, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-5.1", "messages": list(messages)}
    body.update(fields)
    return body


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def call(provider_id: str, name: str = "get_weather", arguments: str = '{"city":"Paris"}') -> dict[str, Any]:
    return {"id": provider_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(content: Any = None, *calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, **extra}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def tool(provider_id: str, content: Any = "18C") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": provider_id, "content": content}


# ---------------------------------------------------------------------------------------------------------
# the same conversation sent through Chat Completions normalizes to the original's recorded payloads


def _provider_id(neutral_id: str) -> str:
    return "call_" + neutral_id.replace("-", "") + "Qx7bT2mZ"


def _to_chat_request(payload: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": payload["systemPrompt"]}]
    for message in payload["messages"]:
        content = message["content"]
        if isinstance(content, str):
            messages.append({"role": message["role"], "content": content})
        elif message["role"] == "assistant":
            text = "".join(p["text"] for p in content if p["type"] == "text")
            calls = [
                call(_provider_id(p["toolCallId"]), p["toolName"], json.dumps(p["toolInput"], ensure_ascii=False))
                for p in content
                if p["type"] == "tool_use"
            ]
            messages.append(assistant(text or None, *calls))
        else:
            messages += [tool(_provider_id(p["toolCallId"]), p["result"]) for p in content]
    tools = [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"]},
        }
        for t in payload["tools"]
    ]
    return {
        "model": payload["model"],
        "messages": messages,
        "tools": tools,
        "max_completion_tokens": payload["params"]["maxTokens"],
        "user": "u-1",
        "store": False,
        "metadata": {"k": "v"},
    }


def _to_chat_response(payload: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {"id": _provider_id(c["toolCallId"]), "name": c["toolName"], "arguments": c["toolInput"]}
        for c in payload.get("calls", [])
    ]
    return chat_completion(content=payload.get("text"), tool_calls=calls)


@pytest.mark.parametrize("name", ["triage-incident", "triage-fixed"])
def test_chat_version_of_the_original_conversations_gives_the_recorded_payloads(name: str) -> None:
    cassette = json.loads((CASSETTES / f"{name}.json").read_text())
    ids = CallIds()
    for step in cassette["steps"]:
        if step["type"] == "model_input":
            got = O.normalize_request(_to_chat_request(step["payload"]), ids)
        elif step["type"] == "model_output":
            got = O.normalize_response(_to_chat_response(step["payload"]), ids)
        else:
            continue
        assert json.dumps(got, ensure_ascii=False) == json.dumps(step["payload"], ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------------
# requests


def test_sdk_samples_turn1_and_turn2() -> None:
    ids = CallIds()
    assert O.normalize_request(sample("openai/chat_turn1.request.json")["json"], ids) == {
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [NEUTRAL_WEATHER_TOOL],
        "model": "gpt-5.1",
    }
    assert O.normalize_response(sample("openai/chat_tool_call.response.json"), ids) == {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
    }
    turn2 = O.normalize_request(sample("openai/chat_turn2.request.json")["json"], ids)
    assert turn2["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather", "result": "18C"}],
        },
    ]
    assert O.normalize_response(sample("openai/chat_final.response.json"), ids) == {
        "type": "final_answer",
        "text": "18C in Paris.",
    }


def test_leading_system_and_developer_messages_become_the_system_prompt() -> None:
    body = request(
        {"role": "system", "content": "A"},
        {"role": "developer", "content": [{"type": "text", "text": "B"}, {"type": "text", "text": "C"}]},
        user("hi"),
    )
    got = O.normalize_request(body, CallIds())
    assert got["systemPrompt"] == "A\n\nB\n\nC"
    assert got["messages"] == [{"role": "user", "content": "hi"}]
    assert list(got) == ["messages", "tools", "systemPrompt", "model"]


def test_user_and_plain_assistant_messages_are_strings() -> None:
    got = O.normalize_request(
        request(
            user([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
            assistant("sure"),
            assistant(None),
            user("c"),
        ),
        CallIds(),
    )
    assert got["messages"] == [
        {"role": "user", "content": "a\n\nb"},
        {"role": "assistant", "content": "sure"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "c"},
    ]


def test_assistant_with_tool_calls_and_consecutive_tool_messages() -> None:
    body = request(
        user("go"),
        assistant(
            "Checking both.", call("call_A", "a", '{"x": 1}'), call("call_B", "b", "not json"), call("call_C", "c", "")
        ),
        tool("call_A", "one"),
        tool("call_B", [{"type": "text", "text": "two"}, {"type": "text", "text": "lines"}]),
        tool("call_C", ""),
        assistant("", call("call_D", "d", "{}")),
        tool("call_D", "four"),
    )
    got = O.normalize_request(body, CallIds())
    assert got["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "toolCallId": "call-0", "toolName": "a", "toolInput": {"x": 1}},
                {"type": "tool_use", "toolCallId": "call-1", "toolName": "b", "toolInput": "not json"},
                {"type": "tool_use", "toolCallId": "call-2", "toolName": "c", "toolInput": ""},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "toolCallId": "call-0", "toolName": "a", "result": "one"},
                {"type": "tool_result", "toolCallId": "call-1", "toolName": "b", "result": "two\n\nlines"},
                {"type": "tool_result", "toolCallId": "call-2", "toolName": "c", "result": ""},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "toolCallId": "call-3", "toolName": "d", "toolInput": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "toolCallId": "call-3", "toolName": "d", "result": "four"}],
        },
    ]


def test_tool_message_name_comes_from_an_earlier_response() -> None:
    ids = CallIds()
    O.normalize_response(chat_completion(tool_calls=[{"id": "call_Z", "name": "lookup", "arguments": {}}]), ids)
    got = O.normalize_request(request(tool("call_Z", "ok")), ids)
    assert got["messages"] == [
        {
            "role": "user",
            "content": [{"type": "tool_result", "toolCallId": "call-0", "toolName": "lookup", "result": "ok"}],
        }
    ]


def test_tools_and_params() -> None:
    body = request(
        user("x"),
        tools=[WEATHER_TOOL, {"type": "function", "function": {"name": "bare"}}],
        max_completion_tokens=100,
        temperature=0,
        top_p=1,
        tool_choice="auto",
        response_format={"type": "json_object"},
        stop=["END"],
        parallel_tool_calls=False,
        seed=7,
        reasoning_effort="low",
        presence_penalty=0.1,
        frequency_penalty=0.2,
        logit_bias={"50256": -100},
        logprobs=False,
        top_logprobs=None,
        verbosity="low",
        prediction={"type": "content", "content": "x"},
        modalities=["text"],
        user="someone",
        store=True,
        service_tier="auto",
        metadata={"a": "b"},
        stream_options=None,
        n=1,
    )
    got = O.normalize_request(body, CallIds())
    assert got["tools"] == [NEUTRAL_WEATHER_TOOL, {"name": "bare", "description": ""}]
    assert got["params"] == {
        "maxTokens": 100,
        "temperature": 0,
        "topP": 1,
        "toolChoice": "auto",
        "responseFormat": {"type": "json_object"},
        "stop": ["END"],
        "parallelToolCalls": False,
        "seed": 7,
        "reasoningEffort": "low",
        "presencePenalty": 0.1,
        "frequencyPenalty": 0.2,
        "logitBias": {"50256": -100},
        "logprobs": False,
        "verbosity": "low",
        "prediction": {"type": "content", "content": "x"},
        "modalities": ["text"],
    }
    assert O.normalize_request(request(user("x"), max_tokens=5), CallIds())["params"] == {"maxTokens": 5}
    assert "params" not in O.normalize_request(request(user("x"), max_tokens=None), CallIds())


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (request(user("x"), n=2), "n=2"),
        (request(user("x"), audio={"voice": "alloy", "format": "wav"}), "audio output"),
        (request(user("x"), functions=[{"name": "f"}]), "legacy functions"),
        (request(user("x"), function_call="auto"), "legacy functions"),
        (request(user("x"), max_tokens=1, max_completion_tokens=2), "max_tokens together with max_completion_tokens"),
        (request(user("x"), {"role": "system", "content": "late"}), "a system message after the conversation started"),
        (request(user("x"), {"role": "developer", "content": "late"}), "a developer message after"),
        # a message's name is kept (test_message_names); the system prompt is one text, which holds none
        (request({"role": "system", "content": "x", "name": "bob"}, user("x")), "the name field on a system message"),
        (request(user("x"), assistant(None, refusal="I can't.")), "refusals in the conversation history"),
        (request(user("x"), assistant([{"type": "refusal", "refusal": "no"}])), "refusals in the conversation history"),
        (request(user("x"), tools=[{"type": "custom", "custom": {"name": "c"}}]), "'custom' tools"),
        (request(user("x"), web_search_options={}), "web_search_options"),
        (
            request(user([{"type": "image_url", "image_url": {"url": "data:,"}}])),
            "'image_url' content parts in a user message",
        ),
        (request(user([{"type": "input_audio", "input_audio": {}}])), "'input_audio' content parts"),
        (request(user("x"), assistant(None, audio={"id": "a"})), "audio in the conversation history"),
        (request({"role": "function", "name": None, "content": "x"}), "legacy function messages"),
        (request(user("x"), tool("call_unknown")), "a tool message for 'call_unknown'"),
        (request(user("x"), assistant(None, {"id": "c1", "type": "custom", "custom": {}})), "'custom' tool calls"),
    ],
)
def test_request_refusals(body: dict[str, Any], what: str) -> None:
    ids = CallIds()
    with pytest.raises(BlackboxUnsupportedError) as info:
        O.normalize_request(body, ids)
    assert what in str(info.value)
    assert " is not supported yet; " in str(info.value)
    assert ids.next_index == 0


def test_is_stream_request() -> None:
    assert O.PROVIDER.is_stream(sample("openai/chat_stream_true.request.json")["json"])
    assert O.PROVIDER.is_stream(sample("openai/chat_stream_helper.request.json")["json"])
    assert not O.PROVIDER.is_stream(sample("openai/chat_turn1.request.json")["json"])


# ---------------------------------------------------------------------------------------------------------
# responses


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            chat_completion(content="Checking.", tool_calls=[("a", {"q": 1}), ("b", "{bad")]),
            {
                "type": "tool_calls",
                "calls": [
                    {"toolCallId": "call-0", "toolName": "a", "toolInput": {"q": 1}},
                    {"toolCallId": "call-1", "toolName": "b", "toolInput": "{bad"},
                ],
                "text": "Checking.",
            },
        ),
        (
            chat_completion(tool_calls=[("a", {})], finish_reason="length"),
            {
                "type": "tool_calls",
                "calls": [{"toolCallId": "call-0", "toolName": "a", "toolInput": {}}],
                "stop": "length",
            },
        ),
        (chat_completion(content="Done."), {"type": "final_answer", "text": "Done."}),
        (chat_completion(content=""), {"type": "final_answer", "text": ""}),
        (
            chat_completion(content="cut", finish_reason="length"),
            {"type": "final_answer", "text": "cut", "stop": "length"},
        ),
        (
            chat_completion(refusal="I can't help."),
            {"type": "final_answer", "text": "I can't help.", "stop": "refusal"},
        ),
    ],
)
def test_responses(body: dict[str, Any], expected: dict[str, Any]) -> None:
    assert O.normalize_response(body, CallIds()) == expected


def _with_choice(body: dict[str, Any], **changes: Any) -> dict[str, Any]:
    body["choices"][0].update(changes)
    return body


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (dict(chat_completion(content="x"), choices=[]), "a response with no message"),
        (_with_choice(chat_completion(content="x"), message=None), "a response with no message"),
        (dict(chat_completion(content="x"), choices=[{}, {}]), "several choices"),
        (chat_completion(content="x", finish_reason="content_filter"), "content filter"),
        (
            _with_choice(chat_completion(content="x"), logprobs={"content": [{"token": "x"}], "refusal": None}),
            "logprobs",
        ),
        (chat_completion(content="x", refusal="no"), "a refusal mixed with content or tool calls"),
        (chat_completion(tool_calls=[("a", {})], refusal="no"), "a refusal mixed with content or tool calls"),
        (chat_completion(tool_calls=[("a", {})], finish_reason="content_filter"), "content filter"),
        (chat_completion(tool_calls=[("a", {})], finish_reason="function_call"), "finish reason 'function_call'"),
        (chat_completion(content=""), None),
        (chat_completion(content=None), "a final answer whose content is null"),
    ],
)
def test_response_refusals(body: dict[str, Any], what: str | None) -> None:
    ids = CallIds()
    if what is None:  # an empty final answer is fine; only null content is refused
        O.normalize_response(body, ids)
        return
    with pytest.raises(BlackboxUnsupportedError, match="is not supported yet; ") as info:
        O.normalize_response(body, ids)
    assert what in str(info.value)
    assert ids.next_index == 0


def test_annotations_are_refused() -> None:
    body = chat_completion(content="See [1].")
    body["choices"][0]["message"]["annotations"] = [{"type": "url_citation", "url_citation": {}}]
    with pytest.raises(BlackboxUnsupportedError, match="annotations"):
        O.normalize_response(body, CallIds())


def test_empty_logprobs_are_accepted() -> None:
    body = _with_choice(chat_completion(content="x"), logprobs={"content": [], "refusal": []})
    assert O.normalize_response(body, CallIds()) == {"type": "final_answer", "text": "x"}


# ---------------------------------------------------------------------------------------------------------
# replayed responses


def test_synthesize_shape() -> None:
    output = {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-2", "toolName": "a", "toolInput": {"city": "Zürich", "n": [1, 2]}}],
        "text": "Checking.",
    }
    assert O.synthesize_response(output, step_index=7, model="gpt-5.1", timestamp_ms=1_760_000_000_999) == {
        "id": "blackbox-replay-7",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": "gpt-5.1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Checking.",
                    "refusal": None,
                    "annotations": [],
                    "tool_calls": [
                        {
                            "id": "call-2",
                            "type": "function",
                            "function": {"name": "a", "arguments": '{"city":"Zürich","n":[1,2]}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


@pytest.mark.parametrize(
    ("output", "finish", "content", "refusal"),
    [
        ({"type": "final_answer", "text": "Done."}, "stop", "Done.", None),
        ({"type": "final_answer", "text": ""}, "stop", "", None),
        ({"type": "final_answer", "text": "cut", "stop": "length"}, "length", "cut", None),
        ({"type": "final_answer", "text": "No.", "stop": "refusal"}, "stop", None, "No."),
        ({"type": "tool_call", "toolCallId": "call-0", "toolName": "a", "toolInput": {}}, "tool_calls", None, None),
    ],
)
def test_synthesize_finish_reasons(output: dict[str, Any], finish: str, content: Any, refusal: Any) -> None:
    choice = O.synthesize_response(output, step_index=0, model=None, timestamp_ms=0)["choices"][0]
    assert (choice["finish_reason"], choice["message"]["content"], choice["message"]["refusal"]) == (
        finish,
        content,
        refusal,
    )


def test_error_body_shape() -> None:
    assert O.error_body("the session has finished") == {
        "error": {
            "message": "[blackbox] the session has finished",
            "type": "invalid_request_error",
            "param": None,
            "code": "blackbox",
        }
    }


ROUND_TRIP_OUTPUTS = [
    {"type": "final_answer", "text": "18C in Paris."},
    {"type": "final_answer", "text": ""},
    {"type": "final_answer", "text": "Partial", "stop": "length"},
    {"type": "final_answer", "text": "I can't help with that.", "stop": "refusal"},
    {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
        "text": "Let me check.",
    },
    {
        "type": "tool_calls",
        "calls": [
            {"toolCallId": "call-4", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
            {"toolCallId": "call-5", "toolName": "raw", "toolInput": "{not json"},
            {"toolCallId": "call-6", "toolName": "quoted", "toolInput": "123"},
            {"toolCallId": "call-7", "toolName": "nested", "toolInput": {"a": [1, {"é": None}], "b": 1.5}},
        ],
    },
    {"type": "tool_calls", "calls": [{"toolCallId": "call-1", "toolName": "noop", "toolInput": {}}], "stop": "length"},
]


def _bound_ids(output: dict[str, Any]) -> CallIds:
    ids = CallIds()
    for c in output.get("calls", []):
        ids.bind(c["toolCallId"], c["toolCallId"])
    return ids


@pytest.mark.parametrize("output", ROUND_TRIP_OUTPUTS, ids=lambda o: o["type"] + "-" + str(o.get("stop", "")))
def test_round_trip_through_the_real_sdk(fake_api, output: dict[str, Any]) -> None:
    body = O.synthesize_response(output, step_index=3, model="gpt-5.1", timestamp_ms=1_760_000_123_456)
    fake_api.queue(copy.deepcopy(body))
    client = fake_api.openai()  # strict response validation, no retries
    completion = client.chat.completions.create(model="gpt-5.1", messages=[user("hi")])
    assert completion.id == "blackbox-replay-3" and completion.created == 1_760_000_123
    assert O.normalize_response(completion.model_dump(mode="json"), _bound_ids(output)) == output
    assert O.normalize_response(body, _bound_ids(output)) == output

    if output["type"] != "tool_calls":
        return
    # the agent sends the replayed turn back: the next request normalizes to the recorded history
    message = completion.choices[0].message
    fake_api.queue(
        O.synthesize_response({"type": "final_answer", "text": "ok"}, step_index=5, model="m", timestamp_ms=0)
    )
    client.chat.completions.create(
        model="gpt-5.1",
        messages=[
            user("hi"),
            message.model_dump(exclude_none=True),
            *[tool(tc.id, "r") for tc in message.tool_calls],
        ],
    )
    sent = O.normalize_request(fake_api.requests[-1].body, _bound_ids(output))
    parts = ([{"type": "text", "text": output["text"]}] if output.get("text") else []) + [
        {"type": "tool_use", **c} for c in output["calls"]
    ]
    assert sent["messages"][1] == {"role": "assistant", "content": parts}
    assert [p["toolCallId"] for p in sent["messages"][2]["content"]] == [c["toolCallId"] for c in output["calls"]]


def test_round_trip_async_client(fake_api) -> None:
    output = ROUND_TRIP_OUTPUTS[5]
    fake_api.queue(O.synthesize_response(output, step_index=1, model="m", timestamp_ms=5000))

    async def go() -> Any:
        async with fake_api.async_openai() as client:
            return await client.chat.completions.create(model="m", messages=[user("hi")])

    completion = asyncio.run(go())
    assert O.normalize_response(completion.model_dump(mode="json"), _bound_ids(output)) == output


def test_error_body_reaches_the_sdk_as_a_bad_request_without_retry(fake_api) -> None:
    import openai

    fake_api.queue(json_reply(O.error_body("replay diverged at step 2"), 400))
    client = fake_api.openai(max_retries=2)
    with pytest.raises(openai.BadRequestError, match=r"\[blackbox\] replay diverged at step 2"):
        client.chat.completions.create(model="m", messages=[user("hi")])
    assert len(fake_api.requests) == 1


def test_strict_functions_are_kept_as_strict_tools_and_stream_is_not_compared() -> None:
    tools = [{"type": "function", "function": {"name": "f", "strict": True, "parameters": {"type": "object"}}},
             {"type": "function", "function": {"name": "g"}}]
    plain = O.normalize_request(request(user("x"), tools=tools), CallIds())
    streamed = O.normalize_request(request(user("x"), tools=tools, stream=True,
                                         stream_options={"include_usage": True}), CallIds())
    assert plain == streamed
    assert plain["params"]["strictTools"] == ["f"]
    assert [tool["name"] for tool in plain["tools"]] == ["f", "g"]


def test_arguments_holding_nan_stay_the_raw_string() -> None:
    """JavaScript's JSON.parse refuses NaN and Infinity, so such arguments are not JSON: kept as written."""
    assert parse_tool_arguments('{"x": NaN}') == '{"x": NaN}'
    assert parse_tool_arguments("-Infinity") == "-Infinity"
    assert parse_tool_arguments('{"x": 1.5}') == {"x": 1.5}
