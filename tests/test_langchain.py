"""LangChain / LangGraph agents (`langchain.agents.create_agent`, the LangGraph ReAct loop) on the real
`langchain-openai`, `langchain-anthropic` and `langchain-google-genai` chat models, wired to Blackbox the way the
README says, against the fake API: record → verify → replay offline with no key → a changed prompt diverges at
step 0 → a scripted fork; streamed and unstreamed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.errors import ReplayDivergenceError
from blackbox.format.cassette import load
from blackbox.format.secrets import replay_placeholders
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, weather_brain
from tests.fakeapi_gemini import gemini_response, gemini_turns, last_function_responses

agents = pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
pytest.importorskip("langchain_anthropic")
pytest.importorskip("langchain_google_genai")
from langchain_core.tools import tool  # noqa: E402

pytest_plugins = ["tests.conftest_fakeapi"]

KEYS = {"openai": "sk-proj-langchain-0123456789abcdefghijklmnop", "anthropic": "sk-ant-api03-langchain-0123456789ab",
        "gemini": "AIzaSyFAKE-langchain-0123456789abcdef"}
MODELS = {"openai": "gpt-5.1", "anthropic": "claude-sonnet-4-6", "gemini": "gemini-2.5-flash"}


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def chat_model(bb: blackbox.Session, family: str, *, streaming: bool, fake: FakeAPI | None) -> Any:
    """The README's lines for each chat model (`fake`: recording, the fake API's address and a key)."""
    key = {"api_key": KEYS[family]} if fake is not None else {}
    if family == "openai":
        from langchain_openai import ChatOpenAI

        # ChatOpenAI takes Blackbox's clients
        return ChatOpenAI(model=MODELS[family], streaming=streaming, max_retries=0, http_client=bb.http_client(),
                          http_async_client=bb.async_http_client(),
                          **({"base_url": fake.openai_url} if fake else {}), **key)
    if family == "anthropic":
        import anthropic
        from langchain_anthropic import ChatAnthropic

        # ChatAnthropic takes no HTTP client: give it Anthropic clients built on Blackbox's
        llm = ChatAnthropic(model=MODELS[family], streaming=streaming, max_retries=0,  # type: ignore[call-arg]
                            **({"base_url": fake.url} if fake else {}), **key)
        llm._client = anthropic.Anthropic(**llm._client_params, http_client=bb.http_client())
        llm._async_client = anthropic.AsyncAnthropic(**llm._client_params, http_client=bb.async_http_client())
        return llm
    from google import genai
    from langchain_google_genai import ChatGoogleGenerativeAI

    # ChatGoogleGenerativeAI takes a google-genai client: give it one on Blackbox's clients
    llm = ChatGoogleGenerativeAI(model=MODELS[family], streaming=streaming, **key)
    llm.client = genai.Client(**key, http_options=bb.genai_http_options(**({"base_url": fake.url} if fake else {})))
    return llm


def gemini_clients(llm: Any) -> tuple[Any, Any]:
    """The (sync, async) HTTP clients of the model's google-genai client: the SDK never closes a client it was
    given (the README says so), so the test does."""
    options = llm.client._api_client._http_options
    return options.httpx_client, options.httpx_async_client


async def close_async_clients(llm: Any, family: str) -> None:
    """The chat model's async SDK client, closed in its event loop (the model never closes a client it was given)."""
    if family == "openai":
        await llm.root_async_client.close()
    elif family == "anthropic":
        await llm._async_client.close()
    else:
        await gemini_clients(llm)[1].aclose()


def close_sync_clients(llm: Any, family: str) -> None:
    """The chat model's sync SDK client (on Blackbox's client), closed: the model never closes one it was given."""
    if family == "openai":
        llm.root_client.close()
    elif family == "anthropic":
        llm._client.close()
    else:
        gemini_clients(llm)[0].close()


