"""OpenAI-compatible servers (Ollama, vLLM, LM Studio, OpenRouter, Groq, DeepSeek, LiteLLM's proxy) through the
real `openai` SDK with `base_url`, against the fake API speaking each server's dialect (`tests/fakeapi_compat`):
record → verify → replay offline with no key → a changed prompt diverges at step 0 → a scripted fork; streamed
and unstreamed recordings hold the same steps; the server's own request fields kept or dropped by the rule of
`providers/openai_compat`; its reasoning text handed back by replay; its faults never a half step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

import blackbox
from blackbox.errors import ReplayDivergenceError
from blackbox.format.cassette import load
from blackbox.format.secrets import PLACEHOLDER_KEYS
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, Reply, json_reply
from tests.fakeapi_compat import DIALECTS, Dialect, chunk_stream

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "sk-compat-0123456789abcdefghijklmnopqrstuv"
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
NAMES = sorted(DIALECTS)


def client(bb: blackbox.Session, fake: FakeAPI, dialect: Dialect, **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.url + dialect.base_path, http_client=bb.http_client(), max_retries=0,
                         **kwargs)


def ask(chat: openai.OpenAI, dialect: Dialect, messages: list[dict[str, Any]], *,
        stream: bool) -> tuple[str, list[dict[str, Any]], str]:
    """One model call: the answer text, the tool calls and the reasoning text the agent received."""
    kwargs: dict[str, Any] = {"model": dialect.model, "messages": messages, "tools": TOOLS, "temperature": 0.2,
                              "extra_body": dialect.request_extra}
    field = dialect.reasoning_field or "reasoning_content"
    if not stream:
        message = chat.chat.completions.create(**kwargs).choices[0].message
        calls = [{"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
                 for call in message.tool_calls or []]
        return message.content or "", calls, (message.model_extra or {}).get(field) or ""
    text, reasoning, by_index = "", "", {}  # type: ignore[var-annotated]
    for chunk in chat.chat.completions.create(stream=True, **kwargs):
        for choice in chunk.choices:
            delta = choice.delta
            text += delta.content or ""
            reasoning += (delta.model_extra or {}).get(field) or ""
            for call in delta.tool_calls or []:
                entry = by_index.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] = call.id or entry["id"]
                entry["name"] += (call.function and call.function.name) or ""
                entry["arguments"] += (call.function and call.function.arguments) or ""
    return text, [by_index[index] for index in sorted(by_index)], reasoning


def agent(bb: blackbox.Session, fake: FakeAPI, dialect: Dialect, *, stream: bool, prompt: str = "Weather in Paris?",
          user_extra: dict[str, Any] | None = None, **kwargs: Any) -> tuple[str, list[str]]:
    """A tool loop; returns the final answer and the reasoning the agent saw at each call.  It sends the
    reasoning back in the history, as DeepSeek's docs tell a tool loop to (and `user_extra`'s fields on its
    user message)."""
    weather = bb.tool("get_weather", lambda city: f"sunny in {city}")
    chat = client(bb, fake, dialect, **kwargs)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."},
                                      {"role": "user", "content": prompt, **(user_extra or {})}]
    seen: list[str] = []
    while True:
        text, calls, reasoning = ask(chat, dialect, messages, stream=stream)
        seen.append(reasoning)
        if not calls:
            return text, seen
        turn: dict[str, Any] = {"role": "assistant", "content": text or None, "tool_calls": [
            {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}
            for call in calls]}
        if reasoning:
            turn[dialect.reasoning_field or "reasoning_content"] = reasoning
        messages.append(turn)
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": weather(**json.loads(call["arguments"]))})


def record(fake: FakeAPI, dialect: Dialect, out: Path, *, stream: bool,
           user_extra: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    fake.reset()
    fake.brain = dialect.brain()
    bb = blackbox.session("record", out=out)
    answer, seen = agent(bb, fake, dialect, stream=stream, user_extra=user_extra, api_key=KEY)
    bb.finish(result=answer)
    assert len(fake.requests) == 2 and all(r.body.get("stream", False) is stream for r in fake.requests)
    return answer, seen


def steps_of(path: Path) -> list[tuple[str, Any]]:
    return [(step.type, step.payload) for step in load(path).steps]


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay's environment: no key but the launcher's placeholder."""
    monkeypatch.setenv("OPENAI_API_KEY", PLACEHOLDER_KEYS["OPENAI_API_KEY"])


