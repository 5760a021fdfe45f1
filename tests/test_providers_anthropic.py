"""The Anthropic Messages normalizer (docs/format.md, "Anthropic Messages"): neutral payloads, refusals, and replayed
responses that the
real SDK accepts and that normalize back to the recorded output."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from blackbox.errors import BlackboxUnsupportedError
from blackbox.providers import anthropic as A
from blackbox.providers.neutral import CallIds
from tests.fakeapi import anthropic_message, sample

pytest_plugins = ["tests.conftest_fakeapi"]

CASSETTES = Path(__file__).parent / "fixtures" / "fleet-triage" / "cassettes"
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
NEUTRAL_WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get weather",
    "inputSchema": WEATHER_TOOL["input_schema"],
}


def request(*messages: Any, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 256, "messages": list(messages)}
    body.update(fields)
    return body


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def tool_use(provider_id: str, name: str = "get_weather", tool_input: Any = None) -> dict[str, Any]:
    block = {"type": "tool_use", "id": provider_id, "name": name}
    if tool_input is not None:
        block["input"] = tool_input
    return block


def tool_result(provider_id: str, content: Any = "18C", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": provider_id, "content": content, **extra}


def refused(match: str):
    return pytest.raises(BlackboxUnsupportedError, match=match)


# ---------------------------------------------------------------------------------------------------------
# the original's cassettes: a rebuilt Anthropic conversation normalizes to exactly the recorded payloads


def _provider_id(neutral_id: str) -> str:
    return "toolu_01" + neutral_id.replace("-", "X") + "abcdefghijklmnop"


def _to_anthropic_request(payload: dict[str, Any]) -> dict[str, Any]:
    """The Messages request an agent would have sent for a recorded `model_input` (with provider noise)."""
    messages = []
    for message in payload["messages"]:
        content = message["content"]
        if isinstance(content, list):
            blocks = []
            for part in content:
                if part["type"] == "text":
                    blocks.append({"type": "text", "text": part["text"]})
                elif part["type"] == "tool_use":
                    blocks.append(tool_use(_provider_id(part["toolCallId"]), part["toolName"], part["toolInput"]))
                else:
                    blocks.append(
                        tool_result(
                            _provider_id(part["toolCallId"]),
                            part["result"],
                            cache_control={"type": "ephemeral"},
                        )
                    )
            if message["role"] == "assistant":  # what the SDK hands back: signed thinking and an empty text
                blocks.insert(0, {"type": "thinking", "thinking": "hmm", "signature": "c2ln"})
                blocks.append({"type": "text", "text": ""})
            content = blocks
        messages.append({"role": message["role"], "content": content})
    tools = [
        {"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]} for t in payload["tools"]
    ]
    body = {
        "max_tokens": payload["params"]["maxTokens"],
        "messages": messages,
        "model": payload["model"],
        "system": [{"type": "text", "text": payload["systemPrompt"], "cache_control": {"type": "ephemeral"}}],
        "tools": tools,
        "metadata": {"user_id": "u-1"},
        "service_tier": "auto",
    }
    return body


def _to_anthropic_response(payload: dict[str, Any]) -> dict[str, Any]:
    uses = [
        {"id": _provider_id(call["toolCallId"]), "name": call["toolName"], "input": call["toolInput"]}
        for call in payload.get("calls", [])
    ]
    return anthropic_message(text=payload.get("text"), tool_uses=uses, model="claude-haiku-4-5-20251001")


@pytest.mark.parametrize("name", ["triage-incident", "triage-fixed", "triage-hypothesis"])
def test_recording_the_original_conversations_gives_the_recorded_payloads(name: str) -> None:
    cassette = json.loads((CASSETTES / f"{name}.json").read_text())
    ids = CallIds()
    seen = 0
    for step in cassette["steps"]:
        if step["type"] == "model_input":
            got = A.normalize_request(_to_anthropic_request(step["payload"]), ids)
        elif step["type"] == "model_output":
            got = A.normalize_response(_to_anthropic_response(step["payload"]), ids)
        else:
            continue
        seen += 1
        assert got == step["payload"], f"step {step['index']}"
        # byte for byte, key order included (the original's layout)
        assert json.dumps(got, ensure_ascii=False) == json.dumps(step["payload"], ensure_ascii=False)
    assert seen >= 6


def test_a_late_request_alone_maps_history_ids_in_order() -> None:
    cassette = json.loads((CASSETTES / "triage-incident.json").read_text())
    step = cassette["steps"][14]
    assert A.normalize_request(_to_anthropic_request(step["payload"]), CallIds()) == step["payload"]


# ---------------------------------------------------------------------------------------------------------
# requests


def test_sdk_samples_turn1_and_turn2() -> None:
    ids = CallIds()
    turn1 = A.normalize_request(sample("anthropic/create_turn1.request.json")["json"], ids)
    assert turn1 == {
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [NEUTRAL_WEATHER_TOOL],
        "model": "claude-sonnet-4-5",
        "params": {"maxTokens": 256},
    }
    output = A.normalize_response(sample("anthropic/create_tool_use.response.json"), ids)
    assert output == {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
        "text": "Let me check.",
    }
    turn2 = A.normalize_request(sample("anthropic/create_turn2.request.json")["json"], ids)
    assert turn2["messages"][1:] == [
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
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather", "result": "18C"}],
        },
    ]
    assert A.normalize_response(sample("anthropic/create_final.response.json"), ids) == {
        "type": "final_answer",
        "text": "It is 18C in Paris.",
    }


def test_thinking_blocks_are_dropped_from_history_and_responses() -> None:
    ids = CallIds()
    A.normalize_request(sample("anthropic/thinking_turn1.request.json")["json"], ids)
    out = A.normalize_response(sample("anthropic/thinking_tool_use.response.json"), ids)
    assert out == {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}],
    }
    turn2 = A.normalize_request(sample("anthropic/thinking_turn2.request.json")["json"], ids)
    assert turn2["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "toolCallId": "call-0",
                "toolName": "get_weather",
                "toolInput": {"city": "Paris"},
            }
        ],
    }
    assert turn2["params"] == {"maxTokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}}


def test_roles_other_than_assistant_become_user_and_strings_stay_strings() -> None:
    got = A.normalize_request(request({"role": "system", "content": "a"}, assistant("b"), user("c")), CallIds())
    assert got["messages"] == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    ]


def test_user_text_blocks_become_text_parts() -> None:
    got = A.normalize_request(
        request(
            user(
                [
                    {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "there"},
                ]
            )
        ),
        CallIds(),
    )
    assert got["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]}
    ]


def test_assistant_turns_are_reshaped_text_first_then_tool_uses() -> None:
    body = request(
        user("go"),
        assistant(
            [
                {"type": "text", "text": "First."},
                tool_use("toolu_A", "a", {"x": 1}),
                {"type": "text", "text": ""},
                {"type": "text", "text": "Second."},
                tool_use("toolu_B", "b"),
            ]
        ),
        user([tool_result("toolu_A", "1"), tool_result("toolu_B", "2")]),
    )
    got = A.normalize_request(body, CallIds())
    assert got["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "First.\n\nSecond."},
            {"type": "tool_use", "toolCallId": "call-0", "toolName": "a", "toolInput": {"x": 1}},
            {"type": "tool_use", "toolCallId": "call-1", "toolName": "b", "toolInput": {}},
        ],
    }
    assert [part["toolName"] for part in got["messages"][2]["content"]] == ["a", "b"]


def test_assistant_text_only_blocks_and_empty_turn() -> None:
    got = A.normalize_request(
        request(user("x"), assistant([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])),
        CallIds(),
    )
    assert got["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": "a\n\nb"}]}
    got = A.normalize_request(request(user("x"), assistant([{"type": "redacted_thinking", "data": "z"}])), CallIds())
    assert got["messages"][1] == {"role": "assistant", "content": []}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, ""),
        ("plain", "plain"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\n\nb"),
        ([], ""),
    ],
)
def test_tool_result_content(content: Any, expected: str) -> None:
    block = {"type": "tool_result", "tool_use_id": "toolu_1"}
    if content is not None:
        block["content"] = content
    got = A.normalize_request(request(user("x"), assistant([tool_use("toolu_1")]), user([block])), CallIds())
    assert got["messages"][2]["content"] == [
        {"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather", "result": expected}
    ]


def test_tool_result_null_content_explicitly() -> None:
    got = A.normalize_request(
        request(user("x"), assistant([tool_use("toolu_1")]), user([tool_result("toolu_1", None)])), CallIds()
    )
    assert got["messages"][2]["content"][0]["result"] == ""


def test_tool_result_error_variant() -> None:
    got = A.normalize_request(
        request(
            user("x"),
            assistant([tool_use("toolu_1")]),
            user(
                [
                    tool_result("toolu_1", [{"type": "text", "text": "boom"}], is_error=True),
                    {"type": "text", "text": "go on"},
                ]
            ),
        ),
        CallIds(),
    )
    assert got["messages"][2]["content"] == [
        {"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather", "error": "boom"},
        {"type": "text", "text": "go on"},
    ]


def test_tool_result_name_comes_from_an_earlier_response_when_history_was_trimmed() -> None:
    ids = CallIds()
    A.normalize_response(anthropic_message(tool_uses=[{"id": "toolu_Z", "name": "lookup", "input": {}}]), ids)
    got = A.normalize_request(request(user([tool_result("toolu_Z", "ok")])), ids)
    assert got["messages"][0]["content"][0] == {
        "type": "tool_result",
        "toolCallId": "call-0",
        "toolName": "lookup",
        "result": "ok",
    }


def test_tool_result_without_any_tool_use_is_refused_and_ids_are_untouched() -> None:
    ids = CallIds()
    with refused("tool_result .* not supported yet; send the assistant message"):
        A.normalize_request(request(user("x"), assistant([tool_use("toolu_1")]), user([tool_result("toolu_2")])), ids)
    assert ids.next_index == 0 and ids.lookup("toolu_1") is None


def test_same_provider_id_same_call_id_across_requests() -> None:
    ids = CallIds()
    out = A.normalize_response(
        anthropic_message(tool_uses=[{"id": "toolu_A", "name": "a"}, {"id": "toolu_B", "name": "b"}]), ids
    )
    assert [call["toolCallId"] for call in out["calls"]] == ["call-0", "call-1"]
    history = request(
        user("x"),
        assistant([tool_use("toolu_A", "a", {}), tool_use("toolu_B", "b", {})]),
        user([tool_result("toolu_A"), tool_result("toolu_B")]),
    )
    for _ in range(2):  # the same request twice: nothing new is allocated
        got = A.normalize_request(history, ids)
        assert [p["toolCallId"] for p in got["messages"][1]["content"]] == ["call-0", "call-1"]
        assert [p["toolCallId"] for p in got["messages"][2]["content"]] == ["call-0", "call-1"]
    out2 = A.normalize_response(anthropic_message(tool_uses=[("c", {})]), ids)
    assert out2["calls"][0]["toolCallId"] == "call-2"


def test_replayed_call_ids_normalize_identically_once_bound() -> None:
    ids = CallIds()
    ids.bind("call-3", "call-3")
    got = A.normalize_request(
        request(user("x"), assistant([tool_use("call-3", tool_input={})]), user([tool_result("call-3")])), ids
    )
    assert got["messages"][1]["content"][0]["toolCallId"] == "call-3"
    assert ids.fresh() == "call-4"


def test_system_prompt_string_and_blocks() -> None:
    assert A.normalize_request(request(user("x"), system="Be brief."), CallIds())["systemPrompt"] == "Be brief."
    blocks = [
        {"type": "text", "text": "A"},
        {"type": "text", "text": "B", "cache_control": {"type": "ephemeral"}},
    ]
    assert A.normalize_request(request(user("x"), system=blocks), CallIds())["systemPrompt"] == "A\n\nB"


def test_tools_custom_only_input_schema_renamed_description_defaults() -> None:
    tools = [
        dict(WEATHER_TOOL, cache_control={"type": "ephemeral"}),
        {"name": "noop", "input_schema": {"type": "object"}, "type": "custom"},
        {"name": "bare"},
    ]
    got = A.normalize_request(request(user("x"), tools=tools), CallIds())
    assert got["tools"] == [
        NEUTRAL_WEATHER_TOOL,
        {"name": "noop", "description": "", "inputSchema": {"type": "object"}},
        {"name": "bare", "description": ""},
    ]
    assert A.normalize_request(request(user("x")), CallIds())["tools"] == []


def test_params_mapping_and_dropped_fields() -> None:
    body = request(
        user("x"),
        temperature=0.2,
        top_p=0.9,
        top_k=5,
        tool_choice={"type": "auto"},
        stop_sequences=["END"],
        output_config={"effort": "high"},
        thinking={"type": "enabled", "budget_tokens": 1024},
        metadata={"user_id": "u"},
        service_tier="auto",
        context_management=None,
    )
    got = A.normalize_request(body, CallIds())
    assert got["params"] == {
        "maxTokens": 256,
        "temperature": 0.2,
        "topP": 0.9,
        "topK": 5,
        "toolChoice": {"type": "auto"},
        "stop": ["END"],
        "outputConfig": {"effort": "high"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    assert list(got) == ["messages", "tools", "model", "params"]


def test_no_params_key_when_nothing_is_kept_and_nulls_are_skipped() -> None:
    got = A.normalize_request({"messages": [user("x")], "max_tokens": None, "temperature": None}, CallIds())
    assert got == {"messages": [{"role": "user", "content": "x"}], "tools": []}


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (request(user([{"type": "image", "source": {}}])), "'image' content blocks in a user message"),
        (request(user([{"type": "document", "source": {}}])), "'document' content blocks"),
        (
            request(
                user("x"),
                assistant([tool_use("t")]),
                user([tool_result("t", [{"type": "image", "source": {}}])]),
            ),
            "'image' blocks in a tool_result",
        ),
        (
            request(user("x"), assistant([{"type": "server_tool_use", "id": "s", "name": "web_search"}])),
            "server_tool_use",
        ),
        (
            request(user("x"), tools=[{"type": "web_search_20250305", "name": "web_search"}]),
            "the server tool",
        ),
        (request(user("x"), tools=[dict(WEATHER_TOOL, strict=True)]), "strict tool 'get_weather'"),
        (request(user("x"), mcp_servers=[{"type": "url", "url": "https://x"}]), "mcp_servers"),
        (request(user("x"), system=[{"type": "image"}]), "system prompt"),
    ],
)
def test_request_refusals(body: dict[str, Any], what: str) -> None:
    ids = CallIds()
    with pytest.raises(BlackboxUnsupportedError) as info:
        A.normalize_request(body, ids)
    message = str(info.value)
    assert what in message or re.search(what, message), message
    assert " is not supported yet; " in message
    assert ids.next_index == 0


def test_is_stream_request() -> None:
    assert A.PROVIDER.is_stream(sample("anthropic/create_stream_true.request.json")["json"])
    assert A.PROVIDER.is_stream(sample("anthropic/stream_helper.request.json")["json"])
    assert not A.PROVIDER.is_stream(sample("anthropic/create_turn1.request.json")["json"])


# ---------------------------------------------------------------------------------------------------------
# responses


def test_response_parallel_calls_and_empty_text_skipped() -> None:
    body = anthropic_message(text="", tool_uses=[("a", {"q": 1}), ("b", {})])
    assert A.normalize_response(body, CallIds()) == {
        "type": "tool_calls",
        "calls": [
            {"toolCallId": "call-0", "toolName": "a", "toolInput": {"q": 1}},
            {"toolCallId": "call-1", "toolName": "b", "toolInput": {}},
        ],
    }


def test_response_tool_use_without_input_gets_empty_object() -> None:
    body = anthropic_message(extra_blocks=[{"type": "tool_use", "id": "toolu_x", "name": "a"}], stop_reason="tool_use")
    assert A.normalize_response(body, CallIds())["calls"][0]["toolInput"] == {}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            anthropic_message(text="cut", stop_reason="max_tokens"),
            {"type": "final_answer", "text": "cut", "stop": "length"},
        ),
        (
            anthropic_message(text="No.", stop_reason="refusal"),
            {"type": "final_answer", "text": "No.", "stop": "refusal"},
        ),
        (anthropic_message(stop_reason="end_turn"), {"type": "final_answer", "text": ""}),
        (
            anthropic_message(text="t", tool_uses=[("a", {})], stop_reason="max_tokens"),
            {
                "type": "tool_calls",
                "calls": [{"toolCallId": "call-0", "toolName": "a", "toolInput": {}}],
                "text": "t",
                "stop": "length",
            },
        ),
        (anthropic_message(text="ok", thinking="mull"), {"type": "final_answer", "text": "ok"}),
    ],
)
def test_response_stops(body: dict[str, Any], expected: dict[str, Any]) -> None:
    assert A.normalize_response(body, CallIds()) == expected


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (anthropic_message(text=["a", "b"]), "more than one text block"),
        (
            anthropic_message(tool_uses=[("a", {})], extra_blocks=[{"type": "text", "text": "after"}]),
            "text after a tool_use",
        ),
        (
            anthropic_message(extra_blocks=[{"type": "text", "text": "x", "citations": [{"type": "char_location"}]}]),
            "citations",
        ),
        (anthropic_message(text="x", stop_details={"type": "refusal"}), "stop_details"),
        (anthropic_message(text="x", container={"id": "c"}), "container"),
        (anthropic_message(text="x", stop_reason="pause_turn"), "'pause_turn'"),
        (anthropic_message(text="x", stop_reason="stop_sequence"), "'stop_sequence'"),
        (
            anthropic_message(text="x", stop_reason="model_context_window_exceeded"),
            "model_context_window_exceeded",
        ),
        (anthropic_message(tool_uses=[("a", {})], stop_reason="refusal"), "a refusal with tool calls"),
        (
            anthropic_message(extra_blocks=[{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}]),
            "'server_tool_use' content blocks",
        ),
    ],
)
def test_response_refusals(body: dict[str, Any], what: str) -> None:
    ids = CallIds()
    with pytest.raises(BlackboxUnsupportedError, match="is not supported yet; ") as info:
        A.normalize_response(body, ids)
    assert what in str(info.value)
    assert ids.next_index == 0


# ---------------------------------------------------------------------------------------------------------
# replayed responses


def test_synthesize_shape() -> None:
    output = {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-2", "toolName": "a", "toolInput": {"x": 1}}],
        "text": "Checking.",
    }
    assert A.synthesize_response(output, step_index=7, model="claude-haiku-4-5") == {
        "id": "blackbox-replay-7",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "call-2", "name": "a", "input": {"x": 1}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


@pytest.mark.parametrize(
    ("output", "stop_reason", "blocks"),
    [
        ({"type": "final_answer", "text": "Done."}, "end_turn", ["text"]),
        ({"type": "final_answer", "text": ""}, "end_turn", []),
        ({"type": "final_answer", "text": "cut", "stop": "length"}, "max_tokens", ["text"]),
        ({"type": "final_answer", "text": "No.", "stop": "refusal"}, "refusal", ["text"]),
        (
            {"type": "tool_call", "toolCallId": "call-0", "toolName": "a", "toolInput": {}},
            "tool_use",
            ["tool_use"],
        ),
        (
            {
                "type": "tool_calls",
                "calls": [{"toolCallId": "call-0", "toolName": "a", "toolInput": {}}],
                "stop": "length",
            },
            "max_tokens",
            ["tool_use"],
        ),
    ],
)
def test_synthesize_stop_reasons(output: dict[str, Any], stop_reason: str, blocks: list[str]) -> None:
    body = A.synthesize_response(output, step_index=0, model=None)
    assert body["stop_reason"] == stop_reason
    assert [block["type"] for block in body["content"]] == blocks
    assert body["model"] == ""


def test_synthesize_rejects_non_outputs() -> None:
    with pytest.raises(ValueError):
        A.synthesize_response({"event": "run_completed"}, step_index=0, model="m")


def test_error_body_shape() -> None:
    assert A.error_body("replay diverged at step 3") == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "[blackbox] replay diverged at step 3"},
    }
    assert A.error_body("[blackbox] x")["error"]["message"] == "[blackbox] x"


ROUND_TRIP_OUTPUTS = [
    {"type": "final_answer", "text": "It is 18C in Paris."},
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
            {
                "toolCallId": "call-5",
                "toolName": "get_time",
                "toolInput": {"tz": "Europe/Paris", "nested": [1, {"é": None}]},
            },
        ],
    },
    {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-1", "toolName": "noop", "toolInput": {}}],
        "stop": "length",
    },
]


def _bound_ids(output: dict[str, Any]) -> CallIds:
    """The ids as replay leaves them: every replayed `call-N` handed out and bound to itself."""
    ids = CallIds()
    for call in output.get("calls", []):
        ids.bind(call["toolCallId"], call["toolCallId"])
    return ids


@pytest.mark.parametrize("output", ROUND_TRIP_OUTPUTS, ids=lambda o: o["type"] + "-" + str(o.get("stop", "")))
def test_round_trip_through_the_real_sdk(fake_api, output: dict[str, Any]) -> None:
    body = A.synthesize_response(output, step_index=3, model="claude-haiku-4-5")
    fake_api.queue(copy.deepcopy(body))
    client = fake_api.anthropic()  # strict response validation, no retries
    message = client.messages.create(model="claude-haiku-4-5", max_tokens=50, messages=[user("hi")])
    assert message.id == "blackbox-replay-3" and message.model == "claude-haiku-4-5"
    # what the SDK parsed normalizes back to the recorded output, with the same call-N ids
    assert A.normalize_response(message.model_dump(mode="json"), _bound_ids(output)) == output
    assert A.normalize_response(body, _bound_ids(output)) == output

    if output["type"] != "tool_calls":
        return
    # the agent sends the replayed turn back: the next request normalizes to the recorded history
    fake_api.queue(A.synthesize_response({"type": "final_answer", "text": "ok"}, step_index=5, model="m"))
    results = [tool_result(block.id, "r") for block in message.content if block.type == "tool_use"]
    client.messages.create(
        model="claude-haiku-4-5",
        max_tokens=50,
        messages=[user("hi"), {"role": "assistant", "content": message.content}, user(results)],
    )
    ids = _bound_ids(output)
    sent = A.normalize_request(fake_api.requests[-1].body, ids)
    parts = ([{"type": "text", "text": output["text"]}] if output.get("text") else []) + [
        {"type": "tool_use", **call} for call in output["calls"]
    ]
    assert sent["messages"][1] == {"role": "assistant", "content": parts}
    assert [p["toolCallId"] for p in sent["messages"][2]["content"]] == [c["toolCallId"] for c in output["calls"]]
    assert ids.next_index == int(output["calls"][-1]["toolCallId"].split("-")[1]) + 1


def test_round_trip_async_client(fake_api) -> None:
    output = ROUND_TRIP_OUTPUTS[5]
    fake_api.queue(A.synthesize_response(output, step_index=1, model="m"))

    async def go() -> Any:
        async with fake_api.async_anthropic() as client:
            return await client.messages.create(model="m", max_tokens=10, messages=[user("hi")])

    message = asyncio.run(go())
    assert A.normalize_response(message.model_dump(mode="json"), _bound_ids(output)) == output


def test_error_body_reaches_the_sdk_as_a_bad_request_without_retry(fake_api) -> None:
    from tests.fakeapi import json_reply

    fake_api.queue(json_reply(A.error_body("replay diverged at step 2"), 400))
    import anthropic

    client = fake_api.anthropic(max_retries=2)
    with pytest.raises(anthropic.BadRequestError, match=r"\[blackbox\] replay diverged at step 2"):
        client.messages.create(model="m", max_tokens=10, messages=[user("hi")])
    assert len(fake_api.requests) == 1


def test_a_refused_request_leaves_the_id_map_as_it_was() -> None:
    """`undo_on_error` undoes what the block changed (new ids, renamed tools), also after nested blocks."""
    ids = CallIds()
    assert ids.neutral("toolu_a") == "call-0"
    ids.note_name("call-0", "search")
    with pytest.raises(RuntimeError), ids.undo_on_error():
        assert ids.neutral("toolu_b") == "call-1"
        with ids.undo_on_error():
            ids.note_name("call-0", "renamed")
            ids.note_name("call-1", "fetch")
        raise RuntimeError("refused")
    assert (ids.lookup("toolu_b"), ids.name_of("call-0"), ids.name_of("call-1")) == (None, "search", None)
    assert ids.next_index == 1 and ids.neutral("toolu_c") == "call-1"
    with ids.undo_on_error():
        ids.note_name("call-1", "kept")
    assert ids.name_of("call-1") == "kept"
