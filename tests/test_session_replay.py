"""Replaying recorded agents offline: the same agent passes with no network; every kind of change diverges at
the right step and path (docs/format.md, "Replay")."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.errors import BlackboxUnsupportedError, ReplayDivergenceError, SessionError
from blackbox.format.cassette import load
from blackbox.live.replayer import ReplayedToolError
from tests.agents.loops import (
    abook_hotel,
    aget_weather,
    anthropic_agent,
    anthropic_tools,
    async_anthropic_agent,
    async_openai_agent,
    book_hotel,
    get_weather,
    openai_agent,
)
from tests.fakeapi import FakeAPI, anthropic_message, turn_brain, weather_brain

pytest_plugins = ["tests.conftest_fakeapi"]

TOOLS = {"get_weather": get_weather, "book_hotel": book_hotel}
PROMPT = "Weather in Paris and Oslo, then book Paris?"


def booking_brain() -> Any:
    return turn_brain([
        anthropic_message(text="Checking.", tool_uses=[("get_weather", {"city": "Paris"}),
                                                       ("get_weather", {"city": "Oslo"})]),
        anthropic_message(tool_uses=[("book_hotel", {"city": "Paris", "nights": 2})]),
        anthropic_message(text="Booked Paris, BK-PAR2."),
    ])


def client_for(bb: blackbox.Session, url: str, **kwargs: Any) -> Any:
    import anthropic

    kwargs.setdefault("max_retries", 2)  # a Blackbox error must not be retried anyway
    return anthropic.Anthropic(http_client=bb.http_client(), base_url=url, api_key="sk-ant-replay-key-000000",
                               **kwargs)


@pytest.fixture
def recorded(fake_api: FakeAPI, tmp_path: Path) -> tuple[Path, str]:
    """A recorded booking run; returns (cassette, the fake API's url, still running and counting requests)."""
    fake_api.brain = booking_brain()
    out = tmp_path / "booking.json"
    bb = blackbox.session("record", out=out)
    anthropic_agent(client_for(bb, fake_api.url), bb.tools(TOOLS), PROMPT)
    bb.finish()
    fake_api.reset()
    return out, fake_api.url


def replay(cassette: Path, url: str, agent: Callable[..., Any] = anthropic_agent, *, tools: dict[str, Any] = TOOLS,
           prompt: str = PROMPT, match: str | None = None, **kwargs: Any) -> tuple[blackbox.Session, Any]:
    bb = blackbox.session("replay", cassette=cassette, match=match)
    try:
        return bb, agent(client_for(bb, url), bb.tools(tools), prompt, **kwargs)
    except Exception as exc:
        return bb, exc


def divergence_of(bb: blackbox.Session) -> ReplayDivergenceError:
    with pytest.raises(ReplayDivergenceError) as caught:
        bb.finish()
    return caught.value


# ---------------------------------------------------------------------------------------------------------
# passing replays


def test_the_same_agent_replays_with_no_network(recorded: tuple[Path, str], fake_api: FakeAPI) -> None:
    cassette, url = recorded
    bb, answer = replay(cassette, url)
    assert answer == "Booked Paris, BK-PAR2."
    summary = bb.finish()
    assert str(summary).startswith('replayed 13 steps, success, result "Booked Paris')
    assert fake_api.requests == []


def test_replay_works_with_the_server_stopped(recorded: tuple[Path, str], fake_api: FakeAPI) -> None:
    cassette, url = recorded
    fake_api.close()
    bb, answer = replay(cassette, url)
    assert answer == "Booked Paris, BK-PAR2." and bb.finish().status == "success"


def test_tools_never_run_in_replay_and_recorded_errors_come_back(fake_api: FakeAPI, tmp_path: Path) -> None:
    calls: list[str] = []

    def flaky(city: str) -> dict[str, Any]:
        calls.append(city)
        if city == "Oslo":
            raise TimeoutError("station offline")
        return get_weather(city)

    fake_api.brain = weather_brain("anthropic", cities=["Paris", "Oslo"])
    out = tmp_path / "flaky.json"
    bb = blackbox.session("record", out=out)
    recorded_answer = anthropic_agent(client_for(bb, fake_api.url), bb.tools({"get_weather": flaky}), "Weather?")
    bb.finish()
    assert calls == ["Paris", "Oslo"]

    errors: list[BaseException] = []
    bb2 = blackbox.session("replay", cassette=out)
    wrapped = bb2.tools({"get_weather": flaky})["get_weather"]
    agent_tools = {"get_weather": lambda city: _noting(errors, wrapped, city)}
    assert anthropic_agent(client_for(bb2, fake_api.url), agent_tools, "Weather?") == recorded_answer
    assert bb2.finish().status == "success" and calls == ["Paris", "Oslo"]
    assert [type(e) for e in errors] == [ReplayedToolError] and str(errors[0]) == "station offline"


def _noting(errors: list[BaseException], tool: Callable[..., Any], city: str) -> Any:
    try:
        return tool(city=city)
    except Exception as exc:
        errors.append(exc)
        raise


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_async_agents_replay(fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    import anthropic
    import openai

    fake_api.brain = weather_brain(provider, cities=["Paris", "Oslo", "Lisbon"])
    out = tmp_path / f"async-{provider}.json"
    tools = {"get_weather": aget_weather, "book_hotel": abook_hotel}

    async def run(mode: str) -> str:
        bb = blackbox.session(mode, out=out if mode == "record" else None, cassette=out if mode == "replay" else None)
        if provider == "anthropic":
            client = anthropic.AsyncAnthropic(http_client=bb.async_http_client(), base_url=fake_api.url,
                                              api_key="k" * 12, max_retries=0)
            answer = await async_anthropic_agent(client, bb.tools(tools), "Weather?")
        else:
            client = openai.AsyncOpenAI(http_client=bb.async_http_client(), base_url=fake_api.openai_url,
                                        api_key="k" * 12, max_retries=0)
            answer = await async_openai_agent(client, bb.tools(tools), "Weather?")
        await client.close()
        bb.finish()
        return answer

    recorded_answer = asyncio.run(run("record"))
    fake_api.reset()
    assert asyncio.run(run("replay")) == recorded_answer
    assert fake_api.requests == []


def test_sync_openai_agent_replays(fake_api: FakeAPI, tmp_path: Path) -> None:
    import openai

    fake_api.brain = weather_brain("openai", cities=["Paris"])
    out = tmp_path / "chat.json"

    def run(mode: str) -> str:
        bb = blackbox.session(mode, out=out if mode == "record" else None, cassette=out if mode == "replay" else None)
        client = openai.OpenAI(http_client=bb.http_client(), base_url=fake_api.openai_url, api_key="k" * 12)
        answer = openai_agent(client, bb.tools(TOOLS), "Paris?")
        bb.finish()
        return answer

    assert run("record") == run("replay")
    assert len(fake_api.requests) == 2


# ---------------------------------------------------------------------------------------------------------
# divergences


def test_a_changed_prompt_diverges_with_the_exact_report(recorded: tuple[Path, str], fake_api: FakeAPI) -> None:
    import anthropic

    cassette, url = recorded
    bb, exc = replay(cassette, url, prompt="Weather in Rome?")
    assert isinstance(exc, anthropic.BadRequestError) and blackbox.is_blackbox_error(exc)
    assert exc.body["error"]["message"].startswith("[blackbox] replay diverged at step 0")
    error = divergence_of(bb)
    assert (error.step, error.path) == (0, "messages[0].content")
    assert str(error) == (
        "replay diverged at step 0, messages[0].content\n"
        '  recorded: "Weather in Paris and Oslo, then book Paris?"\n'
        '  actual:   "Weather in Rome?"\n'
        "  the agent sent a different request than the one recorded; if the difference is nondeterministic "
        "(a timestamp, a random id), rerun with --match sequence")
    assert fake_api.requests == []
    with pytest.raises(anthropic.BadRequestError):  # every later request: the same answer
        client_for(bb, url).messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}])