def run_agent(bb: blackbox.Session, family: str, *, streaming: bool, fake: FakeAPI | None = None,
              prompt: str = "Weather in Paris?") -> str:
    llm = chat_model(bb, family, streaming=streaming, fake=fake)
    agent = agents.create_agent(llm, tools=[tool(bb.tool("get_weather", get_weather))], system_prompt="Be brief.")
    try:
        state = agent.invoke({"messages": [{"role": "user", "content": prompt}]})
    finally:
        close_sync_clients(llm, family)
    content = state["messages"][-1].content
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def brain(family: str) -> Any:
    if family != "gemini":
        return weather_brain(family, text=None)

    def final(body: dict[str, Any]) -> dict[str, Any]:
        return gemini_response(text="Weather: " + "; ".join(value["output"] for value in last_function_responses(body)))
    return gemini_turns([gemini_response(calls=[("get_weather", {"city": "Paris"})]), final])


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay's environment: every key variable a placeholder, as the launcher sets them."""
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in replay_placeholders({}).items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("streaming", [False, True], ids=["unstreamed", "streamed"])
@pytest.mark.parametrize("family", ["openai", "anthropic", "gemini"])
def test_a_langchain_agent_records_replays_and_forks(fake_api: FakeAPI, tmp_path: Path, no_keys: None, family: str,
                                                     streaming: bool) -> None:
    fake_api.brain = brain(family)
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out)
    answer = run_agent(bb, family, streaming=streaming, fake=fake_api)
    bb.finish(result=answer)
    assert answer.startswith("Weather: ") and "sunny in Paris" in answer
    assert len(fake_api.requests) == 2
    cassette = load(out)
    assert verify(cassette).ok and KEYS[family] not in out.read_text()
    assert [step.type for step in cassette.steps] == ["model_input", "model_output", "tool_call", "tool_result",
                                                      "model_input", "model_output", "metadata"]
    assert cassette.steps[0].payload["systemPrompt"] == "Be brief."
    assert cassette.steps[2].payload == {"toolCallId": "call-0", "toolName": "get_weather",
                                         "toolInput": {"city": "Paris"}}

    # replay: no request, no key
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert run_agent(bb, family, streaming=streaming) == answer
    assert bb.finish().status == "success" and fake_api.requests == []

    # a changed prompt diverges at step 0
    bb = blackbox.session("replay", cassette=out)
    with pytest.raises(Exception, match="replay diverged at step 0"):
        run_agent(bb, family, streaming=streaming, prompt="Weather in Oslo?")
    with pytest.raises(ReplayDivergenceError) as diverged:
        bb.finish()
    assert diverged.value.step == 0

    # a scripted fork at the tool result
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))
    forked = tmp_path / "fork.json"
    bb = blackbox.session("fork", cassette=out, out=forked, fork_at=3, fork_set="snowy", continue_with="script",
                          script=script)
    assert run_agent(bb, family, streaming=streaming) == "Snow in Paris."
    bb.finish(result="Snow in Paris.")
    fork = load(forked)
    assert verify(fork).ok and fake_api.requests == []
    assert fork.steps[3].payload["result"] == "snowy"
    assert [step.hash for step in fork.steps[:3]] == [step.hash for step in cassette.steps[:3]]

    # a live fork: after the tool result the model is asked again (the fake API, with a key)
    fake_api.reset()
    fake_api.brain = brain(family)
    live = tmp_path / "live.json"
    bb = blackbox.session("fork", cassette=out, out=live, fork_at=3, fork_set="snowy", continue_with="live")
    assert "snowy" in run_agent(bb, family, streaming=streaming, fake=fake_api)
    bb.finish()
    assert len(fake_api.requests) == 1 and verify(load(live)).ok


@pytest.mark.parametrize("family", ["openai", "anthropic", "gemini"])
def test_the_async_agent_records_and_replays(fake_api: FakeAPI, tmp_path: Path, no_keys: None, family: str) -> None:
    """`ainvoke`: the chat models' async clients are Blackbox's too (nothing goes around it)."""
    import asyncio

    async def arun(bb: blackbox.Session, fake: FakeAPI | None) -> str:
        llm = chat_model(bb, family, streaming=False, fake=fake)
        agent = agents.create_agent(llm, tools=[tool(bb.tool("get_weather", get_weather))], system_prompt="Be brief.")
        state = await agent.ainvoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]})
        await close_async_clients(llm, family)
        close_sync_clients(llm, family)
        content = state["messages"][-1].content
        return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)

    fake_api.brain = brain(family)
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out)
    answer = asyncio.run(arun(bb, fake_api))
    bb.finish(result=answer)
    assert len(fake_api.requests) == 2 and len(load(out).steps) == 7
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert asyncio.run(arun(bb, None)) == answer
    assert bb.finish().status == "success" and fake_api.requests == []
