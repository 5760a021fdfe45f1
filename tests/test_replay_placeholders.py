"""Replay starts every SDK with no key in the environment: the launcher and the pytest plugin set a placeholder
key per API (Gemini's in GOOGLE_API_KEY, which every Gemini SDK reads) and the settings Azure's clients refuse to
start without (OPENAI_API_VERSION, AZURE_OPENAI_ENDPOINT); none is a secret.  An Azure and a Gemini recording
replay under `blackbox replay` and under the plugin with none of their variables set."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blackbox.apis import API_FACTS
from blackbox.format.cassette import load
from blackbox.format.secrets import PLACEHOLDER_KEYS, Secrets, replay_placeholders
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, weather_brain
from tests.fakeapi_gemini import gemini_response, gemini_turns, last_function_responses

pytest_plugins = ["pytester", "tests.conftest_fakeapi"]

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
PLACEHOLDER = PLACEHOLDER_KEYS["OPENAI_API_KEY"]
#: Every variable a key or a start setting of any API lives in (removed from the agents' environment).
VARIABLES = sorted({name for api in API_FACTS for name in (*api.key_variables, *(n for n, _ in api.start_settings),
                                                            api.base_url_variable) if name})
AZURE_KEY = "0123456789abcdef0123456789abcdef"
GEMINI_KEY = "AIzaSyFAKE-gemini-placeholder-test-0123456789"


def test_one_placeholder_key_per_api_and_the_settings_azure_needs() -> None:
    assert replay_placeholders({}) == {
        "ANTHROPIC_API_KEY": PLACEHOLDER, "OPENAI_API_KEY": PLACEHOLDER, "AZURE_OPENAI_API_KEY": PLACEHOLDER,
        "GOOGLE_API_KEY": PLACEHOLDER, "OPENAI_API_VERSION": "2024-10-21",
        "AZURE_OPENAI_ENDPOINT": "https://blackbox-replay-placeholder.openai.azure.com"}
    # a key or a setting that is set is left alone; Gemini's other variable counts as its key
    given = {"GEMINI_API_KEY": GEMINI_KEY, "OPENAI_API_VERSION": "2025-04-01-preview", "OPENAI_API_KEY": "k" * 20}
    assert set(replay_placeholders(given)) == {"ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"}
    # never a secret: a session whose environment holds the placeholders knows no key
    assert Secrets(replay_placeholders({})).values() == ()


AGENT = '''
import json, os, sys
import blackbox

def weather(city):
    return f"sunny in {city}"

def azure(bb):
    import openai
    client = openai.AzureOpenAI(http_client=bb.http_client(), max_retries=0)  # key, version, endpoint: the env's
    get_weather = bb.tool("get_weather", weather)
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    while True:
        message = client.chat.completions.create(model="my-gpt", messages=messages, tools=tools).choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = get_weather(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

def gemini(bb):
    from google import genai
    from google.genai import types
    base = os.environ.get("GOOGLE_GEMINI_BASE_URL")
    client = genai.Client(http_options=bb.genai_http_options(**({"base_url": base} if base else {})))
    get_weather = bb.tool("get_weather", weather)
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
        name="get_weather", parameters_json_schema={"type": "object"})])], automatic_function_calling=
        types.AutomaticFunctionCallingConfig(disable=True))
    contents = [types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])]
    while True:
        response = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
        content = response.candidates[0].content
        calls = [part.function_call for part in content.parts if part.function_call]
        if not calls:
            return response.text
        contents.append(content)
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(name=c.name, response={"result": get_weather(**c.args)}) for c in calls]))

bb = blackbox.session()
bb.finish(result=(azure if sys.argv[1] == "azure" else gemini)(bb))
print("answer:", bb.finish().status)
'''


def gemini_brain() -> Any:
    def final(body: dict[str, Any]) -> dict[str, Any]:
        return gemini_response(text="Weather: " + "; ".join(v["result"] for v in last_function_responses(body)))
    return gemini_turns([gemini_response(calls=[("get_weather", {"city": "Paris"})]), final])


def recording_env(fake: FakeAPI, api: str) -> dict[str, str]:
    if api == "azure":
        fake.brain = weather_brain("openai")
        return {"AZURE_OPENAI_API_KEY": AZURE_KEY, "OPENAI_API_VERSION": "2024-10-21",
                "AZURE_OPENAI_ENDPOINT": fake.url}
    fake.brain = gemini_brain()
    return {"GEMINI_API_KEY": GEMINI_KEY, "GOOGLE_GEMINI_BASE_URL": fake.url}


def blackbox_cli(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in VARIABLES and not k.startswith("BLACKBOX_")}
    return subprocess.run([PY, "-m", "blackbox", *map(str, args)], env={**base, "NO_COLOR": "1", **env}, cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.parametrize("api", ["azure", "gemini"])
def test_blackbox_replay_starts_the_sdk_with_no_key(fake_api: FakeAPI, tmp_path: Path, api: str) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    out = tmp_path / f"{api}.json"
    recorded = blackbox_cli("record", "--out", out, "--", PY, agent, api, env=recording_env(fake_api, api))
    assert recorded.returncode == 0, recorded.stderr
    assert len(fake_api.requests) == 2
    cassette = load(out)
    assert verify(cassette).ok and cassette.steps[-1].payload["result"] == "Weather: sunny in Paris"
    assert (AZURE_KEY if api == "azure" else GEMINI_KEY) not in out.read_text()

    fake_api.reset()
    replayed = blackbox_cli("replay", out, "--", PY, agent, api, env={})  # not one of VARIABLES is set
    assert replayed.returncode == 0, replayed.stderr
    assert "PASS" in replayed.stdout and "no network calls" in replayed.stdout
    assert "Both GOOGLE_API_KEY and GEMINI_API_KEY are set" not in replayed.stderr
    assert fake_api.requests == []


PLUGIN_TEST = '''
import runpy, sys

def test_agent(blackbox):
    sys.argv = ["agent", "{api}"]
    namespace = runpy.run_path("agent_module.py", run_name="agent")
    answer = namespace["{api}"](blackbox)
    assert answer == "Weather: sunny in Paris"
'''


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in [*VARIABLES, *(n for n in os.environ if n.startswith("BLACKBOX_")), "CI"]:
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch


@pytest.mark.parametrize("api", ["azure", "gemini"])
def test_the_plugin_replays_with_no_key(pytester: pytest.Pytester, fake_api: FakeAPI, clean_env: pytest.MonkeyPatch,
                                        api: str) -> None:
    # the agent's functions without its last lines (the plugin's fixture is the session)
    pytester.makepyfile(agent_module=AGENT.split("\nbb = blackbox.session()")[0],
                        test_agent=PLUGIN_TEST.replace("{api}", api))
    options = ("-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:hypothesispytest",
               "-o", "asyncio_default_fixture_loop_scope=function")
    for name, value in recording_env(fake_api, api).items():
        clean_env.setenv(name, value)
    pytester.runpytest_inprocess(*options, "--blackbox-record").assert_outcomes(passed=1)
    assert len(fake_api.requests) == 2

    fake_api.reset()
    for name in VARIABLES:
        clean_env.delenv(name, raising=False)
    pytester.runpytest_inprocess(*options).assert_outcomes(passed=1)
    assert fake_api.requests == []
    assert not any(os.environ.get(name) for name in VARIABLES)  # the placeholders are gone after the run