@pytest.mark.parametrize("name", NAMES)
def test_record_verify_replay_diverge_fork(fake_api: FakeAPI, tmp_path: Path, no_key: None, name: str) -> None:
    dialect = DIALECTS[name]
    streamed, plain = tmp_path / "streamed.json", tmp_path / "plain.json"
    answer, seen = record(fake_api, dialect, streamed, stream=True)
    assert answer == "Weather: sunny in Paris"
    assert record(fake_api, dialect, plain, stream=False) == (answer, seen)
    assert steps_of(streamed) == steps_of(plain)  # streamed and unstreamed: the same steps

    steps = steps_of(plain)
    assert [kind for kind, _ in steps] == ["model_input", "model_output", "tool_call", "tool_result", "model_input",
                                           "model_output", "metadata"]
    first_in, first_out, last_in = steps[0][1], steps[1][1], steps[4][1]
    # the rule: the server's behaviour controls kept under neutral names, its transport/accounting fields dropped
    assert first_in["params"] == {"temperature": 0.2, **dialect.kept}
    assert first_in["model"] == dialect.model and first_in["systemPrompt"] == "Be brief."
    calls = [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}]
    assert {key: first_out[key] for key in ("type", "calls")} == {"type": "tool_calls", "calls": calls}
    assert "text" not in first_out  # Ollama's and DeepSeek's "" beside the calls is no text
    # reasoning: kept aside as thoughts (never the answer), dropped from the history the agent sends back
    if dialect.reasoning_field is None:
        assert "thoughts" not in first_out and seen == ["", ""]
    else:
        assert first_out["thoughts"] == [{"text": seen[0], "field": dialect.reasoning_field}] and seen[0]
        assert steps[5][1] == {"type": "final_answer", "text": answer,
                               "thoughts": [{"text": seen[1], "field": dialect.reasoning_field}]}
    assert last_in["messages"][1] == {"role": "assistant", "content": [{"type": "tool_use", **calls[0]}]}
    for path in (streamed, plain):
        assert verify(load(path)).ok
        text = path.read_text()
        for leak in (KEY, "x_groq", "cost", "req_01k0", "reasoning_details", "thinking_blocks", "keep_alive",
                     "fp_", "usage", "native_finish_reason", "RXFzaWc="):
            assert leak not in text, leak

    # replay: no request, no key; streamed and unstreamed recordings answer both kinds of request
    for path in (streamed, plain):
        for stream in (True, False):
            fake_api.reset()
            bb = blackbox.session("replay", cassette=path)
            assert agent(bb, fake_api, dialect, stream=stream) == (answer, seen)
            assert bb.finish().status == "success"
            assert fake_api.requests == []

    # a changed prompt diverges at step 0, as the SDK's BadRequestError (never retried)
    bb = blackbox.session("replay", cassette=streamed)
    with pytest.raises(openai.BadRequestError, match="replay diverged at step 0"):
        agent(bb, fake_api, dialect, stream=True, prompt="Weather in Oslo?")
    with pytest.raises(ReplayDivergenceError) as diverged:
        bb.finish()
    assert (diverged.value.step, diverged.value.path) == (0, "messages[0].content")

    # a scripted fork at the tool result
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))
    out = tmp_path / "fork.json"
    bb = blackbox.session("fork", cassette=plain, out=out, fork_at=3, fork_set="snowy", continue_with="script",
                          script=script)
    assert agent(bb, fake_api, dialect, stream=False)[0] == "Snow in Paris."
    bb.finish(result="Snow in Paris.")
    forked = load(out)
    assert verify(forked).ok and fake_api.requests == []
    assert [step.hash for step in forked.steps[:3]] == [step.hash for step in load(plain).steps[:3]]
    assert forked.steps[3].payload["result"] == "snowy"
    assert forked.steps[4].payload["messages"][2]["content"][0]["result"] == "snowy"

    # a live fork: after the tool result the agent talks to the server again (its key back in the environment)
    fake_api.reset()
    fake_api.brain = dialect.brain()
    live = tmp_path / "live.json"
    bb = blackbox.session("fork", cassette=streamed, out=live, fork_at=3, fork_set="snowy", continue_with="live")
    assert agent(bb, fake_api, dialect, stream=True, api_key=KEY)[0] == "Weather: snowy"
    bb.finish(result="Weather: snowy")
    (request,) = fake_api.requests
    assert request.path == f"{dialect.base_path}/chat/completions"
    assert request.body["messages"][-1]["content"] == "snowy"
    assert verify(load(live)).ok and load(live).steps[5].payload["text"] == "Weather: snowy"


