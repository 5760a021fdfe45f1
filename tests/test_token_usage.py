"""Token usage kept at record time (docs/format.md, "Token usage"), with the real SDKs against the fake API.

Every provider's usage object, unstreamed and streamed, becomes the same neutral `tokens` beside the model
output step: not hashed, so the cassette verifies by the original's rules (which walk every key), replays,
diffs and forks as before, and its payloads still hold no `usage`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import blackbox
from blackbox.errors import CassetteError
from blackbox.fork.whatif import LiveModel, what_if
from blackbox.format.cassette import load
from blackbox.format.diff import diff
from blackbox.format.indexing import Indexer
from blackbox.format.lazy import load_lazy
from blackbox.format.tokens import Tokens
from blackbox.format.verify import neutrality_problem, verify
from blackbox.importers.registry import IMPORTERS
from blackbox.live import calls
from blackbox.live.recorder import Recorder, journal_path, recover
from blackbox.providers import token_counts as counts
from blackbox.providers.neutral import CallIds
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES
from tests.fakeapi import FakeAPI, anthropic_message, chat_completion, response_object
from tests.fakeapi_gemini import gemini_response
from tests.tui.timed import write_timed

pytest_plugins = ["tests.conftest_fakeapi"]

ANTHROPIC_USAGE = {"input_tokens": 50, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 30,
                   "output_tokens": 17, "service_tier": "standard"}
CHAT_USAGE = {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99,
              "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
              "completion_tokens_details": {"reasoning_tokens": 5, "audio_tokens": 0}}
RESPONSES_USAGE = {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 24},
                   "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 52}
GEMINI_USAGE = {"promptTokenCount": 12, "cachedContentTokenCount": 8, "candidatesTokenCount": 7,
                "thoughtsTokenCount": 3, "totalTokenCount": 22}

#: What each provider's usage above means, neutrally: input with the cache, output with the reasoning.
EXPECTED = {
    "anthropic": Tokens(input=100, output=17, cacheRead=30, cacheWrite=20),
    "openai": Tokens(input=82, output=17, cacheRead=64, reasoning=5),
    "azure": Tokens(input=82, output=17, cacheRead=64, reasoning=5),
    "responses": Tokens(input=40, output=12, cacheRead=24, reasoning=4),
    "azure-responses": Tokens(input=40, output=12, cacheRead=24, reasoning=4),
    "gemini": Tokens(input=12, output=10, cacheRead=8, reasoning=3),
}
PROVIDERS = tuple(EXPECTED)


def _answer(provider: str) -> dict[str, Any]:
    if provider == "anthropic":
        return anthropic_message(text="Paris.", usage=ANTHROPIC_USAGE)
    if provider in ("openai", "azure"):
        return chat_completion(content="Paris.", usage=CHAT_USAGE)
    if provider == "gemini":
        return {**gemini_response(text="Paris."), "usageMetadata": GEMINI_USAGE}
    return response_object(text="Paris.", usage=RESPONSES_USAGE)


def _one_call(provider: str, bb: blackbox.Session, fake: FakeAPI, *, stream: bool) -> str:
    """One model call through the provider's own SDK, read to its end; the answer's text."""
    import anthropic
    import openai

    question = "Capital of France?"
    if provider == "anthropic":
        claude = anthropic.Anthropic(api_key="test-key", base_url=fake.url, http_client=bb.http_client(),
                                     max_retries=0)
        kwargs: dict[str, Any] = {"model": "claude-sonnet-4-6", "max_tokens": 100,
                                  "messages": [{"role": "user", "content": question}]}
        if stream:
            with claude.messages.stream(**kwargs) as s:
                message = s.get_final_message()
        else:
            message = claude.messages.create(**kwargs)
        return "".join(block.text for block in message.content if block.type == "text")
    if provider == "gemini":
        from google import genai

        models = genai.Client(api_key="AIzaSyFAKE-gemini-test-key-0123456789",
                              http_options=bb.genai_http_options(base_url=fake.url)).models
        if stream:
            return "".join(chunk.text or "" for chunk in models.generate_content_stream(
                model="gemini-2.5-flash", contents=question))
        return models.generate_content(model="gemini-2.5-flash", contents=question).text or ""
    common: dict[str, Any] = {"http_client": bb.http_client(), "max_retries": 0}
    if provider.startswith("azure"):
        sdk: Any = openai.AzureOpenAI(azure_endpoint=fake.url, api_key="azure-key-0123456789",
                                      api_version="2024-10-21", azure_deployment="prod-gpt", **common)
    else:
        sdk = openai.OpenAI(api_key="test-key", base_url=fake.openai_url, **common)
    if provider in ("openai", "azure"):
        messages: Any = [{"role": "user", "content": question}]
        if stream:
            chunks = sdk.chat.completions.create(model="gpt-5.1", messages=messages, stream=True,
                                                 stream_options={"include_usage": True})
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        return sdk.chat.completions.create(model="gpt-5.1", messages=messages).choices[0].message.content or ""
    if stream:
        with sdk.responses.stream(model="gpt-5.1", input=question) as s:
            return str(s.get_final_response().output_text)
    return str(sdk.responses.create(model="gpt-5.1", input=question).output_text)


def _record(provider: str, fake: FakeAPI, out: Path, *, stream: bool) -> None:
    fake.reset()
    fake.queue(_answer(provider))
    with blackbox.session("record", out=out) as bb:
        assert _one_call(provider, bb, fake, stream=stream) == "Paris."
    assert [bool(r.body.get("stream")) or "streamGenerateContent" in r.path for r in fake.requests] == [stream]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_provider_keeps_its_usage_as_the_same_tokens_streamed_or_not(
        fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    plain, streamed = tmp_path / "plain.json", tmp_path / "streamed.json"
    _record(provider, fake_api, plain, stream=False)
    _record(provider, fake_api, streamed, stream=True)
    for path in (plain, streamed):
        cassette = load(path)
        output = cassette.steps[1]
        assert output.type == "model_output" and output.tokens == EXPECTED[provider]
        assert [step.tokens for step in cassette.steps if step is not output] == [None] * (len(cassette.steps) - 1)
        assert verify(path).ok
        raw = json.loads(path.read_text(encoding="utf-8"))
        assert list(raw["steps"][1])[-3:] == ["hash", "tokens", "origin"]  # the layout: after the hash
        assert "usage" not in json.dumps([step["payload"] for step in raw["steps"]])
        # The original's neutrality check walks the whole file, keys included: nothing in `tokens` is flagged.
        assert neutrality_problem(raw, []) is None
    assert [(s.type, s.payload) for s in load(plain).steps] == [(s.type, s.payload) for s in load(streamed).steps]


# ---------------------------------------------------------------------------------------------------------
# Kept by every reader and writer, left out by what does not record a model call


def test_a_recording_replays_and_forks_keeping_its_counts(fake_api: FakeAPI, tmp_path: Path) -> None:
    out, fork = tmp_path / "run.json", tmp_path / "fork.json"
    fake_api.queue(anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})], usage=ANTHROPIC_USAGE),
                   anthropic_message(text="Sunny.", usage={**ANTHROPIC_USAGE, "output_tokens": 3}))
    with blackbox.session("record", out=out) as bb:
        assert weather_agent(bb, fake_api) == "Sunny."
    recorded = load(out)
    assert [s.tokens for s in recorded.steps if s.type == "model_output"] == [
        EXPECTED["anthropic"], msgspec.structs.replace(EXPECTED["anthropic"], output=3)]
    fake_api.reset()
    with blackbox.session("replay", cassette=out) as bb:  # counts are never compared: the replay matches
        assert weather_agent(bb, fake_api) == "Sunny."
    assert fake_api.requests == []
    fake_api.queue(anthropic_message(text="Rainy.", usage={"input_tokens": 7, "output_tokens": 2}))
    with blackbox.session("fork", cassette=out, out=fork, fork_at=3, fork_set="rain in Paris",
                          continue_with="live") as bb:
        assert weather_agent(bb, fake_api) == "Rainy."
    forked = load(fork)
    assert forked.steps[1].tokens == EXPECTED["anthropic"]  # the copied prefix keeps the parent's counts
    assert forked.steps[-2].tokens == Tokens(7, 2)  # the branch's live call has its own
    assert verify(fork).ok


def weather_agent(bb: blackbox.Session, fake: FakeAPI) -> str:
    """One tool round on the Anthropic SDK: the model asks for the weather, gets it, answers."""
    import anthropic

    claude = anthropic.Anthropic(api_key="test-key", base_url=fake.url, http_client=bb.http_client(), max_retries=0)
    weather = bb.tool("get_weather", lambda city: f"sun in {city}")
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    tools = [{"name": "get_weather", "description": "weather", "input_schema": {"type": "object"}}]
    while True:
        reply = claude.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=messages, tools=tools)
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in reply.content if block.type == "text")
        messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id,
                                                   "content": weather(**u.input)} for u in uses]}]


def test_the_journal_and_a_recovery_keep_the_counts(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    recorder = Recorder(out, "run", 1000, CallIds())
    recorder.model_step({"messages": [{"role": "user", "content": "hi"}], "tools": []}, 1001,
                        {"type": "final_answer", "text": "hello"}, 1450, Tokens(12, 3, cacheRead=4))
    line = journal_path(out).read_bytes().splitlines()[-1]
    assert json.loads(line)["tokens"] == {"input": 12, "output": 3, "cacheRead": 4}
    recovered = recover(journal_path(out))
    assert recovered.steps[1].tokens == Tokens(12, 3, cacheRead=4)
    recorder.discard_journal()


def test_every_reader_keeps_the_counts_and_the_index_still_finds_each_step(tmp_path: Path) -> None:
    path = write_timed(tmp_path / "timed.json")
    eager = [s.tokens for s in load(path).steps]
    assert sum(t is not None for t in eager) == 4
    assert [s.tokens for s in load_lazy(path).steps] == eager
    assert [s.decoded().tokens for s in load_lazy(path).steps] == eager
    indexer = Indexer(path, chunk=512)  # small chunks: steps end across reads
    indexed = [step for batch in indexer.batches() for step in batch.steps]
    assert indexer.done and [s.tokens for s in indexed] == eager
    assert [s.decoded().tokens for s in indexed] == eager
    assert [s.hash for s in indexed] == [s.hash for s in load(path).steps]


def test_counts_are_not_hashed_so_the_chain_and_diff_ignore_them(tmp_path: Path) -> None:
    path = write_timed(tmp_path / "timed.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    for step in raw["steps"]:
        step.pop("tokens", None)
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(raw), encoding="utf-8")
    assert verify(bare).ok and verify(path).ok
    assert [s.hash for s in load(bare).steps] == [s.hash for s in load(path).steps]
    assert diff(load(path), load(bare)).first_divergence is None


@pytest.mark.parametrize(("source", "name", "field"), [
    ("claude-code", "claude-code-tax.jsonl", '"usage"'), ("codex", "codex-tax.jsonl", "token_count"),
    ("gemini", "gemini-tax-rewind.jsonl", '"tokens"')])
def test_an_import_leaves_the_counts_out(source: str, name: str, field: str) -> None:
    path = FIXTURES / "import" / name
    assert field in path.read_text(encoding="utf-8")  # the agent's file has its counts
    imported = IMPORTERS[source].import_file(path, "imported")
    assert imported.steps and all(step.tokens is None for step in imported.steps)


@pytest.mark.parametrize(("tokens", "message"), [
    ('"many"', "step 1 field `tokens` must be an object of token counts"),
    ('{"input": 3}', "step 1 field `tokens` has no `output` count"),
    ('{"input": -1, "output": 2}', "step 1 field `tokens.input` must be a whole number from 0 to 2^53"),
    ('{"input": 1, "output": 2.5}', "step 1 field `tokens.output` must be a whole number from 0 to 2^53"),
    ('{"input": 1, "output": true}', "step 1 field `tokens.output` must be a whole number from 0 to 2^53"),
    ('{"input": 1, "output": 2, "reasoning": 1e300}', "step 1 field `tokens.reasoning` must be a whole number"),
])
def test_a_damaged_count_is_one_line_naming_the_step_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              tokens: str, message: str) -> None:
    text = (FIXTURES / "traces" / "success-final-answer.v2.json").read_text(encoding="utf-8")
    raw = json.loads(text)
    hashes = [step["hash"] for step in raw["steps"]]
    damaged = text.replace(f'"hash": "{hashes[1]}"', f'"hash": "{hashes[1]}", "tokens": {tokens}', 1)
    path = tmp_path / "damaged.json"
    path.write_text(damaged, encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        load(path)
    assert message in str(caught.value) and "delete the step's `tokens` field" in str(caught.value)
    assert "many" not in str(caught.value)  # never the content
    code, out, err = run_cli(capsys, "inspect", path)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err and "Traceback" not in err


def test_an_odd_usage_object_drops_the_counts_never_the_call() -> None:
    assert counts.anthropic({"usage": {"input_tokens": "12", "output_tokens": 3}}) is None
    assert counts.anthropic({"usage": None}) is None and counts.anthropic({}) is None
    assert counts.openai_chat({"usage": {"prompt_tokens": 5, "completion_tokens": -1}}) is None
    assert counts.openai_chat({"usage": {"prompt_tokens": True, "completion_tokens": 1}}) is None
    assert counts.responses({"usage": {"input_tokens": 5, "output_tokens": 1,
                                       "input_tokens_details": {"cached_tokens": "x"}}}) == Tokens(5, 1)
    assert counts.gemini({"usageMetadata": {"promptTokenCount": 9}}) == Tokens(9, 0)  # proto3 leaves out 0
    assert counts.gemini({"usageMetadata": {"candidatesTokenCount": 9}}) is None
    assert counts.anthropic({"usage": {"input_tokens": 5, "output_tokens": 1.0}}) == Tokens(5, 1)
    assert counts.anthropic({"usage": {"input_tokens": 5, "output_tokens": float("inf")}}) is None


def test_a_stream_read_to_its_last_event_is_stamped_then_not_when_the_agent_goes_on(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent reads the terminal event and stops reading (the body's end never read); the output step
    is stamped when the answer was whole, not when the next tool call settles the stream."""
    import anthropic

    clock = [1_000.0]
    monkeypatch.setattr(calls, "_clock", lambda: clock[0])
    out = tmp_path / "stream.json"
    fake_api.queue(anthropic_message(text="Paris.", usage=ANTHROPIC_USAGE))
    with blackbox.session("record", out=out) as bb:
        claude = anthropic.Anthropic(api_key="test-key", base_url=fake_api.url, http_client=bb.http_client(),
                                     max_retries=0)
        stream = claude.messages.create(model="claude-sonnet-4-6", max_tokens=100, stream=True,
                                        messages=[{"role": "user", "content": "Capital of France?"}])
        clock[0] += 1.5  # the model took 1.5 s
        for event in stream:
            if event.type == "message_stop":
                break
        clock[0] += 60  # the agent thinks for a minute, then runs a tool (which records the stream)
        bb.tool("note", lambda text: text)("done")
        stream.close()
    steps = load(out).steps
    assert [s.type for s in steps[:4]] == ["model_input", "model_output", "tool_call", "tool_result"]
    assert steps[1].timestamp - steps[0].timestamp == 1_500 and steps[1].tokens == EXPECTED["anthropic"]
    assert steps[2].timestamp - steps[1].timestamp == 60_000


