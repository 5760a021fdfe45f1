"""Recording real SDK agents (anthropic, openai; sync and async) through the session against the fake API."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.errors import BlackboxUnsupportedError, SessionError, UsageError
from blackbox.format.canonical import canonical_text
from blackbox.format.cassette import chain_break, load
from blackbox.live.recorder import journal_path
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
    result_text,
)
from tests.conftest import FIXTURES
from tests.fakeapi import (
    FakeAPI,
    anthropic_message,
    chat_completion,
    error_reply,
    json_reply,
    turn_brain,
    weather_brain,
)

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "sk-ant-api03-recording-test-key-0123456789"
TOOLS = {"get_weather": get_weather, "book_hotel": book_hotel}


def anthropic_client(bb: blackbox.Session, fake: FakeAPI, **kwargs: Any) -> Any:
    import anthropic

    kwargs.setdefault("max_retries", 0)
    return fake.closes(anthropic.Anthropic(http_client=bb.http_client(), base_url=fake.url, api_key=KEY, **kwargs))


def openai_client(bb: blackbox.Session, fake: FakeAPI, **kwargs: Any) -> Any:
    import openai

    kwargs.setdefault("max_retries", 0)
    return fake.closes(openai.OpenAI(http_client=bb.http_client(), base_url=fake.openai_url,
                                     api_key="sk-proj-" + "x" * 30, **kwargs))


def assert_neutral(path: Path) -> blackbox.Cassette:
    """The file loads, its chain holds, verify passes, and no provider datum is in it."""
    from blackbox.format.verify import verify

    cassette = load(path)
    assert chain_break(cassette) is None
    assert verify(cassette).ok
    text = path.read_text()
    for leak in ("toolu_", "msg_01", "chatcmpl-", "call_", "usage", "stop_reason", "finish_reason", KEY):
        assert leak not in text
    assert not journal_path(path).exists()
    return cassette


def types(cassette: blackbox.Cassette) -> list[str]:
    return [s.type for s in cassette.steps]


# ---------------------------------------------------------------------------------------------------------
# what a recording holds


def test_sync_anthropic_agent_records_a_neutral_verified_cassette(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.brain = weather_brain("anthropic", cities=["Paris", "Oslo"])
    out = tmp_path / "weather.json"
    bb = blackbox.session("record", out=out)
    answer = anthropic_agent(anthropic_client(bb, fake_api), bb.tools(TOOLS), "Weather in Paris and Oslo?")
    summary = bb.finish()

    assert summary.status == "success" and summary.steps == 9 and summary.written
    cassette = assert_neutral(out)
    assert cassette.id == "weather" and types(cassette) == [
        "model_input", "model_output", "tool_call", "tool_result", "tool_call", "tool_result",
        "model_input", "model_output", "metadata"]
    first = cassette.steps[0].payload
    assert first == {
        "messages": [{"role": "user", "content": "Weather in Paris and Oslo?"}],
        "tools": [{"name": t["name"], "description": t["description"], "inputSchema": t["input_schema"]}
                  for t in anthropic_tools()],
        "systemPrompt": "You are a travel assistant. Use the tools.",
        "model": "claude-sonnet-4-6",
        "params": {"maxTokens": 512},
    }
    assert cassette.steps[1].payload["calls"][1] == {"toolCallId": "call-1", "toolName": "get_weather",
                                                     "toolInput": {"city": "Oslo"}}
    assert cassette.steps[5].payload == {"toolCallId": "call-1", "toolName": "get_weather",
                                         "result": get_weather("Oslo")}
    history = cassette.steps[6].payload["messages"]
    assert [p["toolCallId"] for p in history[2]["content"]] == ["call-0", "call-1"]
    assert cassette.steps[-1].payload == {"event": "run_completed", "status": "success", "result": answer}
    assert cassette.steps[0].timestamp <= cassette.steps[1].timestamp <= cassette.steps[2].timestamp


def test_a_recording_of_the_fleet_triage_agent_has_the_original_payloads(fake_api: FakeAPI, tmp_path: Path) -> None:
    """The same system prompt, messages and tools as the original's real-Anthropic run, the same answers
    from the fake API: every recorded payload equals the fixture's, field by field."""
    fixture = load(FIXTURES / "fleet-triage/cassettes/triage-incident.json")
    first = fixture.steps[0].payload
    outputs = [s.payload for s in fixture.steps if s.type == "model_output"]
    results = {s.payload["toolCallId"]: s.payload["result"] for s in fixture.steps if s.type == "tool_result"}
    calls = [c for o in outputs for c in o.get("calls", [])]
    fake_api.queue(*[anthropic_message(text=o.get("text"), model=first["model"],
                                       tool_uses=[(c["toolName"], c["toolInput"]) for c in o.get("calls", [])])
                     for o in outputs])
    served = iter(results[c["toolCallId"]] for c in calls)
    tool_defs = [{"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
                 for t in first["tools"]]

    out = tmp_path / "triage-incident.json"
    bb = blackbox.session("record", out=out)
    tools = bb.tools({t["name"]: (lambda **_: next(served)) for t in first["tools"]})
    anthropic_agent(anthropic_client(bb, fake_api), tools, first["messages"][0]["content"],
                    system=first["systemPrompt"], model=first["model"], tool_defs=tool_defs,
                    max_tokens=first["params"]["maxTokens"])
    bb.finish()

    recorded = assert_neutral(out)
    assert types(recorded) == types(fixture)
    for mine, theirs in zip(recorded.steps, fixture.steps, strict=True):
        assert canonical_text(mine.payload) == canonical_text(theirs.payload), f"step {mine.index}"
    assert recorded.createdAt <= recorded.steps[0].timestamp


def test_sync_openai_agent_records_the_same_shape(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.brain = weather_brain("openai", cities=["Paris"])
    out = tmp_path / "chat.json"
    bb = blackbox.session("record", out=out)
    openai_agent(openai_client(bb, fake_api), bb.tools(TOOLS), "Weather in Paris?")
    bb.finish()
    cassette = assert_neutral(out)
    assert types(cassette) == ["model_input", "model_output", "tool_call", "tool_result", "model_input",
                               "model_output", "metadata"]
    assert cassette.steps[0].payload["systemPrompt"] == "You are a travel assistant. Use the tools."
    assert cassette.steps[4].payload["messages"][2]["content"][0] == {
        "type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather",
        "result": result_text(get_weather("Paris"))}


def test_async_parallel_tools_are_written_in_the_models_call_order(fake_api: FakeAPI, tmp_path: Path) -> None:
    """Paris (call-0) finishes last; its steps still come first."""
    fake_api.brain = weather_brain("anthropic", cities=["Paris", "Oslo", "Lisbon"])
    out = tmp_path / "async.json"

    async def run() -> str:
        bb = blackbox.session("record", out=out)
        import anthropic

        client = anthropic.AsyncAnthropic(http_client=bb.async_http_client(), base_url=fake_api.url, api_key=KEY,
                                          max_retries=0)
        answer = await async_anthropic_agent(client, bb.tools({"get_weather": aget_weather,
                                                               "book_hotel": abook_hotel}), "Weather?")
        await client.close()
        bb.finish()
        return answer

    asyncio.run(run())
    cassette = assert_neutral(out)
    tool_steps = [(s.type, s.payload["toolCallId"]) for s in cassette.steps if s.type.startswith("tool_")]
    assert tool_steps == [("tool_call", "call-0"), ("tool_result", "call-0"), ("tool_call", "call-1"),
                          ("tool_result", "call-1"), ("tool_call", "call-2"), ("tool_result", "call-2")]
    paris_result = cassette.steps[3]
    assert paris_result.timestamp >= cassette.steps[5].timestamp  # it did finish last


def test_async_openai_agent_records(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.brain = weather_brain("openai", cities=["Oslo", "Paris"])
    out = tmp_path / "achat.json"

    async def run() -> None:
        import openai

        bb = blackbox.session("record", out=out)
        client = openai.AsyncOpenAI(http_client=bb.async_http_client(), base_url=fake_api.openai_url,
                                    api_key="k" * 10, max_retries=0)
        await async_openai_agent(client, bb.tools({"get_weather": aget_weather}), "Weather?")
        await client.close()
        bb.finish()

    asyncio.run(run())
    cassette = assert_neutral(out)
    assert [s.payload["toolInput"]["city"] for s in cassette.steps if s.type == "tool_call"] == ["Oslo", "Paris"]


def test_refusal_and_max_tokens_final_answers(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.queue(anthropic_message(text="I can't help with that.", stop_reason="refusal"),
                   chat_completion(content="It is", finish_reason="length"))
    out = tmp_path / "stops.json"
    bb = blackbox.session("record", out=out)
    anthropic_agent(anthropic_client(bb, fake_api), {}, "Something bad")
    bb.finish()
    assert load(out).steps[1].payload == {"type": "final_answer", "text": "I can't help with that.", "stop": "refusal"}

    out2 = tmp_path / "length.json"
    bb = blackbox.session("record", out=out2)
    openai_agent(openai_client(bb, fake_api), {}, "Long")
    bb.finish()
    assert load(out2).steps[1].payload == {"type": "final_answer", "text": "It is", "stop": "length"}


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_encoded_response_bodies_are_recorded(fake_api: FakeAPI, tmp_path: Path, encoding: str) -> None:
    fake_api.queue(json_reply(anthropic_message(tool_uses=[("get_weather", {"city": "Oslo"})]), encoding=encoding),
                   json_reply(anthropic_message(text="Cold in Oslo. Ünïcode ✓"), encoding=encoding))
    out = tmp_path / f"{encoding}.json"
    bb = blackbox.session("record", out=out)
    answer = anthropic_agent(anthropic_client(bb, fake_api), bb.tools(TOOLS), "Oslo?")
    bb.finish()
    assert answer == "Cold in Oslo. Ünïcode ✓"
    cassette = assert_neutral(out)
    assert cassette.steps[1].payload["calls"][0]["toolInput"] == {"city": "Oslo"}
    assert cassette.steps[-2].payload == {"type": "final_answer", "text": "Cold in Oslo. Ünïcode ✓"}


def test_api_errors_go_back_unrecorded_and_a_retry_is_recorded_once(fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic

    rate_limited = error_reply("anthropic", 429)
    rate_limited.headers.append(("retry-after-ms", "1"))
    fake_api.queue(rate_limited, anthropic_message(text="Hello."), error_reply("anthropic", 401))
    out = tmp_path / "errors.json"
    bb = blackbox.session("record", out=out)
    client = anthropic_client(bb, fake_api, max_retries=1)
    assert anthropic_agent(client, {}, "Hi") == "Hello."
    with pytest.raises(anthropic.AuthenticationError):
        anthropic_agent(client, {}, "Again")
    bb.finish()
    assert len(fake_api.requests) == 3
    assert types(assert_neutral(out)) == ["model_input", "model_output", "metadata"]


def test_tool_errors_are_recorded_and_re_raised(fake_api: FakeAPI, tmp_path: Path) -> None:
    def broken(city: str) -> Any:
        raise ValueError(f"no station in {city}")

    fake_api.brain = weather_brain("anthropic", cities=["Atlantis"])
    out = tmp_path / "tool-error.json"
    bb = blackbox.session("record", out=out)
    anthropic_agent(anthropic_client(bb, fake_api), bb.tools({"get_weather": broken}), "Atlantis?")
    bb.finish()
    cassette = assert_neutral(out)
    assert cassette.steps[3].payload == {"toolCallId": "call-0", "toolName": "get_weather",
                                         "error": "no station in Atlantis"}


def test_unstorable_tool_values_are_refused_naming_the_tool_and_fail_the_run(tmp_path: Path) -> None:
    def refused(tool: Any, *args: Any, match: str) -> None:
        bb = blackbox.session("record", out=tmp_path / "x.json")
        with pytest.raises(SessionError, match=match):
            bb.tool("tool", tool)(*args)
        with pytest.raises(SessionError, match=match):  # the run fails however the framework took the error
            bb.finish()
        ending = load(tmp_path / "x.json").steps[-1].payload
        assert ending["status"] == "error" and re.search(match, ending["message"])

    refused(lambda: {"a", "b"}, match=r"'tool' returned a set .*annotate its return type \(-> set\)")
    refused(lambda value: value, b"raw", match=r"arguments of tool 'tool'.*bytes")
    refused(lambda: [os.fsdecode(b"caf\xe9.txt")], match=r"'tool'.*unpaired surrogate")  # a latin-1 name on UTF-8
    bb = blackbox.session("record", out=tmp_path / "x.json")
    assert bb.tool("echo", lambda value: value)(None) is None


def test_wrapped_tools_keep_signature_and_kind(tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "x.json")

    @bb.tool("book_hotel")
    def book(city: str, nights: int = 1) -> dict[str, Any]:
        """Book."""
        return {"city": city, "nights": nights}

    wrapped = bb.tools({"get_weather": aget_weather})["get_weather"]
    import inspect

    assert str(inspect.signature(book)) == "(city: 'str', nights: 'int' = 1) -> 'dict[str, Any]'"
    assert book.__doc__ == "Book." and book.__name__ == "book"
    assert inspect.iscoroutinefunction(wrapped) and not inspect.iscoroutinefunction(book)
    assert book("Oslo", nights=2) == {"city": "Oslo", "nights": 2}
    assert asyncio.run(wrapped(city="Paris"))["city"] == "Paris"
    book("Rome")
    bb.finish()
    inputs = [s.payload["toolInput"] for s in load(tmp_path / "x.json").steps if s.type == "tool_call"]
    assert inputs == [{"city": "Oslo", "nights": 2}, {"city": "Paris"}, {"city": "Rome"}]  # bound to the names
    ids = [s.payload["toolCallId"] for s in load(tmp_path / "x.json").steps if s.type == "tool_call"]
    assert ids == ["call-0", "call-1", "call-2"]


# ---------------------------------------------------------------------------------------------------------
# the rules of finish()


def test_finish_twice_after_finish_and_while_tools_run(fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic

    fake_api.queue(anthropic_message(text="Done."))
    out = tmp_path / "f.json"
    bb = blackbox.session("record", out=out)
    client = anthropic_client(bb, fake_api)
    anthropic_agent(client, {}, "Hi")

    def finisher() -> None:
        bb.finish()

    inner = bb.tool("finisher", finisher)
    with pytest.raises(SessionError, match="still running"):
        inner()
    first = bb.finish()
    assert bb.finish() is first and first.status == "success"
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_agent(client, {}, "Again")
    assert caught.value.body["error"]["message"].startswith("[blackbox] the session has finished")
    with pytest.raises(SessionError, match="finished"):
        bb.tool("t", lambda: 1)()
    assert len(fake_api.requests) == 1


def test_explicit_result_and_error(tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "a.json")
    bb.finish(result="Booked.")
    assert load(tmp_path / "a.json").steps[-1].payload == {"event": "run_completed", "status": "success",
                                                           "result": "Booked."}
    bb = blackbox.session("record", out=tmp_path / "b.json")
    summary = bb.finish(error=RuntimeError(f"boom with {KEY}"))
    assert summary.status == "error" and summary.reason == "agent_error"
    assert load(tmp_path / "b.json").steps[-1].payload == {
        "event": "run_failed", "status": "error", "reason": "agent_error", "message": "boom with [redacted]"}


def test_context_manager_records_the_exception(tmp_path: Path) -> None:
    out = tmp_path / "cm.json"
    with pytest.raises(KeyError), blackbox.session("record", out=out) as bb:
        bb.tool("lookup", lambda key: {"a": 1}[key])("b")
    steps = load(out).steps
    assert [s.type for s in steps] == ["tool_call", "tool_result", "metadata"]
    assert steps[-1].payload["reason"] == "agent_error" and steps[-1].payload["message"] == "'b'"


def test_a_cassette_holding_the_key_is_refused_and_nothing_is_written(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.queue(anthropic_message(text="ok"))
    out = tmp_path / "leak.json"
    bb = blackbox.session("record", out=out)
    anthropic_agent(anthropic_client(bb, fake_api), {}, f"my key is {KEY[:9]} {KEY}")
    with pytest.raises(SessionError, match=r"^refusing to write the cassette: step 0") as caught:
        bb.finish()
    assert KEY not in str(caught.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SessionError):
        bb.finish()


# ---------------------------------------------------------------------------------------------------------
# Blackbox's own errors inside an SDK call


def test_unsupported_requests_fail_once_unretried_with_no_call_made(fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic

    out = tmp_path / "mcp.json"
    bb = blackbox.session("record", out=out)
    client = anthropic_client(bb, fake_api, max_retries=3)
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}],
                               extra_body={"mcp_servers": [{"type": "url", "url": "https://x", "name": "x"}]})
    message = caught.value.body["error"]["message"]
    assert message.startswith("[blackbox] mcp_servers (remote MCP tools run by the API) is not supported yet")
    assert blackbox.is_blackbox_error(caught.value)
    with pytest.raises(anthropic.BadRequestError) as again:  # every later request: the same answer
        client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert again.value.body["error"]["message"] == message
    assert fake_api.requests == []
    with pytest.raises(BlackboxUnsupportedError, match="mcp_servers"):
        bb.finish()
    with pytest.raises(BlackboxUnsupportedError):
        bb.finish()
    assert load(out).steps[-1].payload["reason"] == "agent_error"


def test_responses_server_state_is_refused_with_advice(fake_api: FakeAPI, tmp_path: Path) -> None:
    import openai

    bb = blackbox.session("record", out=tmp_path / "r.json")
    client = openai_client(bb, fake_api, max_retries=2)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.1", input="hi", previous_response_id="resp_1")
    assert "[blackbox] previous_response_id" in caught.value.message
    assert "send the whole conversation in input" in caught.value.body["message"]
    assert blackbox.is_blackbox_error(caught.value) and fake_api.requests == []


def test_overlapping_model_calls_are_refused(fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic

    fake_api.brain = lambda body: json_reply(anthropic_message(text="slow"), delay=0.2)

    async def run() -> list[Any]:
        bb = blackbox.session("record", out=tmp_path / "overlap.json")
        client = anthropic.AsyncAnthropic(http_client=bb.async_http_client(), base_url=fake_api.url, api_key=KEY,
                                          max_retries=2)
        ask = [client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": q}])
               for q in ("a", "b")]
        results = await asyncio.gather(*ask, return_exceptions=True)
        await client.close()
        with pytest.raises(SessionError, match=r"one blackbox\.session\(\) per concurrent conversation"):
            bb.finish()
        return results

    results = asyncio.run(run())
    assert results[0].content[0].text == "slow"
    assert isinstance(results[1], anthropic.BadRequestError) and "[blackbox] overlapping" in str(results[1])
    assert len(fake_api.requests) == 1


def test_a_request_no_provider_knows_is_refused_never_passed_silently(fake_api: FakeAPI, tmp_path: Path) -> None:
    """No silent hole: a recording that let an unknown request through would hold a run replay cannot answer
    (replay refuses it), so record refuses it too, before it is sent, with advice; the run ends failed."""
    import anthropic

    bb = blackbox.session("record", out=tmp_path / "o.json")
    client = anthropic_client(bb, fake_api)
    with pytest.raises(anthropic.BadRequestError, match=r"GET 127\.0\.0\.1/v1/models is not a model call .* "
                                                        r"wrap the function that makes it as a tool"):
        client.models.list()
    assert fake_api.paths() == []  # never sent
    with pytest.raises(BlackboxUnsupportedError, match="not a model call"):
        bb.finish()
    assert "not a model call" in json.loads((tmp_path / "o.json").read_text())["steps"][-1]["payload"]["message"]


def test_off_mode_changes_nothing(fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLACKBOX_MODE", raising=False)
    fake_api.brain = weather_brain("anthropic")
    bb = blackbox.session()
    assert bb.mode == "off"
    tools = {"get_weather": get_weather}
    assert bb.tools(tools)["get_weather"] is get_weather
    assert anthropic_agent(anthropic_client(bb, fake_api), tools, "Paris?").startswith("Weather:")
    assert bb.finish().steps == 0 and len(fake_api.requests) == 2


# ---------------------------------------------------------------------------------------------------------
# settings and the report


@pytest.mark.parametrize(("var", "value", "message"), [
    ("BLACKBOX_MODE", "recrod", "BLACKBOX_MODE='recrod'"),
    ("BLACKBOX_MATCH", "loose", "BLACKBOX_MATCH='loose'"),
    ("BLACKBOX_FORK_AT", "-1", "BLACKBOX_FORK_AT='-1'"),
    ("BLACKBOX_FORK_AT", "two", "BLACKBOX_FORK_AT='two'"),
    ("BLACKBOX_FORK_AT", "²", "BLACKBOX_FORK_AT='²'"),
    ("BLACKBOX_FORK_SET", "{nope", "BLACKBOX_FORK_SET is not valid JSON"),
    ("BLACKBOX_FORK_SET", "[1e400]", "BLACKBOX_FORK_SET holds inf"),
    ("BLACKBOX_CONTINUE", "later", "BLACKBOX_CONTINUE='later'"),
])
def test_invalid_environment_names_the_variable(monkeypatch: pytest.MonkeyPatch, var: str, value: str,
                                                message: str) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(UsageError) as caught:
        blackbox.session()
    assert str(caught.value).startswith(message)


def test_arguments_beat_the_environment_and_empty_is_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BLACKBOX_MODE", "replay")
    monkeypatch.setenv("BLACKBOX_MATCH", "")
    monkeypatch.setenv("BLACKBOX_TRACE_ID", "from-env")
    bb = blackbox.session("record", out=tmp_path / "run.json")
    assert (bb.mode, bb.settings.match, bb.trace_id) == ("record", "strict", "from-env")
    with pytest.raises(UsageError, match="record mode needs an output file"):
        blackbox.session("record")
    with pytest.raises(UsageError, match="mode='x'"):
        blackbox.session("x")  # type: ignore[arg-type]
    monkeypatch.delenv("BLACKBOX_TRACE_ID")
    monkeypatch.setenv("BLACKBOX_OUT", str(tmp_path / ".json"))
    assert blackbox.session("record").trace_id == "run"


def test_fork_parameters_are_validated(tmp_path: Path) -> None:
    cassette = FIXTURES / "traces/fork-parent.v2.json"
    with pytest.raises(UsageError, match="fork mode needs fork_set, continue_with"):
        blackbox.session("fork", cassette=cassette, out=tmp_path / "f.json", fork_at=4)
    with pytest.raises(UsageError, match="fork_at=-2"):
        blackbox.session("fork", cassette=cassette, fork_at=-2)
    with pytest.raises(UsageError, match="step 4 is a model_input, not a tool_result; tool_result steps: 3, 7, 11"):
        blackbox.session("fork", cassette=cassette, out=tmp_path / "f.json", fork_at=4, fork_set={"x": 1},
                         continue_with="live")


def test_the_report_for_the_launcher(fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "report.json"
    monkeypatch.setenv("BLACKBOX_REPORT", str(report))
    fake_api.queue(anthropic_message(text="Hi there."))
    bb = blackbox.session("record", out=tmp_path / "rep.json")
    started = json.loads(report.read_text())
    assert started["status"] == "running" and started["finished"] is False
    anthropic_agent(anthropic_client(bb, fake_api), {}, "Hi")
    bb.finish()
    done = json.loads(report.read_text())
    assert done == {"version": 1, "mode": "record", "path": str(tmp_path / "rep.json"), "steps": 3,
                    "status": "success", "finished": True, "written": True,
                    "settings": {"mode": "record", "out": str(tmp_path / "rep.json"), "cassette": None,
                                 "traceId": None, "forkAt": None, "forkSet": None, "continue": None, "script": None,
                                 "match": "strict"},
                    "error": None, "errorType": None, "step": None, "pid": done["pid"], "journalError": None,
                    "authStatus": None}


def test_parallel_unwrapped_results_and_unasked_tools_get_fresh_ids(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.queue(anthropic_message(tool_uses=[("get_weather", {"city": "Oslo"})]), anthropic_message(text="ok"))
    out = tmp_path / "fresh.json"
    bb = blackbox.session("record", out=out)
    extra = bb.tool("audit", lambda note: {"logged": note})
    extra("before")
    anthropic_agent(anthropic_client(bb, fake_api), bb.tools(TOOLS), "Oslo?")
    bb.finish()
    cassette = load(out)
    assert [(s.type, s.payload.get("toolCallId")) for s in cassette.steps[:4]] == [
        ("tool_call", "call-0"), ("tool_result", "call-0"), ("model_input", None), ("model_output", None)]
    assert cassette.steps[3].payload["calls"][0]["toolCallId"] == "call-1"


def test_turn_brain_multi_turn_booking(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.brain = turn_brain([
        anthropic_message(tool_uses=[("get_weather", {"city": "Lisbon"})]),
        anthropic_message(text="Booking.", tool_uses=[("book_hotel", {"city": "Lisbon", "nights": 2})]),
        anthropic_message(text="Booked BK-LIS2."),
    ])
    out = tmp_path / "book.json"
    bb = blackbox.session("record", out=out)
    assert anthropic_agent(anthropic_client(bb, fake_api), bb.tools(TOOLS), "Book Lisbon") == "Booked BK-LIS2."
    bb.finish()
    cassette = assert_neutral(out)
    assert blackbox.outcome(cassette).tools == ("get_weather", "book_hotel")


def test_a_cassette_failing_verify_is_refused(tmp_path: Path) -> None:
    """A realistic credential that is not the session's own key still fails verify's neutrality check."""
    out = tmp_path / "cred.json"
    bb = blackbox.session("record", out=out)
    bb.tool("read_env", lambda: {"token": "sk-proj-" + "A1b2C3d4" * 4})()
    with pytest.raises(SessionError, match=r"^refusing to write the cassette: verify provider_neutrality failed "
                                           r"at step 1: payload.result.token: .*the `cloud-key` detector"):
        bb.finish()
    assert list(tmp_path.iterdir()) == [tmp_path / "cred.refused.json"]  # the run before it, kept apart
    assert [s.type for s in load(tmp_path / "cred.refused.json").steps] == ["tool_call"]


def test_the_openai_bearer_key_is_known_to_the_session(fake_api: FakeAPI, tmp_path: Path) -> None:
    key = "sk-proj-" + "x" * 30
    fake_api.queue(chat_completion(content="ok"))
    bb = blackbox.session("record", out=tmp_path / "bearer.json")
    openai_agent(openai_client(bb, fake_api), {}, f"remember {key}")
    with pytest.raises(SessionError, match="step 0 contains the API key") as caught:
        bb.finish()
    assert key not in str(caught.value) and not (tmp_path / "bearer.json").exists()
