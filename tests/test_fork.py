"""Fork mode in the session (docs/format.md, "Fork"): replay a recorded real-SDK agent up to a tool result, give it a
new value
there, and continue from scripted replies or the (fake) live API; the child verifies and diffs at exactly N."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.errors import BlackboxUnsupportedError, ReplayDivergenceError, SessionError, UsageError
from blackbox.format.cassette import StepChain, load
from blackbox.format.writing import dumps
from blackbox.live.recorder import journal_path
from tests.agents.loops import (
    aget_weather,
    anthropic_agent,
    async_anthropic_agent,
    book_hotel,
    get_weather,
    openai_agent,
)
from tests.fakeapi import FakeAPI, anthropic_message, chat_completion, last_tool_results, turn_brain

pytest_plugins = ["tests.conftest_fakeapi"]

PROMPT = "Weather in Paris and Oslo, then book the warmer city for two nights."
SNOW = {"city": "Paris", "temp_c": -5, "sky": "snow"}
KEY = "sk-ant-fork-test-key-000000000"


def warmer_brain(provider: str) -> Any:
    """Both forecasts (parallel calls), then book the warmer city, then answer with the reference: a model that
    reads the tool results, so a changed forecast changes what it books."""

    def reply(text: str | None, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        if provider == "anthropic":
            return anthropic_message(text=text, tool_uses=calls)
        return chat_completion(content=text, tool_calls=calls)

    def book(body: dict[str, Any]) -> dict[str, Any]:
        forecasts = [json.loads(text) for text in last_tool_results(body)]
        best = max(forecasts, key=lambda f: f["temp_c"])
        return reply(None, [("book_hotel", {"city": best["city"], "nights": 2})])

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        booking = json.loads(last_tool_results(body)[0])
        return reply(f"Booked {booking['city']}, {booking['reference']}.", [])

    first = lambda body: reply("Checking both.", [("get_weather", {"city": "Paris"}),  # noqa: E731
                                                  ("get_weather", {"city": "Oslo"})])
    return turn_brain([first, book, answer])


class Counted:
    """The agent's tools, counting which ones really ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []

    def tools(self) -> dict[str, Any]:
        def weather(city: str) -> dict[str, Any]:
            self.ran.append(("get_weather", city))
            return get_weather(city)

        def hotel(city: str, nights: int) -> dict[str, Any]:
            self.ran.append(("book_hotel", city))
            return book_hotel(city, nights)

        return {"get_weather": weather, "book_hotel": hotel}


def client(bb: blackbox.Session, fake: FakeAPI, provider: str = "anthropic") -> Any:
    if provider == "anthropic":
        import anthropic

        return anthropic.Anthropic(http_client=bb.http_client(), base_url=fake.url, api_key=KEY, max_retries=0)
    import openai

    return openai.OpenAI(http_client=bb.http_client(), base_url=fake.openai_url, api_key="sk-proj-" + "y" * 30,
                         max_retries=0)


def agent_for(provider: str) -> Any:
    return anthropic_agent if provider == "anthropic" else openai_agent


def record(fake: FakeAPI, out: Path, provider: str = "anthropic") -> blackbox.Cassette:
    fake.brain = warmer_brain(provider)
    bb = blackbox.session("record", out=out)
    agent_for(provider)(client(bb, fake, provider), bb.tools(Counted().tools()), PROMPT)
    bb.finish()
    fake.reset()
    return load(out)


@pytest.fixture
def parent(fake_api: FakeAPI, tmp_path: Path) -> Path:
    """0 input, 1 output (Paris, Oslo), 2–5 the two forecasts, 6–9 book the warmer (Paris), 10–11 answer, 12 end."""
    out = tmp_path / "parent.json"
    cassette = record(fake_api, out)
    assert [s.type for s in cassette.steps][2:6] == ["tool_call", "tool_result"] * 2
    assert cassette.steps[9].payload["result"]["city"] == "Paris"
    return out


def write_script(path: Path, replies: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(replies))
    return path


BOOK_OSLO = [{"type": "tool_calls", "calls": [{"toolName": "book_hotel", "toolInput": {"city": "Oslo", "nights": 2}}]},
             {"type": "final_answer", "text": "Booked Oslo instead."}]