def test_a_changed_server_control_diverges(fake_api: FakeAPI, tmp_path: Path, no_key: None) -> None:
    """A kept control (vLLM's min_p) is compared; a dropped one (its request_id) is not."""
    dialect = DIALECTS["vllm"]
    path = tmp_path / "vllm.json"
    record(fake_api, dialect, path, stream=False)
    moved = Dialect(**{**dialect.__dict__, "request_extra": {**dialect.request_extra, "request_id": "run-18"}})
    bb = blackbox.session("replay", cassette=path)
    assert agent(bb, fake_api, moved, stream=False)[0] == "Weather: sunny in Paris"
    bb.finish()
    changed = Dialect(**{**dialect.__dict__, "request_extra": {**dialect.request_extra, "min_p": 0.1}})
    bb = blackbox.session("replay", cassette=path)
    with pytest.raises(openai.BadRequestError, match="replay diverged at step 0"):
        agent(bb, fake_api, changed, stream=False)
    with pytest.raises(ReplayDivergenceError) as diverged:
        bb.finish()
    assert diverged.value.path == "params.minP"


# ---------------------------------------------------------------------------------------------------------
# the servers' faults: the agent gets what it would without Blackbox; the cassette has no half step

VLLM_ERROR = {"object": "error", "message": "This model's maximum context length is 4096 tokens.",
              "type": "BadRequestError", "param": None, "code": 400}
OLLAMA_ERROR = {"error": {"message": "model \"qwen3:8b\" not found, try pulling it first", "type": "api_error",
                          "param": None, "code": None}}
OPENROUTER_STREAM_ERROR = {"code": 502, "message": "Provider returned error", "metadata": {"provider_name": "X"}}


def faulty(name: str, kind: str) -> Reply:
    dialect = DIALECTS[name]
    body = dialect.completion(content="Partly cloudy.", reasoning="Thinking…")
    if kind == "error body":
        return json_reply(VLLM_ERROR if name == "vllm" else OLLAMA_ERROR, 400 if name == "vllm" else 404)
    if kind == "error chunk":
        return chunk_stream(dialect, body, error=OPENROUTER_STREAM_ERROR)
    if kind == "not json":
        return chunk_stream(dialect, body, not_json=True)
    reply = chunk_stream(dialect, body)  # cut mid-chunk: the body ends inside the third chunk
    assert reply.chunks is not None
    reply.chunks = [*reply.chunks[:2], reply.chunks[2][:9]]
    return reply


@pytest.mark.parametrize(("name", "kind", "stream", "raised"), [
    ("vllm", "error body", False, openai.BadRequestError),
    ("ollama", "error body", True, openai.NotFoundError),
    ("openrouter", "error chunk", True, openai.APIError),
    ("deepseek", "not json", True, Exception),
    ("groq", "cut", True, None),  # the SDK reads a body cut mid-chunk as a shorter stream, without an error
])
def test_server_faults_reach_the_agent_and_record_no_half_step(
        fake_api: FakeAPI, tmp_path: Path, capfd: pytest.CaptureFixture[str], name: str, kind: str, stream: bool,
        raised: type[BaseException] | None) -> None:
    dialect = DIALECTS[name]
    fake_api.queue(faulty(name, kind))
    out = tmp_path / "fault.json"
    bb = blackbox.session("record", out=out)
    chat = client(bb, fake_api, dialect, api_key=KEY)
    if raised is None:
        text, _, _ = ask(chat, dialect, [{"role": "user", "content": "Hi"}], stream=stream)
        assert text == ""  # what the SDK made of the cut stream, Blackbox or not
        bb.finish(result=text)
    else:
        with pytest.raises(raised) as caught:
            ask(chat, dialect, [{"role": "user", "content": "Hi"}], stream=stream)
        assert "[blackbox]" not in str(caught.value)  # the server's own error, not one of Blackbox's
        bb.finish(error=caught.value)
    cassette = load(out)
    assert verify(cassette).ok
    assert [step.type for step in cassette.steps] == ["metadata"]
    err = capfd.readouterr().err
    assert "/blackbox/" not in err  # no traceback through Blackbox (the fake server's own thread may print one)
    if kind in ("cut", "not json"):
        assert err.count("[blackbox] a model call was not recorded") == 1


