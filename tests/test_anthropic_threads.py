"""Anthropic's tool runner and message threads through the real SDK (anthropic 2.x threads the runner's turns:
after the first, a request sends only the new tool results and `thread: continue` from the last reply's id).

The fake API holds threads as the API documents (`tests/fakeapi_threads`).  Recording keeps the conversation the
model had (every request's whole history), replay answers it offline with the recorded reply ids (so the SDK
continues the same thread ids), a scripted fork works offline, and a live fork sends the server no id it never
issued: the branch's first turn goes out as a new thread with the whole conversation and the next ones
continue the server's thread.  What a thread cannot hand a cassette (a thread continued from a reply this run
was not given, server-side compaction, tools changed inside the conversation, the memory tool, managed-agent
sessions) is refused before anything is sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.fork.whatif import ScriptedModel, what_if
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, anthropic_message, turn_brain
from tests.fakeapi_threads import ThreadServer

anthropic = pytest.importorskip("anthropic")

MODEL = "claude-sonnet-4-6"
PROMPT = [{"role": "user", "content": "Weather in Paris, then Rome?"}]


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


async def aget_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


def tool_results(body: dict[str, Any]) -> list[str]:
    """Every tool result of the whole conversation, oldest first."""
    found = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                found.append(content if isinstance(content, str) else "".join(c["text"] for c in content))
    return found


def three_turns() -> ThreadServer:
    """Paris, then Rome (asked once Paris's result is in), then an answer quoting every result: the model sees
    the whole conversation only if the thread holds it."""
    return ThreadServer(turn_brain([
        lambda body: anthropic_message(text="First Paris.", tool_uses=[("get_weather", {"city": "Paris"})]),
        lambda body: anthropic_message(tool_uses=[("get_weather", {"city": "Rome"})]),
        lambda body: anthropic_message(text="Weather: " + "; ".join(tool_results(body))),
        lambda body: anthropic_message(text="Tomorrow too."),
    ]))


def client(bb: blackbox.Session, fake: FakeAPI, key: str = "test-key") -> Any:
    return fake.closes(anthropic.Anthropic(base_url=fake.url, api_key=key, http_client=bb.http_client(),
                                           max_retries=0))


def runner_agent(bb: blackbox.Session, fake: FakeAPI, *, stream: bool = False, thread: bool = True) -> str:
    """The SDK's own example shape: `@beta_tool` functions and the runner (the tool wrapped by Blackbox)."""
    tool = anthropic.beta_tool(bb.tool("get_weather", get_weather))
    extra = {} if thread else {"thread": False}
    runner = client(bb, fake).beta.messages.tool_runner(model=MODEL, max_tokens=200, tools=[tool], system="Be brief.",
                                                        messages=PROMPT, stream=stream, **extra)
    final = runner.until_done()
    return "".join(block.text for block in final.content if block.type == "text")


async def async_runner_agent(bb: blackbox.Session, fake: FakeAPI, *, stream: bool) -> str:
    tool = anthropic.beta_async_tool(bb.tool("get_weather", aget_weather), name="get_weather")
    async with anthropic.AsyncAnthropic(base_url=fake.url, api_key="test-key", http_client=bb.async_http_client(),
                                        max_retries=0) as aclient:
        runner = aclient.beta.messages.tool_runner(model=MODEL, max_tokens=200, tools=[tool], system="Be brief.",
                                                   messages=PROMPT, stream=stream)
        final = await runner.until_done()
    return "".join(block.text for block in final.content if block.type == "text")


def thread_agent(bb: blackbox.Session, fake: FakeAPI) -> str:
    """`client.beta.messages.thread(...)`: a tool loop over the thread, then another user turn on it."""
    tool = anthropic.beta_tool(bb.tool("get_weather", get_weather))
    thread = client(bb, fake).beta.messages.thread(model=MODEL, max_tokens=200, tools=[tool], system="Be brief.",
                                                   messages=PROMPT)
    first = thread.tool_runner().until_done()
    later = thread.send({"role": "user", "content": "And tomorrow?"})
    return " | ".join("".join(b.text for b in m.content if b.type == "text") for m in (first, later))


ANSWER = "Weather: sunny in Paris; sunny in Rome"


def record(agent: Any, fake: FakeAPI, out: Path, **kwargs: Any) -> tuple[str, ThreadServer]:
    fake.reset()
    fake.brain = server = three_turns()
    bb = blackbox.session("record", out=out)
    answer = agent(bb, fake, **kwargs)
    bb.finish(result=answer)
    return answer, server


def histories(path: Path) -> list[int]:
    return [len(step.payload["messages"]) for step in load(path).steps if step.type == "model_input"]


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_the_runner_s_threaded_turns_are_recorded_as_the_whole_conversation_and_replay_offline(
        fake_api: FakeAPI, tmp_path: Path, stream: bool) -> None:
    out = tmp_path / "run.json"
    answer, server = record(runner_agent, fake_api, out, stream=stream)
    assert answer == ANSWER
    assert server.created == 1 and server.continued == 2  # the SDK really threaded: only new messages went
    assert [len(r.body["messages"]) for r in fake_api.requests] == [1, 1, 1]
    assert histories(out) == [1, 3, 5]  # but the cassette holds what the model saw
    cassette = load(out)
    assert verify(cassette).ok
    assert all(s.payload.get("systemPrompt") == "Be brief." and s.payload["tools"][0]["name"] == "get_weather"
               for s in cassette.steps if s.type == "model_input")  # kept from the thread's first turn
    for replay_stream in (stream, not stream):
        fake_api.reset()
        bb = blackbox.session("replay", cassette=out)
        assert runner_agent(bb, fake_api, stream=replay_stream) == ANSWER
        assert bb.finish(result=ANSWER).status == "success" and fake_api.requests == []
    # the same agent without a thread records the same steps
    plain = tmp_path / "plain.json"
    record(runner_agent, fake_api, plain, thread=False)
    assert [s.payload for s in load(plain).steps] == [s.payload for s in cassette.steps]


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_the_async_runner_records_and_replays(fake_api: FakeAPI, tmp_path: Path, stream: bool) -> None:
    out = tmp_path / "run.json"
    fake_api.brain = server = three_turns()
    bb = blackbox.session("record", out=out)
    assert asyncio.run(async_runner_agent(bb, fake_api, stream=stream)) == ANSWER
    bb.finish(result=ANSWER)
    assert server.continued == 2 and histories(out) == [1, 3, 5] and verify(load(out)).ok
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert asyncio.run(async_runner_agent(bb, fake_api, stream=stream)) == ANSWER
    assert bb.finish(result=ANSWER).status == "success" and fake_api.requests == []


def test_a_message_thread_records_replays_and_forks(fake_api: FakeAPI, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    answer, server = record(thread_agent, fake_api, out)
    assert answer == f"{ANSWER} | Tomorrow too." and server.continued == 3
    assert histories(out) == [1, 3, 5, 7] and verify(load(out)).ok
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert thread_agent(bb, fake_api) == answer
    assert bb.finish(result=answer).status == "success" and fake_api.requests == []


def test_a_scripted_fork_of_a_threaded_run_continues_from_the_whole_history(fake_api: FakeAPI,
                                                                            tmp_path: Path) -> None:
    out, fork, script = tmp_path / "run.json", tmp_path / "fork.json", tmp_path / "replies.json"
    record(runner_agent, fake_api, out)
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris, so no Rome."}]))
    fake_api.reset()
    bb = blackbox.session("fork", cassette=out, out=fork, fork_at=3, fork_set="snowy", continue_with="script",
                          script=script)
    assert runner_agent(bb, fake_api) == "Snow in Paris, so no Rome."
    bb.finish(result="Snow in Paris, so no Rome.")
    forked = load(fork)
    assert verify(forked).ok and fake_api.requests == []
    branch = forked.steps[4].payload["messages"]  # the fork's request: the whole conversation, the new value in it
    assert len(branch) == 3 and branch[2]["content"][0]["result"] == "snowy"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_live_fork_sends_no_thread_id_the_server_never_issued(fake_api: FakeAPI, tmp_path: Path,
                                                                kind: str) -> None:
    out, fork = tmp_path / "run.json", tmp_path / "fork.json"
    record(runner_agent, fake_api, out)
    fake_api.reset()
    fake_api.brain = server = three_turns()  # a server that holds none of the recorded run's threads
    bb = blackbox.session("fork", cassette=out, out=fork, fork_at=3, fork_set="snowy", continue_with="live")
    answer = runner_agent(bb, fake_api) if kind == "sync" else asyncio.run(async_runner_agent(bb, fake_api,
                                                                                             stream=True))
    bb.finish(result=answer)
    assert answer == "Weather: snowy; sunny in Rome"
    assert server.not_found == []  # no 404 thread_not_found: the branch's first turn restated the thread
    first = fake_api.requests[0].body
    assert first["thread"] == {"type": "create"} and len(first["messages"]) == 3 and first["system"] == "Be brief."
    assert first["messages"][2]["content"][0]["content"] == "snowy"
    assert server.created == 1 and server.continued == 1  # the branch's next turn continued the server's thread
    forked = load(fork)
    assert verify(forked).ok and [len(s.payload["messages"]) for s in forked.steps if s.type == "model_input"] == \
        [1, 3, 5]


def test_what_if_of_a_threaded_run_sends_the_whole_conversation(fake_api: FakeAPI, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    record(runner_agent, fake_api, out)
    sent: list[dict[str, Any]] = []

    class Seen(ScriptedModel):
        def reply(self, model_input: dict[str, Any], ids: Any) -> dict[str, Any]:
            sent.append(model_input)
            return super().reply(model_input, ids)

    fork, why = what_if(load(out), 3, "snowy", Seen([{"type": "final_answer", "text": "Snow."}]), trace_id="w")
    assert why == "final answer" and verify(fork).ok
    assert [m["role"] for m in sent[0]["messages"]] == ["user", "assistant", "user"]


# -- refused before anything is sent ----------------------------------------------------------------------------


def refused(fake: FakeAPI, call: Any) -> str:
    before = len(fake.requests)
    with pytest.raises(anthropic.BadRequestError) as caught:
        call()
    assert len(fake.requests) == before  # nothing reached the server
    message = caught.value.message
    assert message.startswith("[blackbox]") or "[blackbox]" in message
    return str(message)


def test_a_thread_continued_from_a_reply_this_run_was_not_given_is_refused(fake_api: FakeAPI,
                                                                            tmp_path: Path) -> None:
    fake_api.brain = three_turns()
    outside = fake_api.anthropic()  # another process's client made the thread
    first = outside.beta.messages.create(model=MODEL, max_tokens=100, messages=PROMPT, thread={"type": "create"})
    bb = blackbox.session("record", out=tmp_path / "run.json")
    message = refused(fake_api, lambda: client(bb, fake_api).beta.messages.create(
        model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "more"}],
        thread={"type": "continue", "previous_message_id": first.id}))
    assert "a message thread continued from a reply this run was not given" in message
    assert "pass thread=False to tool_runner()" in message


def runner_after_its_first_turn(fake: FakeAPI, tmp_path: Path) -> tuple[blackbox.Session, Any]:
    """A recording runner that has had its first reply (a tool call), for a change made between two turns."""
    fake.brain = three_turns()
    bb = blackbox.session("record", out=tmp_path / "run.json")
    tool = anthropic.beta_tool(bb.tool("get_weather", get_weather))
    runner = client(bb, fake).beta.messages.tool_runner(model=MODEL, max_tokens=200, tools=[tool], messages=PROMPT)
    next(iter(runner))
    return bb, runner


def test_server_side_compaction_is_refused_before_it_is_sent(fake_api: FakeAPI, tmp_path: Path) -> None:
    _, runner = runner_after_its_first_turn(fake_api, tmp_path)
    runner.compact_before_next_turn()
    message = refused(fake_api, lambda: list(runner))
    assert "server-side compaction" in message and "compact_before_next_turn()" in message
    assert not any("compaction" in r.body for r in fake_api.requests)


def test_tools_changed_inside_the_conversation_are_refused(fake_api: FakeAPI, tmp_path: Path) -> None:
    bb, runner = runner_after_its_first_turn(fake_api, tmp_path)
    runner.add_tools(anthropic.beta_tool(bb.tool("get_time", lambda city: "noon")))
    message = refused(fake_api, lambda: list(runner))
    assert "'tool_addition' blocks" in message and "add_tools()" in message


def test_the_memory_tool_is_refused_with_advice(fake_api: FakeAPI, tmp_path: Path) -> None:
    from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

    bb = blackbox.session("record", out=tmp_path / "run.json")
    memory = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path / "memory"))
    runner = client(bb, fake_api).beta.messages.tool_runner(model=MODEL, max_tokens=200, tools=[memory],
                                                            messages=PROMPT)
    message = refused(fake_api, runner.until_done)
    assert "the server tool 'memory_20250818'" in message and "custom tool" in message


def test_a_managed_agent_session_is_refused_as_no_model_call(fake_api: FakeAPI, tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "run.json")
    message = refused(fake_api, lambda: client(bb, fake_api).beta.sessions.create(agent="agent_1",
                                                                                  environment_id="env_1"))
    assert "a managed-agent session (client.beta.sessions)" in message and "message_history" in message
