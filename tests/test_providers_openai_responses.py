"""The OpenAI Responses API codec: neutral payloads, refusals before sending, and replayed Responses objects that
the real SDK accepts under strict validation and that normalize back to the recorded output."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from blackbox.errors import BlackboxUnsupportedError
from blackbox.providers import openai_responses as R
from blackbox.providers.neutral import CallIds
from tests.fakeapi import json_reply, sample

pytest_plugins = ["tests.conftest_fakeapi"]

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get weather",
    "parameters": WEATHER_SCHEMA,
    "strict": True,
}
NEUTRAL_WEATHER_TOOL = {"name": "get_weather", "description": "Get weather", "inputSchema": WEATHER_SCHEMA}


def request(*items: Any, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-5.1", "input": list(items)}
    body.update(fields)
    return body


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def function_call(call_id: str, name: str = "get_weather", arguments: str = '{"city":"Paris"}') -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def output(call_id: str, text: Any = "18C") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


# ---------------------------------------------------------------------------------------------------------
# requests


def test_sdk_sample_turn1_and_the_tool_call_response() -> None:
    ids = CallIds()
    assert R.normalize_request(sample("openai/responses_turn1.request.json")["json"], ids) == {
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [NEUTRAL_WEATHER_TOOL],
        "model": "gpt-5.1",
        "params": {"strictTools": ["get_weather"]},
    }
    assert R.normalize_response(sample("openai/responses_tool_call.response.json"), ids) == {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
        "text": "Let me check.",
    }
    assert R.normalize_response(sample("openai/responses_final.response.json"), ids) == {
        "type": "final_answer",
        "text": "18C in Paris.",
    }


def test_sdk_sample_turn2_uses_server_state_and_is_refused() -> None:
    ids = CallIds()
    with pytest.raises(BlackboxUnsupportedError, match=r"previous_response_id .* is not supported yet; send the"):
        R.normalize_request(sample("openai/responses_turn2.request.json")["json"], ids)
    assert ids.next_index == 0


def test_stream_requests() -> None:
    for name in ("responses_stream_true", "responses_stream_helper"):
        body = sample(f"openai/{name}.request.json")["json"]
        assert R.is_stream_request(body)
        unstreamed = {key: value for key, value in body.items() if key != "stream"}
        assert R.normalize_request(body, CallIds()) == R.normalize_request(unstreamed, CallIds())
    assert not R.is_stream_request(sample("openai/responses_turn1.request.json")["json"])


def test_reasoning_output_items_are_dropped() -> None:
    body = sample("openai/responses_reasoning_tool_call.response.json")
    assert R.normalize_response(body, CallIds()) == {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
    }


# What openai-agents 0.24 sends (observed through a mock transport), for Runner.run and Runner.run_streamed:
# `include: []`, short-form user messages, echoed assistant message and function_call items with their `id` and
# `status`, tool results stringified with str().
AGENTS_TOOL = {
    "name": "get_weather",
    "parameters": {
        "properties": {"city": {"title": "City", "type": "string"}},
        "required": ["city"],
        "title": "get_weather_args",
        "type": "object",
        "additionalProperties": False,
    },
    "strict": True,
    "type": "function",
    "description": "Get weather.",
}
AGENTS_TURN2 = {
    "model": "gpt-4.1",
    "include": [],
    "input": [
        {"content": "Weather in Paris and Rome?", "role": "user"},
        {
            "id": "msg_68f0a1b2c3d4e5f6",
            "content": [{"annotations": [], "text": "Let me check.", "type": "output_text", "logprobs": []}],
            "role": "assistant",
            "status": "completed",
            "type": "message",
        },
        {"id": "rs_01", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA=="},
        {
            "arguments": '{"city":"Paris"}',
            "call_id": "call_Xk2pQ",
            "name": "get_weather",
            "type": "function_call",
            "id": "fc_68f0a1b2aa",
            "status": "completed",
        },
        {
            "arguments": '{"city":"Rome"}',
            "call_id": "call_Yv7wR",
            "name": "get_weather",
            "type": "function_call",
            "id": "fc_68f0a1b2bb",
            "status": "completed",
        },
        {"call_id": "call_Xk2pQ", "output": "{'city': 'Paris', 'temp': 18}", "type": "function_call_output"},
        {"call_id": "call_Yv7wR", "output": "{'city': 'Rome', 'temp': 18}", "type": "function_call_output"},
    ],
    "instructions": "Be brief.",
    "tools": [AGENTS_TOOL],
    "stream": True,
}


def test_openai_agents_request() -> None:
    ids = CallIds()
    payload = R.normalize_request(AGENTS_TURN2, ids)
    neutral_tool = {"name": "get_weather", "description": "Get weather.", "inputSchema": AGENTS_TOOL["parameters"]}
    assert payload == {
        "messages": [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me check."},
                    {
                        "type": "tool_use",
                        "toolCallId": "call-0",
                        "toolName": "get_weather",
                        "toolInput": {"city": "Paris"},
                    },
                    {
                        "type": "tool_use",
                        "toolCallId": "call-1",
                        "toolName": "get_weather",
                        "toolInput": {"city": "Rome"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "toolCallId": "call-0",
                        "toolName": "get_weather",
                        "result": "{'city': 'Paris', 'temp': 18}",
                    },
                    {
                        "type": "tool_result",
                        "toolCallId": "call-1",
                        "toolName": "get_weather",
                        "result": "{'city': 'Rome', 'temp': 18}",
                    },
                ],
            },
        ],
        "tools": [neutral_tool],
        "systemPrompt": "Be brief.",
        "model": "gpt-4.1",
        "params": {"strictTools": ["get_weather"]},
    }
    text = json.dumps(payload)
    assert "fc_" not in text and "call_" not in text and "msg_" not in text and "rs_" not in text


def test_same_conversation_with_other_provider_ids_normalizes_identically() -> None:
    other = copy.deepcopy(AGENTS_TURN2)
    text = json.dumps(other).replace("call_Xk2pQ", "call_AAA").replace("fc_68f0a1b2aa", "fc_zzz")
    assert R.normalize_request(json.loads(text), CallIds()) == R.normalize_request(AGENTS_TURN2, CallIds())


def test_string_input_instructions_and_system_messages() -> None:
    body = {
        "model": "gpt-5.1",
        "instructions": "Be brief.",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Use metric."}]},
            {"role": "system", "content": "No emojis."},
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}],
            },
            {"role": "assistant", "content": "Earlier answer."},
            user("next"),
        ],
    }
    assert R.normalize_request(body, CallIds()) == {
        "messages": [
            {"role": "user", "content": "a\n\nb"},
            {"role": "assistant", "content": "Earlier answer."},
            {"role": "user", "content": "next"},
        ],
        "tools": [],
        "systemPrompt": "Be brief.\n\nUse metric.\n\nNo emojis.",
        "model": "gpt-5.1",
    }
    assert R.normalize_request({"model": "m", "input": "hi"}, CallIds())["messages"] == [user("hi")]


def test_params() -> None:
    body = request(
        user("x"),
        max_output_tokens=256,
        temperature=0.2,
        top_p=0.9,
        tool_choice="required",
        parallel_tool_calls=False,
        top_logprobs=None,
        max_tool_calls=3,
        truncation="auto",
        text={"format": {"type": "json_object"}, "verbosity": "low"},
        reasoning={"effort": "high", "summary": "auto"},
        store=True,
        metadata={"k": "v"},
        user="u-1",
        service_tier="auto",
        include=["reasoning.encrypted_content"],
        prompt_cache_key="abc",
        safety_identifier="s",
        stream=False,
    )
    assert R.normalize_request(body, CallIds())["params"] == {
        "maxTokens": 256,
        "temperature": 0.2,
        "topP": 0.9,
        "toolChoice": "required",
        "parallelToolCalls": False,
        "maxToolCalls": 3,
        "truncation": "auto",
        "responseFormat": {"type": "json_object"},
        "verbosity": "low",
        "reasoningEffort": "high",
        "reasoningSummary": "auto",
    }
    assert "params" not in R.normalize_request(request(user("x"), store=False, include=[]), CallIds())


def test_function_call_output_as_text_parts_and_unparsable_arguments() -> None:
    body = request(
        user("x"),
        function_call("call_1", arguments="{not json"),
        output("call_1", [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]),
    )
    messages = R.normalize_request(body, CallIds())["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "toolCallId": "call-0", "toolName": "get_weather", "toolInput": "{not json"}],
    }
    assert messages[2]["content"][0]["result"] == "a\n\nb"


BUILTIN = {"type": "web_search", "search_context_size": "low"}


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (request(user("x"), previous_response_id="resp_1"), "previous_response_id"),
        (request(user("x"), conversation="conv_1"), "conversation (a conversation kept"),
        (request(user("x"), prompt={"id": "pmpt_1"}), "a stored prompt template"),
        (request(user("x"), background=True), "background responses"),
        (request(user("x"), include=["message.output_text.logprobs"]), "include='message.output_text.logprobs'"),
        (request(user("x"), include="reasoning.encrypted_content"), "an include value that is not a list"),
        (request(user("x"), tools=[BUILTIN]), "the built-in tool 'web_search' is not supported yet; Blackbox records"),
        (
            request(user("x"), tools=[{"type": "file_search", "vector_store_ids": []}]),
            "the built-in tool 'file_search'",
        ),
        (request(user("x"), tools=[{"type": "mcp", "server_label": "x"}]), "the built-in tool 'mcp'"),
        (request(user("x"), tools=[{"type": "custom", "name": "c"}]), "the built-in tool 'custom'"),
        (
            request(user("x"), tools=[{"type": "function", "function": {"name": "f"}}]),
            "a nested Chat Completions tool",
        ),
        (request({"type": "item_reference", "id": "msg_1"}), "item_reference input items"),
        (request(user("x"), {"type": "web_search_call", "id": "ws_1"}), "'web_search_call' input items"),
        (request(user("x"), {"role": "system", "content": "late"}), "a system message after the conversation"),
        (request(user("x"), output("call_unknown")), "a function_call_output for 'call_unknown'"),
        (request(user("x"), {"type": "function_call", "name": "f", "arguments": "{}"}), "without a call_id"),
        (request(user([{"type": "input_image", "image_url": "data:,"}])), "'input_image' content parts"),
        (request(user("x"), {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]}), "refusals"),
        (request(user("x"), {"role": "tool", "content": "x"}), "input messages with role 'tool'"),
        ({"model": "m", "input": 3}, "input of type int"),
        ({"model": "m", "input": "x", "instructions": ["a"]}, "instructions that are not a string"),
        ({"model": "m", "input": "x", "text": "plain"}, "a text value that is not an object"),
    ],
)
def test_request_refusals(body: dict[str, Any], what: str) -> None:
    ids = CallIds()
    with pytest.raises(BlackboxUnsupportedError) as info:
        R.normalize_request(body, ids)
    assert what in str(info.value)
    assert " is not supported yet; " in str(info.value)
    assert ids.next_index == 0


def test_refused_request_leaves_ids_unchanged() -> None:
    ids = CallIds()
    with pytest.raises(BlackboxUnsupportedError):
        R.normalize_request(request(user("x"), function_call("call_1"), output("call_2")), ids)
    assert ids.next_index == 0 and ids.lookup("call_1") is None


# ---------------------------------------------------------------------------------------------------------
# responses


def response(*items: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body = copy.deepcopy(sample("openai/responses_final.response.json"))
    body["output"] = list(items)
    body.update(fields)
    return body


def message(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": list(parts)}


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "output_text", "text": value, "annotations": [], **extra}


def fc(call_id: str, name: str = "get_weather", arguments: str = '{"city":"Paris"}') -> dict[str, Any]:
    return {"id": "fc_1", "type": "function_call", "status": "completed", **function_call(call_id, name, arguments)}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (response(message(text("Done."))), {"type": "final_answer", "text": "Done."}),
        (response(), {"type": "final_answer", "text": ""}),
        (response(message(text(""))), {"type": "final_answer", "text": ""}),
        (
            response(message(text("cut")), status="incomplete", incomplete_details={"reason": "max_output_tokens"}),
            {"type": "final_answer", "text": "cut", "stop": "length"},
        ),
        (
            response(message({"type": "refusal", "refusal": "No."})),
            {"type": "final_answer", "text": "No.", "stop": "refusal"},
        ),
        (
            response(fc("call_a"), fc("call_b", "get_time", '{"tz":"UTC"}')),
            {
                "type": "tool_calls",
                "calls": [
                    {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
                    {"toolCallId": "call-1", "toolName": "get_time", "toolInput": {"tz": "UTC"}},
                ],
            },
        ),
        (
            response(
                fc("call_a"),
                status="incomplete",
                incomplete_details={"reason": "max_output_tokens"},
            ),
            {
                "type": "tool_calls",
                "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
                "stop": "length",
            },
        ),
    ],
)
def test_responses(body: dict[str, Any], expected: dict[str, Any]) -> None:
    assert R.normalize_response(body, CallIds()) == expected


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (response(message(text("a"), text("b"))), "more than one text part"),
        (response(fc("call_a"), message(text("after"))), "text after a function call"),
        (response(message(text("x", annotations=[{"type": "url_citation"}]))), "annotations in a response"),
        (response(message(text("x", logprobs=[{"token": "x"}]))), "logprobs in a response"),
        (response(message({"type": "refusal", "refusal": "No."}, text("but"))), "a refusal mixed"),
        (response(message({"type": "refusal", "refusal": "No."}), fc("call_a")), "a refusal mixed"),
        (response({"type": "web_search_call", "id": "ws_1", "status": "completed"}), "'web_search_call' output"),
        (response(status="incomplete", incomplete_details={"reason": "content_filter"}), "an incomplete response"),
        (response(status="in_progress"), "status 'in_progress'"),
        (response(error={"code": "server_error", "message": "x"}, status="failed"), "a failed response"),
        ({"object": "response"}, "without an output list"),
    ],
)
def test_response_refusals(body: dict[str, Any], what: str) -> None:
    ids = CallIds()
    with pytest.raises(BlackboxUnsupportedError) as info:
        R.normalize_response(body, ids)
    assert what in str(info.value)
    assert ids.next_index == 0


# ---------------------------------------------------------------------------------------------------------
# replayed responses


def test_synthesize_shape() -> None:
    out = {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-2", "toolName": "a", "toolInput": {"city": "Zürich"}}],
        "text": "Checking.",
    }
    body = R.synthesize_response(out, step_index=7, model="gpt-5.1", timestamp_ms=1_760_000_000_999)
    assert body["id"] == "blackbox-replay-7" and body["object"] == "response"
    assert body["created_at"] == 1_760_000_000 and body["model"] == "gpt-5.1" and body["status"] == "completed"
    assert body["output"] == [
        {
            "id": "msg_blackbox_7",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {
            "id": "fc_blackbox_7_0",
            "type": "function_call",
            "call_id": "call-2",
            "name": "a",
            "arguments": '{"city":"Zürich"}',
            "status": "completed",
        },
    ]
    assert body["usage"]["input_tokens_details"]["cache_write_tokens"] == 0


def test_synthesize_rejects_other_payloads() -> None:
    with pytest.raises(ValueError, match="not a model_output"):
        R.synthesize_response({"type": "tool_result"}, step_index=0, model=None, timestamp_ms=0)


def test_error_body_shape() -> None:
    assert R.error_body("replay diverged")["error"]["message"] == "[blackbox] replay diverged"
    assert R.error_body("[blackbox] x")["error"]["message"] == "[blackbox] x"


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
            {"toolCallId": "call-7", "toolName": "nested", "toolInput": {"a": [1, {"é": None}], "b": 1.5}},
        ],
    },
    {"type": "tool_calls", "calls": [{"toolCallId": "call-1", "toolName": "noop", "toolInput": {}}], "stop": "length"},
    {"type": "tool_call", "toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
]


def _bound_ids(out: dict[str, Any]) -> CallIds:
    ids = CallIds()
    calls = out.get("calls") or ([out] if out["type"] == "tool_call" else [])
    for c in calls:
        ids.bind(c["toolCallId"], c["toolCallId"])
    return ids


def _as_tool_calls(out: dict[str, Any]) -> dict[str, Any]:
    if out["type"] != "tool_call":
        return out
    return {"type": "tool_calls", "calls": [{k: out[k] for k in ("toolCallId", "toolName", "toolInput")}]}


@pytest.mark.parametrize("out", ROUND_TRIP_OUTPUTS, ids=lambda o: o["type"] + "-" + str(o.get("stop", "")))
def test_round_trip_through_the_real_sdk(fake_api, out: dict[str, Any]) -> None:
    body = R.synthesize_response(out, step_index=3, model="gpt-5.1", timestamp_ms=1_760_000_123_456)
    fake_api.queue(copy.deepcopy(body))
    client = fake_api.openai()  # strict response validation, no retries
    got = client.responses.create(model="gpt-5.1", input="hi")
    assert got.id == "blackbox-replay-3" and got.created_at == 1_760_000_123
    assert R.normalize_response(got.model_dump(mode="json"), _bound_ids(out)) == _as_tool_calls(out)
    if out.get("stop") != "refusal":
        assert got.output_text == out.get("text", "")

    calls = [item for item in got.output if item.type == "function_call"]
    if not calls:
        return
    # the agent sends the replayed turn back (as openai-agents does: items echoed with id and status)
    fake_api.queue(
        R.synthesize_response({"type": "final_answer", "text": "ok"}, step_index=5, model="m", timestamp_ms=0)
    )
    echoed = [item.model_dump(exclude_none=True) for item in got.output]
    client.responses.create(
        model="gpt-5.1",
        input=[user("hi"), *echoed, *[output(c.call_id, "r") for c in calls]],
    )
    sent = R.normalize_request(fake_api.requests[-1].body, _bound_ids(out))
    expected = _as_tool_calls(out)
    parts = ([{"type": "text", "text": expected["text"]}] if expected.get("text") else []) + [
        {"type": "tool_use", **c} for c in expected["calls"]
    ]
    assert sent["messages"][1] == {"role": "assistant", "content": parts}
    assert [p["toolCallId"] for p in sent["messages"][2]["content"]] == [c["toolCallId"] for c in expected["calls"]]


def test_round_trip_async_client(fake_api) -> None:
    out = ROUND_TRIP_OUTPUTS[5]
    fake_api.queue(R.synthesize_response(out, step_index=1, model="m", timestamp_ms=5000))

    async def go() -> Any:
        async with fake_api.async_openai() as client:
            return await client.responses.create(model="m", input="hi")

    got = asyncio.run(go())
    assert R.normalize_response(got.model_dump(mode="json"), _bound_ids(out)) == out


def test_error_body_reaches_the_sdk_as_a_bad_request_without_retry(fake_api) -> None:
    import openai

    fake_api.queue(json_reply(R.error_body("previous_response_id is not supported yet"), 400))
    client = fake_api.openai(max_retries=2)
    with pytest.raises(openai.BadRequestError, match=r"\[blackbox\] previous_response_id"):
        client.responses.create(model="m", input="hi")
    assert len(fake_api.requests) == 1


# What pydantic-ai 2.68's OpenAIResponsesModel sends (observed against the fake API) for the second turn.
PYDANTIC_AI_TURN2 = {
    "model": "gpt-5.1",
    "stream": False,
    "include": ["reasoning.encrypted_content"],
    "input": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "id": "msg_RXgLXj8PKtlGWfyJjJewqz",
            "content": [{"text": "Let me check.", "type": "output_text", "annotations": []}],
            "type": "message",
            "status": "completed",
        },
        {
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
            "call_id": "call_AOvD0OHHp2G63MTG4AJxMID9",
            "type": "function_call",
            "id": "fc_0U4XS8XvKzcma7qpN8A2d7",
        },
        {"type": "function_call_output", "call_id": "call_AOvD0OHHp2G63MTG4AJxMID9", "output": "18C in Paris"},
    ],
    "instructions": "Be brief.",
    "tool_choice": "auto",
    "tools": [{**WEATHER_TOOL, "description": "Get weather."}],
}


def test_pydantic_ai_request() -> None:
    payload = R.normalize_request(PYDANTIC_AI_TURN2, CallIds())
    assert payload["systemPrompt"] == "Be brief."
    assert payload["params"] == {"toolChoice": "auto", "strictTools": ["get_weather"]}
    assert payload["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather", "result": "18C in Paris"}
            ],
        },
    ]