def fork_session(parent: Path, tmp_path: Path, at: int, value: Any, *, script: list[dict[str, Any]] | None = None,
                 **kwargs: Any) -> blackbox.Session:
    script_path = write_script(tmp_path / "replies.json", script) if script is not None else None
    return blackbox.session("fork", cassette=parent, out=tmp_path / "child.json", fork_at=at, fork_set=value,
                            continue_with="script" if script is not None else "live", script=script_path, **kwargs)


def assert_fork_of(child_path: Path, parent_path: Path, at: int, value: Any) -> blackbox.Cassette:
    """The fork shape (docs/format.md, "Fork"): parent id, fork step id, parent's createdAt, a verbatim prefix, the
    new result at N."""
    parent, child = load(parent_path), load(child_path)
    assert blackbox.verify(child).ok
    assert (child.id, child.parentId, child.forkedFromStepId) == ("child", parent.id, parent.steps[at].id)
    assert child.createdAt == parent.createdAt
    assert child.steps[:at] == parent.steps[:at]
    new, old = child.steps[at], parent.steps[at]
    assert new.type == "tool_result" and new.timestamp == old.timestamp and new.id == f"child:{at}"
    assert new.payload == {"toolCallId": old.payload["toolCallId"], "toolName": old.payload["toolName"],
                           "result": value}
    report = blackbox.diff(parent, child)
    assert report.first_divergence == at
    if "result" in old.payload:  # an error result has no `result` to compare with
        assert report.changed_value is not None and report.changed_value.new == value
    assert not journal_path(child_path).exists()
    return child


# ---------------------------------------------------------------------------------------------------------
# scripted continuation


def test_script_fork_at_the_first_parallel_result(parent: Path, tmp_path: Path, fake_api: FakeAPI) -> None:
    tools = Counted()
    bb = fork_session(parent, tmp_path, 3, SNOW, script=BOOK_OSLO)
    answer = anthropic_agent(client(bb, fake_api), bb.tools(tools.tools()), PROMPT)
    summary = bb.finish()
    assert answer == "Booked Oslo instead."
    assert str(summary) == f'forked {tmp_path / "child.json"}: 13 steps, success, result "Booked Oslo instead."'
    # Paris (the fork point) was answered with the new value; Oslo, after N in the same turn, ran for real
    assert tools.ran == [("get_weather", "Oslo"), ("book_hotel", "Oslo")]
    assert fake_api.requests == []
    child = assert_fork_of(tmp_path / "child.json", parent, 3, SNOW)
    steps = child.steps
    assert [s.type for s in steps[4:]] == ["tool_call", "tool_result", "model_input", "model_output", "tool_call",
                                           "tool_result", "model_input", "model_output", "metadata"]
    assert steps[4].payload["toolCallId"] == "call-1" and steps[5].payload["result"] == get_weather("Oslo")
    sent_back = steps[6].payload["messages"][-1]["content"]
    assert [json.loads(part["result"]) for part in sent_back] == [SNOW, get_weather("Oslo")]
    assert steps[7].payload == {"type": "tool_calls", "calls": [
        {"toolCallId": "call-2", "toolName": "book_hotel", "toolInput": {"city": "Oslo", "nights": 2}}]}
    assert steps[9].payload["toolCallId"] == "call-2"
    assert steps[12].payload == {"event": "run_completed", "status": "success", "result": "Booked Oslo instead."}
    report = blackbox.diff(load(parent), child)
    assert report.verdict.kind == "answer_changed"


def test_script_fork_at_the_second_parallel_result_serves_the_first(parent: Path, tmp_path: Path,
                                                                     fake_api: FakeAPI) -> None:
    tools = Counted()
    oslo_heat = {"city": "Oslo", "temp_c": 31, "sky": "clear"}
    bb = fork_session(parent, tmp_path, 5, oslo_heat, script=BOOK_OSLO)
    anthropic_agent(client(bb, fake_api), bb.tools(tools.tools()), PROMPT)
    bb.finish()
    assert tools.ran == [("book_hotel", "Oslo")]  # Paris came from the cassette, Oslo is the fork point
    child = assert_fork_of(tmp_path / "child.json", parent, 5, oslo_heat)
    assert [json.loads(p["result"]) for p in child.steps[6].payload["messages"][-1]["content"]] == [
        get_weather("Paris"), oslo_heat]