def test_a_changed_model_diverges(recorded: tuple[Path, str]) -> None:
    cassette, url = recorded
    bb, _ = replay(cassette, url, model="claude-opus-4-1")
    error = divergence_of(bb)
    assert (error.step, error.path) == (0, "model")
    assert '"claude-sonnet-4-6"' in str(error) and '"claude-opus-4-1"' in str(error)


def test_a_changed_tool_schema_diverges(recorded: tuple[Path, str]) -> None:
    cassette, url = recorded
    defs = anthropic_tools()
    defs[1]["input_schema"]["properties"]["nights"] = {"type": "number"}
    bb, _ = replay(cassette, url, tool_defs=defs)
    error = divergence_of(bb)
    assert (error.step, error.path) == (0, "tools[1].inputSchema.properties.nights.type")


def test_a_changed_tool_argument_diverges_at_the_tool_call(recorded: tuple[Path, str]) -> None:
    cassette, url = recorded
    shouting = {**TOOLS, "get_weather": lambda city: get_weather(city.upper())}

    def agent(client: Any, tools: dict[str, Any], prompt: str) -> Any:
        inner = tools["get_weather"]
        return anthropic_agent(client, {**tools, "get_weather": lambda city: inner(city=city.upper())}, prompt)

    bb, exc = replay(cassette, url, agent, tools=shouting)
    assert blackbox.is_blackbox_error(exc)  # the agent sent the tool's error back; the next call was refused
    error = divergence_of(bb)
    assert (error.step, error.path) == (2, "tool get_weather input")
    assert 'recorded: {"city":"Paris"}' in str(error) and 'actual:   {"city":"PARIS"}' in str(error)


