"""What-if on a Gemini run, and Gemini's generation parameters, through the real google-genai SDK and CLI.

`blackbox what-if --live` continues a recorded run itself: each model turn it sends back carries the thought
parts and `thoughtSignature`s the recorded outputs kept, as google-genai sends them back in a multi-turn chat (the
fake API, like Gemini 3, answers 400 to a function-call turn sent back without its signature).  Every
`generationConfig` parameter is its own: changing one alone makes a replay diverge, and what-if sends each back
under its own name, all of them, as the SDK sent them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import blackbox
from blackbox.cli import app
from blackbox.errors import ReplayDivergenceError
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI
from tests.fakeapi_gemini import gemini_response, last_function_responses, signed_turns

genai = pytest.importorskip("google.genai")
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types  # noqa: E402

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "AIzaSyFAKE-gemini-test-key-0123456789"
MODEL = "gemini-3-pro-preview"
SIG_CALL, SIG_TEXT, SIG_AGAIN = "c2lnbmF0dXJlLWNhbGw=", "c2lnbmF0dXJlLXRleHQ=", "c2lnbmF0dXJlLWFnYWlu"
ISSUED = {SIG_CALL, SIG_TEXT, SIG_AGAIN}
WEATHER = types.FunctionDeclaration(
    name="get_weather", description="The weather in a city.",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
BOTH = gemini_response(calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
                       thought="I should look both up.", signature=SIG_CALL, model=MODEL)


def final(body: dict[str, Any]) -> dict[str, Any]:
    results = [value.get("result") for value in last_function_responses(body)]
    return gemini_response(text="Weather: " + "; ".join(map(str, results)), signature=SIG_TEXT, model=MODEL)


def record(fake: FakeAPI, out: Path) -> None:
    """A google-genai chat with manual function calling (the SDK sends each model turn back as it received it)."""
    bb = blackbox.session("record", out=out)
    weather = bb.tool("get_weather", lambda city: f"sunny in {city}")
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[WEATHER])],
                                         automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    chat = genai.Client(api_key=KEY, http_options=bb.genai_http_options(base_url=fake.url)).chats.create(
        model=MODEL, config=config)
    response = chat.send_message("Weather in Paris and Rome?")
    while response.function_calls:
        response = chat.send_message([types.Part.from_function_response(name=call.name, response={
            "result": weather(**call.args)}) for call in response.function_calls])
    bb.finish(result=response.text)


def without_ids(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A model turn's parts with the calls' ids left out (the API gives none; what-if sends each `call-N`)."""
    parts = copy.deepcopy(parts)
    for part in parts:
        part.get("functionCall", {}).pop("id", None)
    return parts


def test_what_if_live_sends_back_the_thoughts_and_signatures_as_google_genai_does(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = tmp_path / "parent.json"
    fake_api.brain = signed_turns([BOTH, final], ISSUED)
    record(fake_api, parent)  # the strict fake took the SDK's own second request
    sent_by_the_sdk = fake_api.requests[1].body["contents"][1]["parts"]
    assert sent_by_the_sdk[1]["thoughtSignature"] == SIG_CALL  # the SDK sends back what it got

    fake_api.reset()  # the continuation: the model asks again (a new signature), then answers
    again = gemini_response(calls=[("get_weather", {"city": "Paris"})], thought="Check Paris again.",
                            signature=SIG_AGAIN, model=MODEL)
    fake_api.brain = signed_turns([BOTH, again, final], ISSUED)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_api.url)
    out = tmp_path / "fork.json"
    result = CliRunner().invoke(app, ["what-if", str(parent), "--at", "3", "--set", '"snowy"', "--out", str(out),
                                      "--live"])
    assert result.exit_code == 0, result.output
    first, second = (request.body["contents"] for request in fake_api.requests[:2])
    assert without_ids(first[1]["parts"]) == sent_by_the_sdk  # the parent's turn, as google-genai sent it back
    assert second[3]["parts"][0] == {"text": "Check Paris again.", "thought": True}  # the continuation's own turn
    assert second[3]["parts"][1]["thoughtSignature"] == SIG_AGAIN
    fork = load(out)
    assert verify(fork).ok and fork.steps[-2].payload["text"] == "Weather: sunny in Paris"
    assert len(fake_api.requests) == 2 and not fake_api.unanswered