def test_a_live_what_if_keeps_the_counts_of_its_calls(fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = load(FIXTURES / "fleet-triage" / "cassettes" / "triage-incident.json")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-whatif-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    fake_api.queue(anthropic_message(text="Normal now.", usage=ANTHROPIC_USAGE))
    fork, reason = what_if(parent, 5, {"data": []}, LiveModel("anthropic"), trace_id="live")
    assert reason == "final answer"
    assert fork.steps[-2].type == "model_output" and fork.steps[-2].tokens == EXPECTED["anthropic"]
    assert verify(fork).ok


def test_a_model_calls_latency_is_the_time_its_request_was_out(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model_input is stamped as the request leaves, the model_output as its answer arrives: the API
    "takes" 2.5 s (the clock moves while it answers) and the steps are 2.5 s apart."""
    clock = [5_000.0]
    monkeypatch.setattr(calls, "_clock", lambda: clock[0])

    def slow_model(body: dict[str, Any]) -> dict[str, Any]:
        clock[0] += 2.5
        return anthropic_message(text="Paris.", usage=ANTHROPIC_USAGE)

    fake_api.brain = slow_model
    out = tmp_path / "latency.json"
    with blackbox.session("record", out=out) as bb:
        assert _one_call("anthropic", bb, fake_api, stream=False) == "Paris."
    steps = load(out).steps
    assert steps[1].timestamp - steps[0].timestamp == 2_500