def test_an_extra_model_call_diverges(recorded: tuple[Path, str]) -> None:
    cassette, url = recorded

    def agent(client: Any, tools: dict[str, Any], prompt: str) -> Any:
        anthropic_agent(client, tools, prompt)
        return client.messages.create(model="claude-sonnet-4-6", max_tokens=8,
                                      messages=[{"role": "user", "content": "and?"}])

    bb, _ = replay(cassette, url, agent)
    error = divergence_of(bb)
    assert error.step == 12 and "the agent made another model call; the cassette records 3" in str(error)


def test_a_missing_model_call_diverges_at_the_end(recorded: tuple[Path, str]) -> None:
    cassette, url = recorded

    def agent(client: Any, tools: dict[str, Any], prompt: str) -> Any:
        return anthropic_agent(client, tools, prompt, max_turns=2)

    bb, exc = replay(cassette, url, agent)
    assert isinstance(exc, RuntimeError)  # the agent gave up after two turns
    error = divergence_of(bb)
    assert (error.step, error.path) == (10, "end of run")
    assert "recorded: 1 more model call" in str(error)


def test_a_skipped_tool_diverges_in_both_match_modes(recorded: tuple[Path, str]) -> None:
    cassette, url = recorded

    def agent(client: Any, tools: dict[str, Any], prompt: str) -> Any:
        skip_oslo = dict(tools)
        inner = tools["get_weather"]
        skip_oslo["get_weather"] = lambda city: inner(city=city) if city == "Paris" else get_weather(city)
        return anthropic_agent(client, skip_oslo, prompt)

    for match in ("strict", "sequence"):
        bb, _ = replay(cassette, url, agent, match=match)
        error = divergence_of(bb)
        assert (error.step, error.path) == (4, "tool_call"), match
        assert "the agent moved on without running it" in str(error)


def test_sequence_mode_tolerates_a_changed_prompt(recorded: tuple[Path, str], fake_api: FakeAPI) -> None:
    cassette, url = recorded
    stamped = f"{PROMPT} (asked at {time.time()})"
    bb, answer = replay(cassette, url, prompt=stamped, match="sequence")
    assert answer == "Booked Paris, BK-PAR2." and bb.finish().status == "success"
    bb, _ = replay(cassette, url, prompt=stamped)
    assert divergence_of(bb).path == "messages[0].content"