def test_openai_script_fork_with_the_single_call_shape(fake_api: FakeAPI, tmp_path: Path) -> None:
    parent = tmp_path / "parent.json"
    record(fake_api, parent, "openai")
    script = [{"type": "tool_call", "toolName": "book_hotel", "toolInput": {"city": "Oslo", "nights": 1}},
              {"type": "final_answer", "text": "Oslo it is."}]
    bb = fork_session(parent, tmp_path, 3, SNOW, script=script)
    assert openai_agent(client(bb, fake_api, "openai"), bb.tools(Counted().tools()), PROMPT) == "Oslo it is."
    bb.finish()
    child = assert_fork_of(tmp_path / "child.json", parent, 3, SNOW)
    assert child.steps[7].payload == {"type": "tool_call", "toolCallId": "call-2", "toolName": "book_hotel",
                                      "toolInput": {"city": "Oslo", "nights": 1}}
    assert fake_api.requests == []


def test_an_error_result_is_a_valid_fork_point(fake_api: FakeAPI, tmp_path: Path) -> None:
    def flaky(city: str) -> dict[str, Any]:
        if city == "Paris":
            raise TimeoutError("station offline")
        return get_weather(city)

    fake_api.queue(anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})]),
                   anthropic_message(text="Paris is unavailable."))
    parent = tmp_path / "parent.json"
    bb = blackbox.session("record", out=parent)
    anthropic_agent(client(bb, fake_api), bb.tools({"get_weather": flaky}), "Paris?")
    bb.finish()
    assert load(parent).steps[3].payload == {"toolCallId": "call-0", "toolName": "get_weather",
                                             "error": "station offline"}
    bb = fork_session(parent, tmp_path, 3, {"temp_c": 20}, script=[{"type": "final_answer", "text": "20 C."}])
    assert anthropic_agent(client(bb, fake_api), bb.tools({"get_weather": flaky}), "Paris?") == "20 C."
    bb.finish()
    child = assert_fork_of(tmp_path / "child.json", parent, 3, {"temp_c": 20})
    assert child.steps[4].payload["messages"][-1]["content"][0]["result"] == '{"temp_c":20}'
    assert blackbox.diff(load(parent), child).verdict.kind == "answer_changed"


def test_running_out_of_replies_is_a_clear_error(parent: Path, tmp_path: Path, fake_api: FakeAPI) -> None:
    import anthropic

    bb = fork_session(parent, tmp_path, 3, SNOW, script=BOOK_OSLO[:1])
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_agent(client(bb, fake_api), bb.tools(Counted().tools()), PROMPT)
    assert blackbox.is_blackbox_error(caught.value)
    expected = "the script has no reply left for model call 2 after the fork point (it holds 1); add more replies"
    assert "[blackbox] " + expected in str(caught.value)
    with pytest.raises(SessionError, match=re.escape(expected)):
        bb.finish()
    child = load(tmp_path / "child.json")  # the branch so far is kept, ending in the error
    assert child.steps[-1].payload["reason"] == "agent_error" and expected in child.steps[-1].payload["message"]
    assert fake_api.requests == []


# ---------------------------------------------------------------------------------------------------------
# live continuation


def test_live_fork_with_an_async_client_books_the_other_city(parent: Path, tmp_path: Path, fake_api: FakeAPI) -> None:
    import anthropic

    fake_api.brain = warmer_brain("anthropic")
    bb = fork_session(parent, tmp_path, 3, SNOW)
    ran: list[str] = []

    async def weather(city: str) -> dict[str, Any]:
        ran.append(city)
        return await aget_weather(city)

    async def hotel(city: str, nights: int) -> dict[str, Any]:
        ran.append(f"book {city}")
        return book_hotel(city, nights)

    async def run() -> str:
        async with anthropic.AsyncAnthropic(http_client=bb.async_http_client(), base_url=fake_api.url,
                                            api_key=KEY, max_retries=0) as async_client:
            return await async_anthropic_agent(async_client, bb.tools({"get_weather": weather,
                                                                       "book_hotel": hotel}), PROMPT)

    answer = asyncio.run(run())
    bb.finish()
    assert answer == "Booked Oslo, BK-OSL2."
    assert ran == ["Oslo", "book Oslo"]
    assert len(fake_api.requests) == 2  # only the calls after the fork point reach the API
    child = assert_fork_of(tmp_path / "child.json", parent, 3, SNOW)
    report = blackbox.diff(load(parent), child)
    assert report.verdict.kind == "answer_changed"
    assert "toolu_" not in (tmp_path / "child.json").read_text()


