"""A chat answer that calls tools with the finish reason `stop`: what OpenAI sends when `tool_choice` names a
function (the way structured-output libraries force an answer), and what some compatible servers always send.

It used to be refused. It is recorded, and replay hands the agent back `stop`, not `tool_calls`: an agent that
loops while `finish_reason == "tool_calls"` must take the same turn on replay as it took live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from blackbox.providers import OPENAI_CHAT, CallIds
from tests.fakeapi import FakeAPI, chat_completion

TOOLS: Any = [{"type": "function", "function": {"name": "extract", "parameters": {"type": "object"}}}]
FORCED: Any = {"type": "function", "function": {"name": "extract"}}


def _ask(bb: Any, fake: FakeAPI, *, stream: bool) -> tuple[str | None, Any]:
    client = fake.openai(http_client=bb.http_client())
    messages: Any = [{"role": "user", "content": "Extract the city: I live in Paris."}]
    if not stream:
        reply = client.chat.completions.create(model="gpt-5.1", messages=messages, tools=TOOLS, tool_choice=FORCED)
        choice = reply.choices[0]
        return choice.finish_reason, [(c.function.name, c.function.arguments) for c in choice.message.tool_calls or []]
    finish, calls = None, {}
    for chunk in client.chat.completions.create(model="gpt-5.1", messages=messages, tools=TOOLS,
                                                tool_choice=FORCED, stream=True):
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                name, args = calls.get(call.index, ("", ""))
                calls[call.index] = (name + (call.function.name or ""), args + (call.function.arguments or ""))
    return finish, [calls[index] for index in sorted(calls)]


def test_normalized_with_the_end_kept_and_synthesized_back() -> None:
    body = chat_completion(tool_calls=[("extract", {"city": "Paris"})], finish_reason="stop")
    output = OPENAI_CHAT.normalize_response(body, CallIds())
    assert output == {"type": "tool_calls", "calls": [{"toolCallId": "call-0", "toolName": "extract",
                                                         "toolInput": {"city": "Paris"}}], "stop": "end"}
    replayed = OPENAI_CHAT.synthesize_response(output, step_index=1, timestamp_ms=0, model="gpt-5.1")
    assert replayed["choices"][0]["finish_reason"] == "stop"
    plain = OPENAI_CHAT.synthesize_response({key: value for key, value in output.items() if key != "stop"},
                                            step_index=1, timestamp_ms=0, model=None)
    assert plain["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("stream", [False, True], ids=["unstreamed", "streamed"])
def test_recorded_and_replayed_with_the_finish_reason_the_agent_saw(
    fake_api: FakeAPI, tmp_path: Path, stream: bool
) -> None:
    out = tmp_path / "forced.json"
    fake_api.queue(chat_completion(tool_calls=[("extract", {"city": "Paris"})], finish_reason="stop"))
    bb = blackbox.session("record", out=out)
    live = _ask(bb, fake_api, stream=stream)
    recorded = bb.finish()
    assert recorded.steps == 2  # the run ends on the forced call: "incomplete", and nothing is refused
    assert live == ("stop", [("extract", '{"city":"Paris"}')])
    assert verify(out).ok
    assert [step.type for step in load(out).steps] == ["model_input", "model_output"]
    assert load(out).steps[1].payload["stop"] == "end"

    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    finish, calls = _ask(bb, fake_api, stream=stream)
    assert bb.finish().status == recorded.status
    assert fake_api.requests == []
    assert finish == "stop"  # not "tool_calls": the agent takes the turn it took live
    assert [name for name, _ in calls] == ["extract"]