def test_a_different_outcome_diverges(recorded: tuple[Path, str]) -> None:
    cassette, url = recorded
    bb, _ = replay(cassette, url)
    with pytest.raises(ReplayDivergenceError) as caught:
        bb.finish(result="Booked Oslo instead.")
    assert caught.value.path == "outcome" and caught.value.step == 12
    assert 'recorded: success, result "Booked Paris, BK-PAR2."' in str(caught.value)
    assert 'actual:   success, result "Booked Oslo instead."' in str(caught.value)
    with pytest.raises(ReplayDivergenceError):
        bb.finish()


def test_a_tool_the_recording_never_ran_diverges(recorded: tuple[Path, str]) -> None:
    cassette, _ = recorded
    bb = blackbox.session("replay", cassette=cassette)
    with pytest.raises(ReplayDivergenceError) as caught:
        bb.tool("book_hotel", book_hotel)("Paris", 2)
    assert caught.value.path == "tool book_hotel" and caught.value.step == 0


def test_other_urls_would_need_the_network(recorded: tuple[Path, str], fake_api: FakeAPI) -> None:
    import anthropic

    cassette, url = recorded
    bb = blackbox.session("replay", cassette=cassette)
    with pytest.raises(anthropic.BadRequestError, match="would need the network"):
        client_for(bb, url).models.list()
    with pytest.raises(BlackboxUnsupportedError):
        bb.finish()
    assert fake_api.requests == []


def test_replay_of_a_missing_or_broken_cassette_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(blackbox.CassetteError, match="no such file"):
        blackbox.session("replay", cassette=tmp_path / "nope.json")
    broken = tmp_path / "broken.json"
    text = (Path(__file__).parent / "fixtures/traces/success-tool-use.v2.json").read_text()
    broken.write_text(text.replace('Book a hotel for Alice', 'Book a hotel for Bob', 1))
    with pytest.raises(ReplayDivergenceError, match="cannot replay a broken cassette"):
        blackbox.session("replay", cassette=broken)


def test_a_replayed_cassette_from_the_original_tool(tmp_path: Path) -> None:
    """The demo's cassette (written by the original) replays through wrapped tools alone."""
    cassette = Path(__file__).parent / "fixtures/traces/success-tool-use.v2.json"
    steps = load(cassette).steps
    first_call = next(s for s in steps if s.type == "tool_call")
    bb = blackbox.session("replay", cassette=cassette)
    tool = bb.tool(first_call.payload["toolName"], lambda *a, **k: pytest.fail("a replayed tool ran"))
    with pytest.raises(ReplayDivergenceError):  # the model call comes first in the recording
        tool(first_call.payload["toolInput"])
    with pytest.raises((ReplayDivergenceError, SessionError)):
        bb.finish()


def test_replay_closed_at_exit_reports_pass_or_divergence(recorded: tuple[Path, str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    cassette, url = recorded
    report = tmp_path / "report.json"
    monkeypatch.setenv("BLACKBOX_REPORT", str(report))
    bb, _ = replay(cassette, url)
    bb.close_at_exit(0)  # what the atexit hook does when the agent never calls finish()
    passed = json.loads(report.read_text())
    assert (passed["status"], passed["steps"], passed["finished"], passed["error"]) == ("success", 13, False, None)

    bb, _ = replay(cassette, url, prompt="Weather in Rome?")
    bb.close_at_exit(1)
    failed = json.loads(report.read_text())
    assert failed["status"] == "diverged" and failed["step"] == 0
    assert failed["error"].startswith("replay diverged at step 0, messages[0].content")
    assert failed["settings"]["mode"] == "replay" and failed["written"] is False


@pytest.mark.parametrize("calls", [5, "call-0", [1, None]])
def test_malformed_recorded_calls_do_not_crash_the_replayer(calls: Any) -> None:
    """A hand-edited cassette (re-hashed, so the chain holds) with junk in `calls`: no TypeError in replay."""
    from blackbox.format.cassette import StepChain
    from blackbox.live.replayer import Replayer
    from blackbox.providers.neutral import CallIds

    chain = StepChain("junk")
    chain.append("model_input", 0, {"messages": [], "tools": []})
    chain.append("model_output", 0, {"type": "tool_calls", "calls": calls})
    answer = Replayer(chain.cassette(0), CallIds(), match="sequence").claim_model_call({})
    assert answer.index == 1
