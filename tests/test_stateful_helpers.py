"""Every SDK and framework helper that keeps a conversation between calls, through the real SDK against the fake
API (issue 31's audit; Anthropic's threads are in `test_anthropic_threads`): a helper that keeps it in the client
and sends it whole records, replays offline and forks; one that keeps it on the provider's servers is refused
before anything is sent, with advice.

- kept in the client, works: the Agents SDK's `SQLiteSession`, pydantic-ai's `message_history`, LangGraph's
  checkpointer (`InMemorySaver`), google-genai's `chats`;
- kept on the server, refused: the Responses API's `previous_response_id` and `conversation` (raw SDK and the
  Agents SDK's `previous_response_id=`, `auto_previous_response_id=True`, `conversation_id=`), the
  Conversations API (`client.conversations`, the Agents SDK's `OpenAIConversationsSession`), `responses.compact`
  (the Agents SDK's `OpenAIResponsesCompactionSession`), google-genai's Interactions API.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from tests.fakeapi import (
    FakeAPI,
    anthropic_message,
    chat_completion,
    last_tool_results,
    response_object,
    turn_brain,
)

openai = pytest.importorskip("openai")

ANSWERS = ("Paris: sunny in Paris", "Rome: sunny in Rome")


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


def two_questions(provider: str) -> Any:
    """Two questions in one conversation: a call and an answer each.  The second question's turns are told
    apart only by the history sent with it, so an agent that lost its history gets the first answers again."""
    make = {"anthropic": lambda text, calls: anthropic_message(text=text, tool_uses=calls),
            "openai": lambda text, calls: chat_completion(content=text, tool_calls=calls),
            "responses": lambda text, calls: response_object(text=text, tool_calls=calls)}[provider]

    def call(city: str) -> Any:
        return lambda body: make(None, [("get_weather", {"city": city})])

    def answer(city: str) -> Any:
        return lambda body: make(f"{city}: " + "; ".join(last_tool_results(body)), [])

    return turn_brain([call("Paris"), answer("Paris"), call("Rome"), answer("Rome")])


def fork_script(tmp_path: Path) -> Path:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([
        {"type": "final_answer", "text": "Paris: snowy"},
        {"type": "tool_calls", "calls": [{"toolName": "get_weather", "toolInput": {"city": "Rome"}}]},
        {"type": "final_answer", "text": "Rome: rainy"}]))
    return script


def record_replay_fork(fake: FakeAPI, tmp_path: Path, provider: str, run: Any) -> None:
    """Record `run(bb, key)` (both questions), verify, replay offline with no key, fork at the first result."""
    out, fork = tmp_path / "run.json", tmp_path / "fork.json"
    fake.brain = two_questions(provider)
    bb = blackbox.session("record", out=out)
    assert run(bb, "test-key") == ANSWERS
    bb.finish()
    cassette = load(out)
    assert verify(cassette).ok
    second = [s for s in cassette.steps if s.type == "model_input"][2]
    assert len(second.payload["messages"]) >= 5  # the second question was asked with the first one's history
    fake.reset()
    bb = blackbox.session("replay", cassette=out)
    assert run(bb, "placeholder") == ANSWERS
    assert bb.finish().status == "success" and fake.requests == []
    bb = blackbox.session("fork", cassette=out, out=fork, fork_at=3, fork_set="snowy", continue_with="script",
                          script=fork_script(tmp_path))
    assert run(bb, "placeholder") == ("Paris: snowy", "Rome: rainy")
    bb.finish()
    forked = load(fork)
    assert verify(forked).ok and forked.steps[3].payload["result"] == "snowy" and fake.requests == []


# -- kept in the client: recorded whole ---------------------------------------------------------------------


@pytest.fixture
def agents_sdk() -> Iterator[Any]:
    agents = pytest.importorskip("agents")
    from agents.models import _openai_shared

    agents.set_tracing_disabled(True)
    try:
        yield agents
    finally:
        _openai_shared._default_openai_client = None


def agents_run(agents: Any, bb: blackbox.Session, fake: FakeAPI, key: str, **run_kwargs: Any) -> tuple[str, str]:
    from openai import AsyncOpenAI

    agents.set_default_openai_client(AsyncOpenAI(base_url=fake.openai_url, api_key=key,
                                                 http_client=bb.async_http_client(), max_retries=0))
    agents.set_default_openai_api("responses")
    agent = agents.Agent(name="weather", instructions="Be brief.", model="gpt-5.1",
                         tools=[agents.function_tool(bb.tool("get_weather", get_weather))])

    async def both() -> tuple[str, str]:
        from agents.models import _openai_shared

        async with _openai_shared.get_default_openai_client():
            first = await agents.Runner.run(agent, "Weather in Paris?", **run_kwargs)
            second = await agents.Runner.run(agent, "And Rome?", **run_kwargs)
        return str(first.final_output), str(second.final_output)

    return asyncio.run(both())


def test_agents_sdk_sqlite_session_records_the_whole_history(agents_sdk: Any, fake_api: FakeAPI,
                                                            tmp_path: Path) -> None:
    def run(bb: blackbox.Session, key: str) -> tuple[str, str]:
        return agents_run(agents_sdk, bb, fake_api, key, session=agents_sdk.SQLiteSession("user-1"))

    record_replay_fork(fake_api, tmp_path, "responses", run)


def test_pydantic_ai_message_history_records_the_whole_history(fake_api: FakeAPI, tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai")
    from anthropic import AsyncAnthropic
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    def run(bb: blackbox.Session, key: str) -> tuple[str, str]:
        client = AsyncAnthropic(base_url=fake_api.url, api_key=key, http_client=bb.async_http_client(), max_retries=0)
        agent = Agent(AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client)),
                      instructions="Be brief.", tools=[bb.tool("get_weather", get_weather)])

        async def both() -> tuple[str, str]:
            async with client:
                first = await agent.run("Weather in Paris?")
                second = await agent.run("And Rome?", message_history=first.all_messages())
            return str(first.output), str(second.output)

        return asyncio.run(both())

    record_replay_fork(fake_api, tmp_path, "anthropic", run)


def test_langgraph_checkpointer_records_the_whole_history(fake_api: FakeAPI, tmp_path: Path) -> None:
    pytest.importorskip("langchain_openai")
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    def run(bb: blackbox.Session, key: str) -> tuple[str, str]:
        llm = ChatOpenAI(model="gpt-5.1", api_key=key, base_url=fake_api.openai_url, max_retries=0,
                         http_client=fake_api.closes(bb.http_client()))
        agent = create_agent(llm, tools=[tool(bb.tool("get_weather", get_weather))], system_prompt="Be brief.",
                             checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "user-1"}}
        first = agent.invoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]}, config)
        second = agent.invoke({"messages": [{"role": "user", "content": "And Rome?"}]}, config)
        return str(first["messages"][-1].content), str(second["messages"][-1].content)

    record_replay_fork(fake_api, tmp_path, "openai", run)


def test_google_genai_chat_records_the_whole_history(fake_api: FakeAPI, tmp_path: Path) -> None:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    from tests.fakeapi_gemini import gemini_response, gemini_turns, last_function_responses

    def call(city: str) -> Any:
        return gemini_response(calls=[("get_weather", {"city": city})])

    def answer(city: str) -> Any:
        return lambda body: gemini_response(text=f"{city}: " + "; ".join(
            str(v.get("result")) for v in last_function_responses(body)))

    def run(bb: blackbox.Session, key: str) -> tuple[str, str]:
        client = genai.Client(api_key=key, http_options=bb.genai_http_options(base_url=fake_api.url))
        config = types.GenerateContentConfig(tools=[bb.tool("get_weather", get_weather)])
        chat = client.chats.create(model="gemini-2.5-flash", config=config)
        return str(chat.send_message("Weather in Paris?").text), str(chat.send_message("And Rome?").text)

    out = tmp_path / "run.json"
    fake_api.brain = gemini_turns([call("Paris"), answer("Paris"), call("Rome"), answer("Rome")])
    bb = blackbox.session("record", out=out)
    assert run(bb, "test-key") == ANSWERS
    bb.finish()
    assert verify(load(out)).ok
    assert len([s for s in load(out).steps if s.type == "model_input"][2].payload["messages"]) >= 5
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert run(bb, "placeholder") == ANSWERS and bb.finish().status == "success" and fake_api.requests == []
    bb = blackbox.session("fork", cassette=out, out=tmp_path / "fork.json", fork_at=3, fork_set="snowy",
                          continue_with="script", script=fork_script(tmp_path))
    assert run(bb, "placeholder") == ("Paris: snowy", "Rome: rainy")
    bb.finish()
    assert verify(load(tmp_path / "fork.json")).ok and fake_api.requests == []


# -- kept on the server: refused before it is sent -----------------------------------------------------------


def refused_before_sending(fake: FakeAPI, call: Any, *words: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        call()
    assert "[blackbox]" in caught.value.message and fake.requests == []
    for word in words:
        assert word in caught.value.message


@pytest.mark.parametrize(("kwargs", "what"), [
    ({"previous_response_id": "resp_0123456789abcdefghij"}, "previous_response_id (a conversation kept on"),
    ({"conversation": "conv_1"}, "conversation (a conversation kept on OpenAI's servers)"),
    ({"conversation": {"id": "conv_1"}}, "conversation (a conversation kept on OpenAI's servers)"),
])
def test_responses_server_state_is_refused_with_advice(fake_api: FakeAPI, tmp_path: Path, kwargs: dict[str, Any],
                                                       what: str) -> None:
    bb = blackbox.session("record", out=tmp_path / "run.json")
    client = fake_api.closes(openai.OpenAI(base_url=fake_api.openai_url, api_key="k", http_client=bb.http_client(),
                                           max_retries=0))
    refused_before_sending(fake_api, lambda: client.responses.create(model="gpt-5.1", input="hi", **kwargs), what,
                           "send the whole conversation in input")


def test_the_conversations_api_is_refused_as_no_model_call(fake_api: FakeAPI, tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "run.json")
    client = fake_api.closes(openai.OpenAI(base_url=fake_api.openai_url, api_key="k", http_client=bb.http_client(),
                                           max_retries=0))
    refused_before_sending(fake_api, lambda: client.conversations.create(), "OpenAI's Conversations API",
                           "keeps the conversation on the provider's servers", "SQLiteSession")


@pytest.mark.parametrize(("kwargs", "what"), [
    ({"previous_response_id": "resp_0123456789abcdefghij"}, "previous_response_id"),
    ({"conversation_id": "conv_1"}, "conversation (a conversation kept on OpenAI's servers)"),
    ({"auto_previous_response_id": True}, "previous_response_id"),
])
def test_agents_sdk_server_conversations_are_refused_with_advice(agents_sdk: Any, fake_api: FakeAPI,
                                                                 tmp_path: Path, kwargs: dict[str, Any],
                                                                 what: str) -> None:
    fake_api.brain = two_questions("responses")
    bb = blackbox.session("record", out=tmp_path / "run.json")
    with pytest.raises(openai.BadRequestError) as caught:
        agents_run(agents_sdk, bb, fake_api, "test-key", **kwargs)
    message = caught.value.message
    assert "[blackbox]" in message and what in message and "send the whole conversation in input" in message
    # nothing that names server state reached the server (auto_previous_response_id's first call names none)
    assert not any(r.body.get("previous_response_id") or r.body.get("conversation") for r in fake_api.requests)


async def compacted(agents: Any, client: Any) -> None:
    """The Agents SDK's compaction session asked to compact a short history now."""
    from agents.memory import OpenAIResponsesCompactionSession

    session = OpenAIResponsesCompactionSession("user-1", agents.SQLiteSession("user-1"), client=client, model="gpt-5.1")
    await session.add_items([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    await session.run_compaction({"force": True})


async def conversation_items(agents: Any, client: Any) -> None:
    """The Agents SDK's server-side session read (its conversation is made on OpenAI's servers first)."""
    from agents.memory import OpenAIConversationsSession

    await OpenAIConversationsSession(openai_client=client).get_items()


@pytest.mark.parametrize(("use", "what"), [(conversation_items, "OpenAIConversationsSession"),
                                           (compacted, "server-side compaction (responses.compact")])
def test_agents_sdk_server_sessions_are_refused_before_sending(agents_sdk: Any, fake_api: FakeAPI, tmp_path: Path,
                                                               use: Any, what: str) -> None:
    from openai import AsyncOpenAI

    bb = blackbox.session("record", out=tmp_path / "run.json")

    async def go() -> None:
        async with AsyncOpenAI(base_url=fake_api.openai_url, api_key="k", http_client=bb.async_http_client(),
                               max_retries=0) as client:
            await use(agents_sdk, client)

    with pytest.raises(openai.BadRequestError) as caught:
        asyncio.run(go())
    assert what in caught.value.message and "send it whole" in caught.value.message and fake_api.requests == []


def test_google_genai_interactions_are_refused_before_sending(fake_api: FakeAPI, tmp_path: Path) -> None:
    genai = pytest.importorskip("google.genai")
    bb = blackbox.session("record", out=tmp_path / "run.json")
    client = genai.Client(api_key="k", http_options=bb.genai_http_options(base_url=fake_api.url))
    with pytest.raises(Exception, match=r"\[blackbox\] Gemini's Interactions API \(server-side conversation state\) "
                                        r"is not supported yet; use client.models.generate_content or chats"):
        client.interactions.create(model="gemini-2.5-flash", input="hi", previous_interaction_id="earlier")
    assert fake_api.requests == []