# ---------------------------------------------------------------------------------------------------------
# the rule, field by field (the codec alone)


def test_dropped_fields_are_never_params_and_the_tables_do_not_overlap() -> None:
    from blackbox.providers import openai_chat
    from blackbox.providers.neutral import CallIds
    from blackbox.providers.openai_compat import DROPPED_FIELDS, SERVER_PARAMS

    assert not DROPPED_FIELDS & set(openai_chat.KEPT_PARAMS)
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], **{name: 1 for name in DROPPED_FIELDS}}
    assert "params" not in openai_chat.normalize_request(body, CallIds())
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], **{name: 1 for name in SERVER_PARAMS}}
    assert openai_chat.normalize_request(body, CallIds())["params"] == dict.fromkeys(SERVER_PARAMS.values(), 1)


@pytest.mark.parametrize(("extra", "what"), [
    ({"executed_tools": [{"type": "search", "output": "…"}]}, "server-side tool runs"),
    ({"reasoning_content": ["not", "text"]}, "a reasoning_content that is not text"),
])
def test_what_would_not_replay_is_refused_with_a_line(extra: dict[str, Any], what: str) -> None:
    from blackbox.errors import BlackboxUnsupportedError
    from blackbox.providers import openai_chat
    from blackbox.providers.neutral import CallIds

    body = DIALECTS["groq"].completion(content="Hi")
    body["choices"][0]["message"].update(extra)
    with pytest.raises(BlackboxUnsupportedError, match=what):
        openai_chat.normalize_response(body, CallIds())


def test_replayed_reasoning_streams_and_assembles_back_in_its_field() -> None:
    from blackbox.providers import openai_chat, openai_chat_stream
    from blackbox.providers.neutral import CallIds

    output = {"type": "final_answer", "text": "Sunny.", "thoughts": [{"text": "Let me think.", "field": "reasoning"}]}
    body = openai_chat.synthesize_response(output, step_index=5, timestamp_ms=0, model="m")  # type: ignore[arg-type]
    assert body["choices"][0]["message"]["reasoning"] == "Let me think."
    assembler = openai_chat_stream.CODEC.assembler()
    result = None
    for chunk in openai_chat_stream.CODEC.synthesize(body, piece_size=4):
        result = assembler.feed(chunk) or result
    assert result is not None and result.body is not None
    assert openai_chat.normalize_response(result.body, CallIds()) == output


@pytest.mark.parametrize("name", ["vllm", "openrouter"])
def test_the_what_if_continues_a_server_run_with_its_kept_fields(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """`fork --model-only --live --provider openai` with the server's address in OPENAI_BASE_URL (a model name
    like `Qwen/Qwen3-8B` names no provider): the server's kept controls go back under their own names."""
    from blackbox.cli import app
    from tests.cli_helpers import invoke

    dialect = DIALECTS[name]
    parent = tmp_path / "parent.json"
    record(fake_api, dialect, parent, stream=False)
    fake_api.reset()
    fake_api.brain = dialect.brain()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_api.url + dialect.base_path)
    out = tmp_path / "whatif.json"
    result = invoke(app, ["fork", parent, "--at", "3", "--set", '"snowy"', "--out", out, "--model-only", "--live",
                          "--provider", "openai"])
    assert result.exit_code == 0, result.output
    (request,) = fake_api.requests
    assert request.path == f"{dialect.base_path}/chat/completions"
    sent = {field: request.body[field] for field in dialect.request_extra if field in request.body}
    kept_fields = {field for field in dialect.request_extra if field in openai_chat_kept()}
    assert sent == {field: dialect.request_extra[field] for field in kept_fields}
    assert request.body["messages"][-1] == {"role": "tool", "tool_call_id": "call-0", "content": "snowy"}
    assert verify(load(out)).ok and load(out).steps[-1].payload["result"] == "Weather: snowy"


def openai_chat_kept() -> set[str]:
    from blackbox.providers.openai_chat import KEPT_PARAMS

    return set(KEPT_PARAMS)
