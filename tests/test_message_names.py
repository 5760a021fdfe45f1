"""A chat message's `name` (the agent or participant it speaks for) through the real `openai` SDK and LangGraph's
`create_agent(..., name=...)` on `ChatOpenAI`, against the fake API: kept on the neutral message (a tool
message's on its tool_result part), so record → verify → replay offline → a changed name diverges there → a
scripted fork → the what-if's request, all with the names the agent sent (docs/format.md, "OpenAI Chat
Completions")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

import blackbox
from blackbox.errors import BlackboxUnsupportedError
from blackbox.format.cassette import load
from blackbox.format.secrets import PLACEHOLDER_KEYS
from blackbox.format.verify import verify
from blackbox.providers import OPENAI_CHAT, CallIds
from tests.fakeapi import FakeAPI, weather_brain
from tests.session_flows import diverges, scripted_fork

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "sk-proj-names-0123456789abcdefghijklmnop"
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def named_agent(bb: blackbox.Session, fake: FakeAPI, *, speaker: str = "planner", **kwargs: Any) -> str:
    """A tool loop whose messages carry names: the user's, the agent's own on its turns, the tool's on results."""
    weather = bb.tool("get_weather", lambda city: f"sunny in {city}")
    client = openai.OpenAI(base_url=fake.openai_url, http_client=bb.http_client(), max_retries=0, **kwargs)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."},
                                      {"role": "user", "content": "Weather in Paris?", "name": "alice"}]
    try:
        while True:
            message = client.chat.completions.create(model="gpt-5.1", messages=messages,  # type: ignore[arg-type]
                                                     tools=TOOLS).choices[0].message  # type: ignore[arg-type]
            if not message.tool_calls:
                return message.content or ""
            messages.append({"role": "assistant", "name": speaker, "content": message.content, "tool_calls": [
                {"id": call.id, "type": "function",
                 "function": {"name": call.function.name, "arguments": call.function.arguments}}
                for call in message.tool_calls if call.type == "function"]})
            for call in message.tool_calls:
                assert call.type == "function"
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.function.name,
                                 "content": weather(**json.loads(call.function.arguments))})
    finally:
        client.close()


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLACEHOLDER_KEYS["OPENAI_API_KEY"])


def test_names_on_messages_record_replay_diverge_fork_and_go_back(fake_api: FakeAPI, tmp_path: Path,
                                                                  no_key: None) -> None:
    fake_api.brain = weather_brain("openai", text=None)
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out)
    answer = named_agent(bb, fake_api, api_key=KEY)
    bb.finish(result=answer)
    assert answer == "Weather: sunny in Paris"
    sent = fake_api.requests[1].body["messages"]
    assert [message.get("name") for message in sent] == [None, "alice", "planner", "get_weather"]  # the SDK sent them

    cassette = load(out)
    assert verify(cassette).ok and KEY not in out.read_text()
    first, last = cassette.steps[0].payload, cassette.steps[4].payload
    assert first["messages"] == [{"role": "user", "content": "Weather in Paris?", "name": "alice"}]
    call = {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}
    assert last["messages"][1:] == [
        {"role": "assistant", "content": [{"type": "tool_use", **call}], "name": "planner"},
        {"role": "user", "content": [{"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather",
                                      "result": "sunny in Paris", "name": "get_weather"}]}]

    # replay: offline, the same answer
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert named_agent(bb, fake_api) == answer
    assert bb.finish().status == "success" and fake_api.requests == []

    # another agent's name on the same turn is another request: it diverges at that name
    diverges(out, lambda bb: named_agent(bb, fake_api, speaker="critic"), 4, "messages[1].name")

    # a scripted fork at the tool result keeps the names in the forked request
    fork = scripted_fork(out, tmp_path / "fork.json", lambda bb: named_agent(bb, fake_api), at=3, value="snowy",
                         answer="Snow in Paris.")
    assert fake_api.requests == []
    assert fork.steps[4].payload["messages"][1]["name"] == "planner"
    assert fork.steps[4].payload["messages"][2]["content"][0] == {**last["messages"][2]["content"][0],
                                                                  "result": "snowy"}

    # the what-if's request sends every name back where it came from, and reads as the recorded input again
    body = OPENAI_CHAT.build_request(last)
    assert [message.get("name") for message in body["messages"]] == [None, "alice", "planner", "get_weather"]
    assert OPENAI_CHAT.normalize_request(body, CallIds()) == last


def test_a_system_message_name_is_refused_with_advice() -> None:
    """The system prompt is kept as one text, which holds no name: refused (never silently dropped)."""
    body = {"model": "m", "messages": [{"role": "developer", "content": "Be brief.", "name": "ops"},
                                       {"role": "user", "content": "Hi"}]}
    with pytest.raises(BlackboxUnsupportedError, match=r"the name field on a developer message.*drop it"):
        OPENAI_CHAT.normalize_request(body, CallIds())


def test_langgraph_create_agent_with_a_name_records_replays_and_forks(fake_api: FakeAPI, tmp_path: Path,
                                                                      no_key: None) -> None:
    """`create_agent(..., name=...)` names the agent's AI messages, which `ChatOpenAI` sends as `name` on the
    assistant turns of the history (and drops from tool messages)."""
    agents = pytest.importorskip("langchain.agents")
    pytest.importorskip("langchain_openai")
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    def run(bb: blackbox.Session, *, live: bool, name: str = "researcher") -> str:
        llm = ChatOpenAI(model="gpt-5.1", max_retries=0, http_client=bb.http_client(),
                         **({"base_url": fake_api.openai_url, "api_key": KEY} if live else {}))  # type: ignore[arg-type]
        agent = agents.create_agent(llm, tools=[tool(bb.tool("get_weather", get_weather))],
                                    system_prompt="Be brief.", name=name)
        try:
            state = agent.invoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]})
        finally:
            llm.root_client.close()
        return str(state["messages"][-1].content)

    fake_api.brain = weather_brain("openai", text=None)
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out)
    answer = run(bb, live=True)
    bb.finish(result=answer)
    assert answer == "Weather: sunny in Paris"
    assert fake_api.requests[1].body["messages"][2]["name"] == "researcher"
    cassette = load(out)
    assert verify(cassette).ok and KEY not in out.read_text()
    assert cassette.steps[4].payload["messages"][1]["name"] == "researcher"

    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert run(bb, live=False) == answer
    assert bb.finish().status == "success" and fake_api.requests == []

    diverges(out, lambda bb: run(bb, live=False, name="reviewer"), 4, "messages[1].name")

    fork = scripted_fork(out, tmp_path / "fork.json", lambda bb: run(bb, live=False), at=3, value="snowy",
                         answer="Snow in Paris.")
    assert fake_api.requests == []
    assert fork.steps[4].payload["messages"][1]["name"] == "researcher"
    assert fork.steps[4].payload["messages"][2]["content"][0]["result"] == "snowy"