def test_a_turn_no_recorded_output_gave_carries_googles_placeholder() -> None:
    from blackbox.providers.gemini_whatif import build_request

    history = {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [
        {"type": "tool_use", "toolCallId": "call-0", "toolName": "f", "toolInput": {}}]}], "tools": []}
    (call,) = build_request(history)["contents"][1]["parts"]
    assert call["thoughtSignature"] == "skip_thought_signature_validator"
    signed = build_request(history, [{"type": "tool_calls", "calls": [
        {"toolCallId": "call-0", "toolName": "f", "toolInput": {}}], "signatures": {"call-0": SIG_CALL}}])
    assert signed["contents"][1]["parts"][0]["thoughtSignature"] == SIG_CALL


# ---------------------------------------------------------------------------------------------------------
# generation parameters, each under its own name

#: Every generationConfig parameter Blackbox names (and two it keeps as they came): a value, another value, and
#: where a replay finds the change (the neutral param's own name).
PARAMS: dict[str, tuple[Any, Any, str]] = {
    "temperature": (0.3, 0.4, "temperature"), "top_p": (0.8, 0.9, "topP"), "top_k": (20, 21, "topK"),
    "max_output_tokens": (200, 201, "maxTokens"), "stop_sequences": (["END"], ["STOP"], "stop[0]"),
    "seed": (7, 8, "seed"), "presence_penalty": (0.1, 0.15, "presencePenalty"),
    "frequency_penalty": (0.2, 0.25, "frequencyPenalty"),
    "thinking_config": ({"thinking_budget": 64}, {"thinking_budget": 65}, "thinking.thinking_budget"),
    "response_mime_type": ("application/json", "text/x.enum", "responseMimeType"),
    "response_json_schema": ({"type": "object"}, {"type": "object", "title": "t"}, "responseJsonSchema.title"),
    "response_logprobs": (True, False, "generationConfig.responseLogprobs"),
    "logprobs": (2, 3, "generationConfig.logprobs"),
}


def ask(bb: blackbox.Session, fake: FakeAPI, changed: str | None = None) -> Any:
    config = {name: (values[1] if name == changed else values[0]) for name, values in PARAMS.items()}
    client = genai.Client(api_key=KEY, http_options=bb.genai_http_options(base_url=fake.url))
    return client.models.generate_content(model=MODEL, contents="Weather?", config=config).text


def test_each_generation_parameter_is_its_own_on_replay_and_in_what_if(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = tmp_path / "params.json"
    fake_api.queue(gemini_response(text='{"ok": true}', model=MODEL))
    bb = blackbox.session("record", out=parent)
    assert ask(bb, fake_api) == '{"ok": true}'
    bb.finish()
    sent_config = fake_api.requests[0].body["generationConfig"]
    assert len(sent_config) == len(PARAMS)  # the SDK sent every one (under its API name)

    bb = blackbox.session("replay", cassette=parent)
    assert ask(bb, fake_api) == '{"ok": true}'
    bb.finish()
    for name, (_, _, where) in PARAMS.items():  # one changed alone diverges, at its own name
        bb = blackbox.session("replay", cassette=parent)
        with pytest.raises((genai_errors.ClientError, ReplayDivergenceError), match="replay diverged at step 0"):
            ask(bb, fake_api, changed=name)
        with pytest.raises(ReplayDivergenceError) as diverged:
            bb.finish()
        assert diverged.value.path == f"params.{where}", name

    fake_api.reset()
    fake_api.queue(gemini_response(text='{"ok": false}', model=MODEL))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_api.url)
    from blackbox.fork.whatif import LiveModel
    from blackbox.providers.neutral import CallIds

    request = load(parent).steps[0].payload
    LiveModel("gemini").reply(request, CallIds())
    assert fake_api.requests[0].body["generationConfig"] == sent_config  # each under its own name, all of them