def test_extended_thinking_with_live_is_refused_and_script_works(tmp_path: Path, fake_api: FakeAPI) -> None:
    import anthropic

    fake_api.queue(anthropic_message(thinking="hmm", tool_uses=[("get_weather", {"city": "Paris"})]),
                   anthropic_message(thinking="ok", text="Mild."))
    parent = tmp_path / "parent.json"
    bb = blackbox.session("record", out=parent)
    sdk = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake_api.url, api_key=KEY, max_retries=0)
    tools = bb.tools({"get_weather": get_weather})

    def think_agent(sdk: Any, tools: dict[str, Any]) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Paris?"}]
        for _ in range(4):
            reply = sdk.messages.create(model="claude-sonnet-4-6", max_tokens=2048, messages=messages,
                                        thinking={"type": "enabled", "budget_tokens": 1024})
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                return "".join(b.text for b in reply.content if b.type == "text")
            messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id,
                                                       "content": json.dumps(tools[u.name](**u.input))}
                                                      for u in uses]}]
        raise AssertionError("too many turns")

    think_agent(sdk, tools)
    bb.finish()
    assert load(parent).steps[0].payload["params"]["thinking"]["type"] == "enabled"
    with pytest.raises(BlackboxUnsupportedError, match="fork --live of an agent using extended thinking"):
        fork_session(parent, tmp_path, 3, {"temp_c": 40})
    assert not (tmp_path / "child.json").exists()

    bb = fork_session(parent, tmp_path, 3, {"temp_c": 40}, script=[{"type": "final_answer", "text": "Hot."}])
    sdk = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake_api.url, api_key=KEY, max_retries=0)
    assert think_agent(sdk, bb.tools({"get_weather": get_weather})) == "Hot."
    bb.finish()
    assert_fork_of(tmp_path / "child.json", parent, 3, {"temp_c": 40})


# ---------------------------------------------------------------------------------------------------------
# runs that never reach the fork point, and refusals


def test_a_run_that_ends_before_the_fork_point_writes_nothing(parent: Path, tmp_path: Path) -> None:
    bb = fork_session(parent, tmp_path, 9, {"reference": "X"}, script=BOOK_OSLO)
    with pytest.raises(ReplayDivergenceError, match=r"^the run ended before the fork point \(step 9\)") as caught:
        bb.finish()
    assert caught.value.step == 9
    assert not (tmp_path / "child.json").exists()
    assert not journal_path(tmp_path / "child.json").exists()


def test_a_diverging_run_never_reaches_the_fork_point(parent: Path, tmp_path: Path, fake_api: FakeAPI) -> None:
    import anthropic

    bb = fork_session(parent, tmp_path, 3, SNOW, script=BOOK_OSLO)
    with pytest.raises(anthropic.BadRequestError):
        anthropic_agent(client(bb, fake_api), bb.tools(Counted().tools()), "A different prompt.")
    with pytest.raises(ReplayDivergenceError) as caught:
        bb.finish()
    assert str(caught.value).startswith("the run ended before the fork point (step 3), so no fork was written: "
                                        "replay diverged at step 0")
    assert caught.value.step == 0
    assert not (tmp_path / "child.json").exists()


