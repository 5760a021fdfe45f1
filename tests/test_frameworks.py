"""Agents built on the frameworks people run, unchanged but for the Blackbox lines: the OpenAI Agents SDK
(Responses API, `Runner.run` and `Runner.run_streamed`, parallel tool calls) and pydantic-ai (Anthropic, chat
and Responses models, `agent.run` and `agent.run_stream`): record, verify, replay offline with a placeholder
key (no request sent), and fork with a script."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.secrets import PLACEHOLDER_KEYS
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, weather_brain

CITIES = ("Paris", "Rome")
NO_KEY = next(iter(PLACEHOLDER_KEYS.values()))  # what the launcher gives a replayed agent
ANSWER = "Weather: sunny in Paris; sunny in Rome"


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


def steps_of(path: Path) -> list[tuple[str, Any]]:
    return [(step.type, step.payload) for step in load(path).steps]


# -- the OpenAI Agents SDK -----------------------------------------------------------------------------


@pytest.fixture
def agents_sdk() -> Iterator[Any]:
    """The `agents` package with tracing off (its uploads would bypass Blackbox); the default client is reset."""
    import agents
    from agents.models import _openai_shared

    agents.set_tracing_disabled(True)
    try:
        yield agents
    finally:
        _openai_shared._default_openai_client = None


def openai_agent(agents: Any, bb: blackbox.Session, fake: FakeAPI, key: str) -> Any:
    from openai import AsyncOpenAI

    # the Blackbox lines: the SDK's client on Blackbox's http client, the Responses API, wrapped tools
    agents.set_default_openai_client(AsyncOpenAI(base_url=fake.openai_url, api_key=key,
                                                 http_client=bb.async_http_client(), max_retries=0))
    agents.set_default_openai_api("responses")
    tool = agents.function_tool(bb.tool("get_weather", get_weather))
    return agents.Agent(name="weather", instructions="Be brief.", model="gpt-5.1", tools=[tool])


async def run_agents(agents: Any, agent: Any, streamed: bool) -> str:
    from agents.models import _openai_shared

    async with _openai_shared.get_default_openai_client():  # the SDK's client, closed in this event loop
        if streamed:
            result = agents.Runner.run_streamed(agent, "Weather in Paris and Rome?")
            async for _ in result.stream_events():
                pass
            return str(result.final_output)
        return str((await agents.Runner.run(agent, "Weather in Paris and Rome?")).final_output)


def test_function_tool_reads_the_wrapped_tools_signature_and_docstring(agents_sdk: Any, tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "run.json")
    wrapped = bb.tool("get_weather", get_weather)
    assert inspect.signature(wrapped) == inspect.signature(get_weather)
    tool = agents_sdk.function_tool(wrapped)
    assert tool.name == "get_weather" and tool.description == "Get the weather for a city."
    assert tool.params_json_schema["properties"] == {"city": {"title": "City", "type": "string"}}


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_openai_agents_record_verify_replay_fork(agents_sdk: Any, fake_api: FakeAPI, tmp_path: Path,
                                                 streamed: bool) -> None:
    out = tmp_path / "run.json"
    fake_api.brain = weather_brain("responses", cities=CITIES)
    bb = blackbox.session("record", out=out)
    assert asyncio.run(run_agents(agents_sdk, openai_agent(agents_sdk, bb, fake_api, "test-key"), streamed)) == ANSWER
    bb.finish()
    assert [request.body.get("stream", False) for request in fake_api.requests] == [streamed, streamed]
    assert verify(load(out)).ok
    kinds = [kind for kind, _ in steps_of(out)]
    assert kinds.count("tool_call") == 2 and kinds[-1] == "metadata"  # the two parallel calls, in model order
    calls = steps_of(out)[1][1]["calls"]
    assert [call["toolInput"] for call in calls] == [{"city": "Paris"}, {"city": "Rome"}]
    assert steps_of(out)[0][1]["params"]["strictTools"] == ["get_weather"]

    for replay_streamed in (streamed, not streamed):  # a recording replays streamed and unstreamed
        fake_api.reset()
        bb = blackbox.session("replay", cassette=out)
        agent = openai_agent(agents_sdk, bb, fake_api, NO_KEY)
        assert asyncio.run(run_agents(agents_sdk, agent, replay_streamed)) == ANSWER
        assert bb.finish().status == "success" and fake_api.requests == []

    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))
    bb = blackbox.session("fork", cassette=out, out=tmp_path / "fork.json", fork_at=3, fork_set="snowy",
                          continue_with="script", script=script)
    agent = openai_agent(agents_sdk, bb, fake_api, NO_KEY)
    assert asyncio.run(run_agents(agents_sdk, agent, streamed)) == "Snow in Paris."
    bb.finish()
    fork = load(tmp_path / "fork.json")
    assert verify(fork).ok and fork.steps[3].payload["result"] == "snowy" and fake_api.requests == []


# -- pydantic-ai -------------------------------------------------------------------------------------------


def pydantic_agent(kind: str, bb: blackbox.Session, fake: FakeAPI, key: str) -> Any:
    from anthropic import AsyncAnthropic
    from openai import AsyncOpenAI
    from pydantic_ai import Agent

    model: Any
    if kind == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = AsyncAnthropic(base_url=fake.url, api_key=key, http_client=bb.async_http_client(), max_retries=0)
        model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client))
    else:
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        oai = AsyncOpenAI(base_url=fake.openai_url, api_key=key, http_client=bb.async_http_client(), max_retries=0)
        cls = OpenAIChatModel if kind == "openai" else OpenAIResponsesModel
        model = cls("gpt-5.1", provider=OpenAIProvider(openai_client=oai))
    return Agent(model, instructions="Be brief.", tools=[bb.tool("get_weather", get_weather)])


async def run_pydantic(agent: Any, streamed: bool) -> str:
    async with agent.model.client:  # the SDK's client (the test's, not pydantic-ai's), closed in this event loop
        if streamed:
            async with agent.run_stream("Weather in Paris and Rome?") as result:
                return str(await result.get_output())
        return str((await agent.run("Weather in Paris and Rome?")).output)


@pytest.mark.parametrize("kind", ["anthropic", "openai", "responses"])
def test_pydantic_ai_record_verify_replay_fork(fake_api: FakeAPI, tmp_path: Path, kind: str) -> None:
    recordings = {}
    for streamed in (False, True):
        out = tmp_path / f"run-{streamed}.json"
        fake_api.reset()
        fake_api.brain = weather_brain(kind, cities=CITIES, text=None)  # run_stream ends at the first text
        bb = blackbox.session("record", out=out)
        assert asyncio.run(run_pydantic(pydantic_agent(kind, bb, fake_api, "test-key"), streamed)) == ANSWER
        bb.finish()
        assert verify(load(out)).ok
        recordings[streamed] = out
    # a streamed and an unstreamed run record the same steps (pydantic-ai streams Anthropic calls even in run)
    assert steps_of(recordings[True]) == steps_of(recordings[False])

    for streamed in (False, True):
        fake_api.reset()
        bb = blackbox.session("replay", cassette=recordings[not streamed])
        assert asyncio.run(run_pydantic(pydantic_agent(kind, bb, fake_api, NO_KEY), streamed)) == ANSWER
        assert bb.finish().status == "success" and fake_api.requests == []

    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))
    bb = blackbox.session("fork", cassette=recordings[True], out=tmp_path / "fork.json", fork_at=3,
                          fork_set="snowy", continue_with="script", script=script)
    assert asyncio.run(run_pydantic(pydantic_agent(kind, bb, fake_api, NO_KEY), True)) == "Snow in Paris."
    bb.finish()
    fork = load(tmp_path / "fork.json")
    assert verify(fork).ok and fork.steps[3].payload["result"] == "snowy" and fake_api.requests == []
