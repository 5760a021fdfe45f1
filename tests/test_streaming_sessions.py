"""Streamed calls with the real SDKs against the fake API: record by teeing, replay as a stream or not, fork.

Every provider (Anthropic Messages, OpenAI chat, OpenAI Responses), sync and async: a streamed and an
unstreamed recording of the same run hold identical steps, each replays both ways with no request sent, and a
fork continues over streamed calls. Then the faults: a client that stops reading, an `error` event, a dropped
connection, unknown events, and the recorded pace.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from blackbox.live.engines import answer
from blackbox.live.recorder import journal_path
from blackbox.providers import ANTHROPIC, OPENAI_CHAT, RESPONSES, CallIds
from tests.agents import weather
from tests.fakeapi import FakeAPI, anthropic_message, chat_completion, stream_reply, weather_brain
from tests.waiting import HANG_GUARD

CITIES = ("Paris", "Rome")
HI: Any = [{"role": "user", "content": "hi"}]


def steps_of(path: Path) -> list[tuple[str, Any]]:
    return [(step.type, step.payload) for step in load(path).steps]


def record(provider: str, fake: FakeAPI, out: Path, *, stream: bool, asynchronous: bool) -> str:
    fake.reset()
    fake.brain = weather_brain(provider, cities=CITIES)
    bb = blackbox.session("record", out=out)
    result = (asyncio.run(weather.arun(provider, bb, fake, stream=stream)) if asynchronous
              else weather.run(provider, bb, fake, stream=stream))
    bb.finish()
    assert [bool(request.body.get("stream")) for request in fake.requests] == [stream, stream]
    return result


def replay(provider: str, fake: FakeAPI, cassette: Path, *, stream: bool, asynchronous: bool) -> str:
    fake.reset()
    bb = blackbox.session("replay", cassette=cassette)
    result = (asyncio.run(weather.arun(provider, bb, fake, stream=stream)) if asynchronous
              else weather.run(provider, bb, fake, stream=stream))
    summary = bb.finish()
    assert summary.status == "success" and summary.steps == len(load(cassette).steps)
    assert fake.requests == []  # replay never touches the network
    return result


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("provider", weather.PROVIDERS)
def test_streamed_and_unstreamed_recordings_hold_the_same_steps_and_replay_both_ways(
        fake_api: FakeAPI, tmp_path: Path, provider: str, asynchronous: bool) -> None:
    streamed, plain = tmp_path / "streamed.json", tmp_path / "plain.json"
    answer_text = record(provider, fake_api, streamed, stream=True, asynchronous=asynchronous)
    assert answer_text == "Weather: sunny in Paris; sunny in Rome"
    assert record(provider, fake_api, plain, stream=False, asynchronous=asynchronous) == answer_text
    assert steps_of(streamed) == steps_of(plain)
    kinds = [kind for kind, _ in steps_of(streamed)]
    assert kinds == ["model_input", "model_output", "tool_call", "tool_result", "tool_call", "tool_result",
                     "model_input", "model_output", "metadata"]
    for path in (streamed, plain):
        assert verify(load(path)).ok and not journal_path(path).exists()
        text = path.read_text()
        for leak in ("test-key", "toolu_", "call_", "fc_", "msg_0", "usage", "stop_reason", "finish_reason"):
            assert leak not in text, leak
        for stream in (True, False):
            assert replay(provider, fake_api, path, stream=stream, asynchronous=asynchronous) == answer_text


@pytest.mark.parametrize("provider", weather.PROVIDERS)
def test_fork_over_streamed_calls_scripted_and_live(fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    parent = tmp_path / "parent.json"
    record(provider, fake_api, parent, stream=True, asynchronous=False)
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))

    fake_api.reset()
    bb = blackbox.session("fork", cassette=parent, out=tmp_path / "scripted.json", fork_at=3, fork_set="snowy",
                          continue_with="script", script=script)
    assert weather.run(provider, bb, fake_api, stream=True) == "Snow in Paris."
    bb.finish()
    assert fake_api.requests == []
    child = load(tmp_path / "scripted.json")
    assert verify(child).ok and child.parentId == load(parent).id
    assert child.steps[3].payload["result"] == "snowy"
    assert child.steps[-2].payload == {"type": "final_answer", "text": "Snow in Paris."}

    fake_api.reset()
    fake_api.brain = weather_brain(provider, cities=CITIES)
    bb = blackbox.session("fork", cassette=parent, out=tmp_path / "live.json", fork_at=3, fork_set="snowy",
                          continue_with="live")
    assert asyncio.run(weather.arun(provider, bb, fake_api, stream=True)) == "Weather: snowy; sunny in Rome"
    bb.finish()
    assert len(fake_api.requests) == 1 and fake_api.requests[0].body["stream"] is True
    live = load(tmp_path / "live.json")
    assert verify(live).ok
    assert live.steps[-2].payload == {"type": "final_answer", "text": "Weather: snowy; sunny in Rome"}
    assert steps_of(tmp_path / "live.json")[:4] == [*steps_of(parent)[:3], ("tool_result", live.steps[3].payload)]


def test_chunks_reach_the_agent_as_they_arrive_and_the_call_is_recorded_at_the_streams_end(
        fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic

    fake_api.queue(anthropic_message(text="The weather in Paris is sunny today."))
    bb = blackbox.session("record", out=tmp_path / "run.json")
    client = anthropic.Anthropic(base_url=fake_api.url, api_key="k", http_client=bb.http_client(), max_retries=0)
    seen: list[tuple[str, int]] = []
    stream = client.messages.create(model="m", max_tokens=50, messages=HI, stream=True)
    for event in stream:
        seen.append((event.type, bb._engine.steps()))
    # nothing is recorded while the text streams (the transport does not read ahead), nor at the terminal
    # event (the SDK reads on after it, and a late event would change its answer): the call is recorded when
    # the body ends (or when the agent goes on: test_stream_fidelity), without waiting for close()
    assert seen[0] == ("message_start", 0)
    assert [steps for kind, steps in seen if kind == "content_block_delta"] == [0] * 6
    assert seen[-1] == ("message_stop", 0)
    assert bb._engine.steps() == 2
    assert bb.finish().steps == 3


def test_a_client_that_stops_reading_leaves_no_half_step(fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic
    import openai

    out = tmp_path / "run.json"
    fake_api.queue(anthropic_message(text="a long answer, streamed in many pieces"),
                   anthropic_message(text="recorded"),
                   chat_completion(content="another long answer in several chunks"),
                   anthropic_message(text="never read"))
    bb = blackbox.session("record", out=out)
    sdk = anthropic.Anthropic(base_url=fake_api.url, api_key="k", http_client=bb.http_client(), max_retries=0)
    chat = openai.OpenAI(base_url=fake_api.openai_url, api_key="k", http_client=bb.http_client(), max_retries=0)
    with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as s:  # closed early
        next(iter(s.text_stream))
    reply: Any = sdk.messages.create(model="m", max_tokens=50, messages=HI)
    assert reply.content[0].text == "recorded"
    for _ in chat.chat.completions.create(model="m", messages=HI, stream=True):  # broken out of, never closed
        break
    gc.collect()
    held = sdk.messages.create(model="m", max_tokens=50, messages=HI, stream=True)  # held open at finish()
    next(iter(held))
    assert bb.finish().steps == 3
    assert [kind for kind, _ in steps_of(out)] == ["model_input", "model_output", "metadata"]
    assert steps_of(out)[1][1] == {"type": "final_answer", "text": "recorded"}
    held.close()
    sdk.close()  # and their pools' sockets with them
    chat.close()


@pytest.mark.parametrize("provider", weather.PROVIDERS)
def test_an_error_event_reaches_the_agent_and_is_recorded_like_a_failed_call(
        fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    import anthropic
    import openai

    out = tmp_path / "run.json"
    fake_api.brain = weather_brain(provider, cities=CITIES)
    fake_api.stream_knobs = {"error_after": 3}
    bb = blackbox.session("record", out=out)
    # the SDK's own error: anthropic and chat raise APIError; the Responses helper a RuntimeError (no
    # response.completed event)
    expected = RuntimeError if provider == "responses" else (anthropic.APIError, openai.APIError)
    with pytest.raises(expected) as caught:
        weather.run(provider, bb, fake_api, stream=True)
    assert not blackbox.is_blackbox_error(caught.value)
    assert bb.finish(error=caught.value).status == "error"
    assert [kind for kind, _ in steps_of(out)] == ["metadata"]
    assert steps_of(out)[0][1]["reason"] == "agent_error"


def test_a_dropped_stream_is_not_recorded_and_the_retry_is(fake_api: FakeAPI, tmp_path: Path) -> None:
    import openai

    out = tmp_path / "run.json"
    body = chat_completion(content="Sunny in Paris today.")
    fake_api.queue(stream_reply(body, cut_after=2, drop=True), body)
    bb = blackbox.session("record", out=out)
    chat = openai.OpenAI(base_url=fake_api.openai_url, api_key="k", http_client=bb.http_client(), max_retries=0)
    with pytest.raises(openai.APIConnectionError):
        list(chat.chat.completions.create(model="m", messages=HI, stream=True))
    with chat.chat.completions.stream(model="m", messages=HI) as s:
        assert s.get_final_completion().choices[0].message.content == "Sunny in Paris today."
    bb.finish()
    assert steps_of(out)[1][1] == {"type": "final_answer", "text": "Sunny in Paris today."}
    assert len(steps_of(out)) == 3


@pytest.mark.parametrize("provider", weather.PROVIDERS)
def test_pings_and_unknown_events_pass_through_and_change_nothing(
        fake_api: FakeAPI, tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weather, "STRICT", False)  # strict validation refuses event types the SDK does not know
    plain = tmp_path / "plain.json"
    record(provider, fake_api, plain, stream=False, asynchronous=False)
    fake_api.stream_knobs = {"unknown_event": True}
    streamed = tmp_path / "streamed.json"
    record(provider, fake_api, streamed, stream=True, asynchronous=False)
    assert steps_of(streamed) == steps_of(plain)


def test_a_gzip_encoded_stream_is_decoded_for_the_recording(fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic

    events = stream_reply(anthropic_message(text="Sunny, compressed."))
    events.encoding = "gzip"  # sent content-encoded (in one piece): the tee decodes before assembling
    fake_api.queue(events)
    bb = blackbox.session("record", out=tmp_path / "run.json")
    sdk = anthropic.Anthropic(base_url=fake_api.url, api_key="k", http_client=bb.http_client(), max_retries=0)
    with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as s:
        assert s.get_final_text() == "Sunny, compressed."
    bb.finish()
    assert steps_of(tmp_path / "run.json")[1][1] == {"type": "final_answer", "text": "Sunny, compressed."}


def test_replay_keeps_the_recorded_pace_when_asked(fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic

    out = tmp_path / "run.json"
    fake_api.queue(stream_reply(anthropic_message(text="Sunny in Paris, and warm."), delay=0.04))
    bb = blackbox.session("record", out=out)
    sdk = anthropic.Anthropic(base_url=fake_api.url, api_key="k", http_client=bb.http_client(), max_retries=0)
    with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as s:
        s.until_done()
    bb.finish()
    steps = load(out).steps
    recorded = (steps[1].timestamp - steps[0].timestamp) / 1000
    assert recorded >= 0.3

    bb = blackbox.session("replay", cassette=out, pace="recorded")
    sdk = anthropic.Anthropic(base_url=fake_api.url, api_key="k", http_client=bb.http_client(), max_retries=0)
    started = time.perf_counter()
    arrivals = []
    with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as s:
        for _ in s.text_stream:
            arrivals.append(time.perf_counter() - started)
    took = time.perf_counter() - started
    bb.finish()
    assert "".join(s.get_final_text()) == "Sunny in Paris, and warm."
    assert took >= 0.8 * recorded  # spread over the recorded duration (a lower bound: load only slows it)
    assert took - arrivals[0] >= 0.4 * recorded  # the first text came long before the stream's end


def test_a_replayed_stream_is_one_reply_per_provider_and_paced_chunks_split_the_time() -> None:
    output: Any = {"type": "tool_calls", "text": "Checking.",
                   "calls": [{"toolCallId": "call-1", "toolName": "get_weather", "toolInput": {"city": "Paris"}}]}
    for provider in (ANTHROPIC, OPENAI_CHAT, RESPONSES):
        plain = answer(provider, output, 1, 5000, {"model": "m"}, CallIds())
        assert plain.chunks is None and plain.content_type == "application/json"
        fast = answer(provider, output, 1, 5000, {"model": "m", "stream": True}, CallIds())
        assert fast.content_type == "text/event-stream" and fast.pause == 0
        assert fast.chunks is not None and b"".join(fast.chunks) == fast.body
        paced = answer(provider, output, 1, 5000, {"model": "m", "stream": True}, CallIds(), spread_ms=900)
        assert paced.chunks is not None and len(paced.chunks) >= len(fast.chunks)
        assert paced.pause == pytest.approx(0.9 / (len(paced.chunks) - 1))


def raw_events(provider: str, sdk: Any) -> list[str]:
    if provider == "anthropic":
        events = sdk.messages.create(model="m", max_tokens=50, messages=HI, stream=True)
        return [event.type for event in events]
    if provider == "openai":
        chunks = list(sdk.chat.completions.create(model="m", messages=HI, stream=True))
        return ["tool_calls" if c.choices and c.choices[0].delta.tool_calls else "chunk" for c in chunks]
    return [event.type for event in sdk.responses.create(model="m", input="hi", stream=True)]


@pytest.mark.parametrize("provider", weather.PROVIDERS)
def test_raw_create_stream_true_records_and_replays_the_events_the_sdk_reads(
        fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    out = tmp_path / "run.json"
    fake_api.brain = weather_brain(provider, cities=CITIES)
    bb = blackbox.session("record", out=out)
    recorded = raw_events(provider, weather.client(provider, bb, fake_api))
    bb.finish()
    assert steps_of(out)[1][1]["type"] == "tool_calls" and len(steps_of(out)[1][1]["calls"]) == 2
    bb = blackbox.session("replay", cassette=out)
    fake_api.reset()
    replayed = raw_events(provider, weather.client(provider, bb, fake_api))
    assert fake_api.requests == []
    expected = {"anthropic": {"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                              "message_delta", "message_stop"},
                "openai": {"chunk", "tool_calls"},
                "responses": {"response.created", "response.output_item.added", "response.output_text.delta",
                              "response.function_call_arguments.delta", "response.output_item.done",
                              "response.completed"}}[provider]
    assert expected <= set(replayed) and expected <= set(recorded)
    assert bb.finish().steps == len(load(out).steps)


def test_async_clients_that_stop_reading_or_meet_an_error_leave_no_half_step(
        fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic
    import openai

    out = tmp_path / "run.json"
    fake_api.queue(anthropic_message(text="a long answer, streamed in many pieces"),
                   stream_reply(chat_completion(content="an answer cut by an error"), error_after=2),
                   chat_completion(content="another long answer in several chunks"),
                   anthropic_message(text="recorded"))

    async def agent() -> str:
        sdk = anthropic.AsyncAnthropic(base_url=fake_api.url, api_key="k", http_client=bb.async_http_client(),
                                       max_retries=0)
        chat = openai.AsyncOpenAI(base_url=fake_api.openai_url, api_key="k", http_client=bb.async_http_client(),
                                  max_retries=0)
        async with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as s:  # closed early
            async for _ in s.text_stream:
                break
        with pytest.raises(openai.APIError):
            async for _ in await chat.chat.completions.create(model="m", messages=HI, stream=True):
                pass
        stream = await chat.chat.completions.create(model="m", messages=HI, stream=True)
        async for _ in stream:
            break
        await stream.close()
        async with sdk.messages.stream(model="m", max_tokens=50, messages=HI) as s:
            text = await s.get_final_text()
        await sdk.close()
        await chat.close()
        return text

    bb = blackbox.session("record", out=out)
    assert asyncio.run(agent()) == "recorded"
    assert bb.finish().steps == 3
    assert steps_of(out)[1][1] == {"type": "final_answer", "text": "recorded"}


def test_pace_is_a_setting_from_the_argument_the_environment_and_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from blackbox.cli import app
    from blackbox.errors import UsageError
    from blackbox.live.settings import Settings, resolve_settings

    settings = Settings(mode="replay", cassette="run.json", pace="recorded")
    assert settings.to_env()["BLACKBOX_PACE"] == "recorded"
    assert Settings.from_env(settings.to_env()).pace == "recorded"
    assert "BLACKBOX_PACE" not in Settings(mode="replay", cassette="run.json").to_env()  # fast: the default
    assert resolve_settings("replay", cassette="x.json", pace="fast", env={"BLACKBOX_PACE": "recorded"}).pace == "fast"
    with pytest.raises(UsageError, match=r"BLACKBOX_PACE='slow' is not valid; use one of fast, recorded"):
        Settings.from_env({"BLACKBOX_MODE": "replay", "BLACKBOX_CASSETTE": "x.json", "BLACKBOX_PACE": "slow"})
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "run.json"), "--pace", "slow", "--", "python"])
    assert result.exit_code == 2 and "--pace='slow' is not valid; use one of fast, recorded" in result.stderr


def test_the_launcher_records_a_streaming_agent_and_replays_it_at_the_recorded_pace(
        fake_api: FakeAPI, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "run.json"
    fake_api.brain = weather_brain("anthropic", cities=CITIES)
    fake_api.stream_knobs = {"delay": 0.02}
    agent = [sys.executable, "-m", "tests.agents.stream_agent", "anthropic"]

    def cli(*args: str | Path, url: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "FAKE_URL": url, "PYTHONPATH": str(root), "NO_COLOR": "1"}
        return subprocess.run([sys.executable, "-m", "blackbox", *map(str, args), "--", *agent], cwd=root,
                              env=env, capture_output=True, text=True, timeout=HANG_GUARD, check=False)

    recorded = cli("record", "--out", out, url=fake_api.url)
    assert recorded.returncode == 0, recorded.stderr
    steps = load(out).steps
    duration = sum(steps[i + 1].timestamp - steps[i].timestamp for i in (0, 6)) / 1000
    assert duration >= 0.3
    fake_api.reset()
    started = time.perf_counter()
    replayed = cli("replay", out, "--pace", "recorded", url="http://127.0.0.1:9")
    took = time.perf_counter() - started
    assert replayed.returncode == 0, replayed.stderr
    assert "PASS" in replayed.stdout and "sunny in Rome" in replayed.stdout
    assert took >= 0.8 * duration and fake_api.requests == []