def test_moving_on_without_running_the_fork_point_tool(parent: Path, tmp_path: Path, fake_api: FakeAPI) -> None:
    """The agent runs Oslo (after N) but skips Paris (the fork point) and calls the model: a divergence."""
    import anthropic

    bb = fork_session(parent, tmp_path, 3, SNOW, script=BOOK_OSLO)
    tools = bb.tools(Counted().tools())
    sdk = client(bb, fake_api)
    first = sdk.messages.create(model="claude-sonnet-4-6", max_tokens=512, system="You are a travel assistant. "
                                "Use the tools.", messages=[{"role": "user", "content": PROMPT}],
                                tools=_anthropic_tool_defs())
    oslo = next(b for b in first.content if b.type == "tool_use" and b.input["city"] == "Oslo")
    tools["get_weather"](city="Oslo")
    with pytest.raises(anthropic.BadRequestError, match="the agent moved on without running it"):
        sdk.messages.create(model="claude-sonnet-4-6", max_tokens=512, messages=[
            {"role": "user", "content": PROMPT},
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": oslo.id, "content": "{}"}]}])
    with pytest.raises(ReplayDivergenceError, match=r"before the fork point \(step 3\).*step 2, tool_call"):
        bb.finish()
    assert not (tmp_path / "child.json").exists() and not journal_path(tmp_path / "child.json").exists()


def _anthropic_tool_defs() -> list[dict[str, Any]]:
    from tests.agents.loops import anthropic_tools

    return anthropic_tools()


def test_a_fork_set_by_variables_names_them_not_cli_flags(parent: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"BLACKBOX_MODE": "fork", "BLACKBOX_CASSETTE": str(parent), "BLACKBOX_FORK_AT": "99",
                        "BLACKBOX_FORK_SET": "1", "BLACKBOX_CONTINUE": "live",
                        "BLACKBOX_OUT": str(tmp_path / "f.json")}.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(UsageError, match=r"^fork_at \(BLACKBOX_FORK_AT\) 99 is outside the cassette") as caught:
        blackbox.session()
    assert "--" not in str(caught.value)


def test_settings_and_fork_plan_are_validated(parent: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="step 2 is a tool_call, not a tool_result; tool_result steps: 3, 5, 9"):
        fork_session(parent, tmp_path, 2, 1, script=BOOK_OSLO)
    with pytest.raises(UsageError, match=r"^out \(BLACKBOX_OUT\) must differ from the cassette"):
        blackbox.session("fork", cassette=parent, out=parent, fork_at=3, fork_set=1, continue_with="live")
    bad = write_script(tmp_path / "bad.json", [{"type": "tool_calls", "calls": []}])
    with pytest.raises(UsageError, match=r"replies\[0\]\.calls must be a non-empty array"):
        blackbox.session("fork", cassette=parent, out=tmp_path / "c.json", fork_at=3, fork_set=1,
                         continue_with="script", script=bad)
    with pytest.raises(UsageError, match="fork mode needs fork_set, continue_with"):
        blackbox.session("fork", cassette=parent, out=tmp_path / "c.json", fork_at=3)


@pytest.mark.parametrize(("text", "words"), [
    ("{nope", "--set is not valid JSON; quote strings"),
    ("[1e400]", "--set holds inf, which JSON cannot hold; use a finite number"),
    ('"\\ud800"', "--set holds a string with undecodable bytes (an unpaired surrogate)"),
    ("\udcff", "--set is not valid JSON"),  # argv bytes that are not UTF-8
    ("@missing.json", "cannot read missing.json: No such file or directory; check the path"),
    ("@deep.json", "--set @deep.json is not valid JSON: nested more than 10,000 levels deep"),
])
def test_bad_set_values_are_usage_errors(text: str, words: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Every --set the user can type is a clear UsageError before the agent starts, never a traceback later."""
    from blackbox.fork.plan import parse_set_value

    monkeypatch.chdir(tmp_path)
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UsageError) as caught:
        parse_set_value(text)
    assert words in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("text", ["0.9", '{"rain_chance": 0.9, "temps": [1.5, -0.0, 1e21]}',
                                  r'"caf\u00e9 \ud83d\ude00 (a JSON surrogate pair)"'])
def test_good_set_values_pass_the_checks(text: str) -> None:
    """The refusals above must not catch ordinary values: floats (JSFloat) and valid surrogate pairs."""
    from blackbox.fork.plan import parse_set_value
    from blackbox.format.canonical import canonical_text, decode_json

    assert canonical_text(parse_set_value(text)) == canonical_text(decode_json(text))


def test_forking_a_turn_not_in_call_order_is_refused(tmp_path: Path) -> None:
    chain = StepChain("odd")
    chain.append("model_input", 1, {"messages": [{"role": "user", "content": "x"}], "tools": []})
    chain.append("model_output", 2, {"type": "tool_calls", "calls": [
        {"toolCallId": "call-0", "toolName": "a", "toolInput": {}},
        {"toolCallId": "call-1", "toolName": "b", "toolInput": {}}]})
    for i, (kind, call) in enumerate([("tool_call", "call-0"), ("tool_call", "call-1"), ("tool_result", "call-0"),
                                      ("tool_result", "call-1")]):
        payload = {"toolCallId": call, "toolName": "ab"[int(call[-1])]}
        payload.update({"toolInput": {}} if kind == "tool_call" else {"result": i})
        chain.append(kind, 3 + i, payload)
    path = tmp_path / "odd.json"
    path.write_bytes(dumps(chain.cassette(0)))
    with pytest.raises(BlackboxUnsupportedError, match="the call at step 3 has its result after the fork point"):
        blackbox.session("fork", cassette=path, out=tmp_path / "c.json", fork_at=4, fork_set=1,
                         continue_with="live")


def test_the_report_says_why_a_fork_could_not_start(parent: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "report.json"
    monkeypatch.setenv("BLACKBOX_REPORT", str(report))
    with pytest.raises(UsageError):
        fork_session(parent, tmp_path, 0, 1, script=BOOK_OSLO)
    written = json.loads(report.read_text())
    assert written["status"] == "error" and written["errorType"] == "UsageError"
    assert "step 0 is a model_input" in written["error"]


def test_a_later_sibling_run_first_still_lands_in_call_order(parent: Path, tmp_path: Path, fake_api: FakeAPI) -> None:
    """Oslo (after N) runs for real before Paris (the fork point); the child keeps the model's call order."""
    tools = Counted()
    bb = fork_session(parent, tmp_path, 3, SNOW, script=BOOK_OSLO, trace_id="snowy")
    wrapped = bb.tools(tools.tools())
    sdk = client(bb, fake_api)
    first = sdk.messages.create(model="claude-sonnet-4-6", max_tokens=512, system="You are a travel assistant. "
                                "Use the tools.", messages=[{"role": "user", "content": PROMPT}],
                                tools=_anthropic_tool_defs())
    uses = [b for b in first.content if b.type == "tool_use"]
    results = {u.input["city"]: wrapped["get_weather"](**u.input) for u in reversed(uses)}
    assert results == {"Oslo": get_weather("Oslo"), "Paris": SNOW} and tools.ran == [("get_weather", "Oslo")]
    second = sdk.messages.create(model="claude-sonnet-4-6", max_tokens=512, messages=[
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id,
                                      "content": json.dumps(results[u.input["city"]])} for u in uses]}])
    assert second.content[0].input == {"city": "Oslo", "nights": 2}
    bb.finish(result="stopped here")
    child = load(tmp_path / "child.json")
    assert child.id == "snowy" and child.steps[3].payload["result"] == SNOW
    assert [(s.type, s.payload.get("toolCallId")) for s in child.steps[4:6]] == [("tool_call", "call-1"),
                                                                                 ("tool_result", "call-1")]
    assert blackbox.verify(child).ok and blackbox.diff(load(parent), child).first_divergence == 3


