"""`fork --model-only --provider NAME` (the older form of `blackbox what-if`) from the command line:
`--provider responses` continues a run the real `openai` SDK recorded through the Responses API (a GPT model alone
would mean Chat Completions), and `what-if --provider`'s help names every registered provider (read from the
registry, so a new provider appears by itself)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

import blackbox
from blackbox.cli import app
from blackbox.format.cassette import load
from blackbox.format.diff import diff
from blackbox.format.verify import verify
from blackbox.providers import PROVIDERS
from tests.cli_helpers import invoke
from tests.fakeapi import FakeAPI, last_tool_results, response_object, weather_brain

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "sk-proj-whatif-responses-0123456789abcdefghij"
TOOLS = [{"type": "function", "name": "get_weather", "description": "The weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]


def record_responses_run(fake: FakeAPI, out: Path) -> None:
    """A Responses tool loop (the real SDK, `client.responses.create`) recorded against the fake API."""
    fake.brain = weather_brain("responses", model="gpt-5.1")
    bb = blackbox.session("record", out=out)
    weather = bb.tool("get_weather", lambda city: f"sunny in {city}")
    client = openai.OpenAI(base_url=fake.openai_url, api_key=KEY, http_client=bb.http_client(), max_retries=0)
    items: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    while True:
        response = client.responses.create(model="gpt-5.1", input=items, tools=TOOLS, store=False)  # type: ignore[arg-type]
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            bb.finish(result=response.output_text)
            return
        items += [item.model_dump(exclude_none=True) for item in response.output]
        items += [{"type": "function_call_output", "call_id": call.call_id,
                   "output": weather(**json.loads(call.arguments))} for call in calls]


def test_model_only_live_with_provider_responses_continues_a_responses_run(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = tmp_path / "responses.json"
    record_responses_run(fake_api, parent)
    assert [r.path for r in fake_api.requests] == ["/v1/responses", "/v1/responses"]
    assert load(parent).steps[3].type == "tool_result"

    fake_api.reset()
    fake_api.brain = lambda body: response_object(text="Now: " + "; ".join(last_tool_results(body)))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_api.openai_url)
    out = tmp_path / "fork.json"
    result = invoke(app, ["fork", parent, "--at", "3", "--set", '"snowy"', "--out", out, "--model-only", "--live",
                          "--provider", "responses"])
    assert result.exit_code == 0, result.output
    assert "without the agent: 7 steps, success" in result.stdout
    (request,) = fake_api.requests
    assert request.path == "/v1/responses" and request.header("authorization") == f"Bearer {KEY}"
    assert request.body["model"] == "gpt-5.1" and "messages" not in request.body
    outputs = [item for item in request.body["input"] if item.get("type") == "function_call_output"]
    assert [item["output"] for item in outputs] == ["snowy"]
    fork = load(out)
    assert verify(fork).ok and fork.steps[-1].payload["result"] == "Now: snowy"
    assert diff(load(parent), fork).first_divergence == 3
    assert KEY not in out.read_text()


def test_provider_help_names_every_registered_provider() -> None:
    result = invoke(app, ["what-if", "--help"], env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert result.exit_code == 0
    line = next(line for line in result.stdout.splitlines() if "--provider" in line)
    for provider in PROVIDERS:
        assert f" {provider.name}," in line or f" {provider.name};" in line or f"({provider.name}," in line, \
            provider.name