def test_match_sequence_is_honoured_before_the_fork_point(parent: Path, tmp_path: Path, fake_api: FakeAPI) -> None:
    import anthropic

    reworded = PROMPT + " Thanks!"
    bb = fork_session(parent, tmp_path, 3, SNOW, script=BOOK_OSLO)
    with pytest.raises(anthropic.BadRequestError, match="replay diverged at step 0"):
        anthropic_agent(client(bb, fake_api), bb.tools(Counted().tools()), reworded)
    bb = fork_session(parent, tmp_path, 3, SNOW, script=BOOK_OSLO, match="sequence")
    assert anthropic_agent(client(bb, fake_api), bb.tools(Counted().tools()), reworded) == "Booked Oslo instead."
    bb.finish()
    child = assert_fork_of(tmp_path / "child.json", parent, 3, SNOW)
    assert child.steps[6].payload["messages"][0]["content"] == reworded  # after N, the live request is recorded


def test_a_scripted_fork_never_uses_the_network_for_other_urls(parent: Path, tmp_path: Path,
                                                               fake_api: FakeAPI) -> None:
    bb = fork_session(parent, tmp_path, 3, SNOW, script=BOOK_OSLO)
    client(bb, fake_api).messages.create(model="claude-sonnet-4-6", max_tokens=512, system="You are a travel "
                                         "assistant. Use the tools.", messages=[{"role": "user", "content": PROMPT}],
                                         tools=_anthropic_tool_defs())
    assert bb.tools(Counted().tools())["get_weather"](city="Paris") == SNOW  # past the fork point
    response = bb.http_client().get(fake_api.url + "/status")
    assert response.status_code == 400 and "never uses it" in response.text and "scripted fork" in response.text
    assert fake_api.requests == []
