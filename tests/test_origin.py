"""The unhashed `origin` of each recorded model call and the cassette's `made` (docs/format.md, "Origin"),
through the real SDKs against the fake API: an agent that puts the tool-call id it was handed into its output
replays with the id it was handed when recorded (not `call-N`), in every API; a cassette without the field
replays as before and says why an id differs; the fields change no hash and no string of the file is a
provider id by the neutrality rules the original applies to the whole file; a fork keeps the prefix's and has
the live provider's on its branch; what-if continues with the API the run used."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import blackbox
from blackbox.errors import CassetteError, ReplayDivergenceError
from blackbox.format import secrets
from blackbox.format.cassette import load, loads
from blackbox.format.lazy import load_lazy
from blackbox.format.origin import Origin, escape_id, origin_of, unescape_id
from blackbox.format.verify import neutrality_problem, verify
from blackbox.format.writing import dumps
from blackbox.live.recorder import recover
from tests.fakeapi import FakeAPI, anthropic_message, chat_completion, last_tool_results, response_object, turn_brain
from tests.fakeapi_gemini import gemini_response, gemini_turns, last_function_responses

PROVIDERS = ("anthropic", "openai", "responses", "gemini")
ID_PATTERN = re.compile(r"toolu_\w+|call_\w+|fc-\d-\w+")


def get_weather(city: str) -> str:
    return f"sunny in {city}"


# -- agents that put the id they were handed into what they send --------------------------------------------


def brain(provider: str) -> Any:
    """A tool call for Paris, then an answer quoting the tool results sent back (which hold the call's id)."""
    if provider == "gemini":
        return gemini_turns([
            gemini_response(calls=[("get_weather", {"city": "Paris"})], with_ids=True, model="gemini-2.5-flash-001"),
            lambda body: gemini_response(text="Weather: " + "; ".join(
                str(value.get("result")) for value in last_function_responses(body)), model="gemini-2.5-flash-001")])
    call = [("get_weather", {"city": "Paris"})]

    def final(body: dict[str, Any]) -> Any:
        text = "Weather: " + "; ".join(last_tool_results(body))
        return {"anthropic": lambda: anthropic_message(text=text, model="claude-sonnet-4-6-20261101"),
                "openai": lambda: chat_completion(content=text, model="gpt-5.1-2026-11-13"),
                "responses": lambda: response_object(text=text, model="gpt-5.1-2026-11-13")}[provider]()

    first = {"anthropic": lambda: anthropic_message(tool_uses=call, model="claude-sonnet-4-6-20261101"),
             "openai": lambda: chat_completion(tool_calls=call, model="gpt-5.1-2026-11-13"),
             "responses": lambda: response_object(tool_calls=call, model="gpt-5.1-2026-11-13")}[provider]
    return turn_brain([lambda body: first(), final])


def echo_agent(provider: str, bb: blackbox.Session, fake: FakeAPI, *, stream: bool = False) -> str:
    """An agent whose tool results say which call they answer (`<id>: <result>`): the id is in its requests and
    in its final answer."""
    weather = bb.tool("get_weather", get_weather)
    if provider == "anthropic":
        import anthropic

        client = fake.closes(anthropic.Anthropic(base_url=fake.url, api_key="k", http_client=bb.http_client(),
                                                 max_retries=0))
        tools = [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object"}}]
        messages: list[Any] = [{"role": "user", "content": "Paris?"}]
        while True:
            if stream:
                with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100, tools=tools,
                                            messages=messages) as events:
                    reply = events.get_final_message()
            else:
                reply = client.messages.create(model="claude-sonnet-4-6", max_tokens=100, tools=tools,
                                               messages=messages)
            uses = [block for block in reply.content if block.type == "tool_use"]
            if not uses:
                return f"{reply.id} {reply.model} " + "".join(b.text for b in reply.content if b.type == "text")
            messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                       "content": f"{use.id}: {weather(**use.input)}"}
                                                      for use in uses]}]
    if provider == "openai":
        import openai

        oai = fake.closes(openai.OpenAI(base_url=fake.openai_url, api_key="k", http_client=bb.http_client(),
                                        max_retries=0))
        defs = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
        chat: list[Any] = [{"role": "user", "content": "Paris?"}]
        while True:
            completion = oai.chat.completions.create(model="gpt-5.1", tools=defs, messages=chat)
            message = completion.choices[0].message
            if not message.tool_calls:
                return f"{completion.id} {completion.model} {message.content}"
            chat.append(message.model_dump(exclude_none=True, exclude={"annotations", "refusal"}))
            chat += [{"role": "tool", "tool_call_id": call.id,
                      "content": f"{call.id}: {weather(**json.loads(call.function.arguments))}"}
                     for call in message.tool_calls]
    if provider == "responses":
        import openai

        oai = fake.closes(openai.OpenAI(base_url=fake.openai_url, api_key="k", http_client=bb.http_client(),
                                        max_retries=0))
        items: list[Any] = [{"role": "user", "content": "Paris?"}]
        defs = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
        while True:
            response = oai.responses.create(model="gpt-5.1", input=items, tools=defs, stream=stream) if not stream \
                else None
            if stream:
                with oai.responses.stream(model="gpt-5.1", input=items, tools=defs) as events:
                    response = events.get_final_response()
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                return f"{response.id} {response.model} {response.output_text}"
            items += [call.model_dump(exclude_none=True) for call in calls]
            items += [{"type": "function_call_output", "call_id": call.call_id,
                       "output": f"{call.call_id}: {weather(**json.loads(call.arguments))}"} for call in calls]
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="k", http_options=bb.genai_http_options(base_url=fake.url))
    declaration = types.FunctionDeclaration(name="get_weather", parameters_json_schema={"type": "object"})
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[declaration])])
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="Paris?")])]
    while True:
        answer = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
        found = [part.function_call for part in answer.candidates[0].content.parts if part.function_call]
        if not found:
            return f"{answer.response_id} {answer.model_version} {answer.text}"
        contents.append(answer.candidates[0].content)
        contents.append(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            id=call.id, name=call.name, response={"result": f"{call.id}: {weather(**call.args)}"}))
            for call in found]))


def record(provider: str, fake: FakeAPI, out: Path, **kwargs: Any) -> str:
    fake.reset()
    fake.brain = brain(provider)
    bb = blackbox.session("record", out=out)
    answer = echo_agent(provider, bb, fake, **kwargs)
    bb.finish(result=answer)
    return answer


def replay(provider: str, fake: FakeAPI, cassette: Path, **kwargs: Any) -> str:
    fake.reset()
    bb = blackbox.session("replay", cassette=cassette)
    try:
        answer = echo_agent(provider, bb, fake, **kwargs)
    except Exception as exc:  # the SDK's error for a Blackbox refusal: finish() raises Blackbox's own
        bb.finish(error=exc)
        raise
    bb.finish(result=answer)
    assert fake.requests == []
    return answer


# -- the replayed agent sees what the recorded one saw --------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_replayed_agent_is_handed_the_ids_and_model_the_recorded_one_was(fake_api: FakeAPI, tmp_path: Path,
                                                                           provider: str) -> None:
    out = tmp_path / "run.json"
    answer = record(provider, fake_api, out)
    handed = ID_PATTERN.findall(answer)
    assert handed and "call-" not in answer  # the agent wrote the provider's id into its answer
    cassette = load(out)
    output = cassette.steps[1]
    assert output.origin is not None and output.origin.api == provider
    assert output.origin.call_ids() == handed[:1]
    assert cassette.steps[1].payload["calls"][0]["toolCallId"] == "call-0"  # the hashed steps stay neutral
    final = next(s for s in reversed(cassette.steps) if s.type == "model_output")
    assert final.origin is not None and final.origin.model is not None and final.origin.model in answer
    assert final.origin.response_id() is not None and answer.startswith(final.origin.response_id() or "")
    assert verify(cassette).ok
    assert replay(provider, fake_api, out) == answer  # the same ids, response id and model: the same outcome


@pytest.mark.parametrize("provider", ["anthropic", "responses"])
def test_a_streamed_replay_hands_back_the_recorded_ids_too(fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    out = tmp_path / "run.json"
    answer = record(provider, fake_api, out, stream=True)
    assert ID_PATTERN.search(answer)
    assert replay(provider, fake_api, out, stream=True) == answer
    assert replay(provider, fake_api, out) == answer  # a streamed recording replays unstreamed alike


def _without_origins(path: Path, to: Path) -> None:
    raw = json.loads(path.read_text())
    raw.pop("made", None)
    for step in raw["steps"]:
        step.pop("origin", None)
    to.write_text(json.dumps(raw))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_without_the_field_replay_hands_out_call_n_and_says_why_the_agent_diverged(
        fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    out, old = tmp_path / "run.json", tmp_path / "old.json"
    record(provider, fake_api, out)
    _without_origins(out, old)  # as a cassette made before Blackbox kept the ids (or an import)
    assert [s.hash for s in load(old).steps] == [s.hash for s in load(out).steps]  # not hashed: same chain
    with pytest.raises(ReplayDivergenceError) as caught:
        replay(provider, fake_api, old)
    report = str(caught.value)
    assert "replay diverged at step 4" in report and "call-0" in report
    assert "the agent used the tool-call id call-0 that replay handed it for the call step 1 asked for" in report
    assert "this cassette keeps no provider id for that call" in report and "re-record" in report


def test_an_agent_that_never_shows_its_ids_replays_a_cassette_without_the_field(fake_api: FakeAPI,
                                                                                 tmp_path: Path) -> None:
    import anthropic

    from tests.agents.loops import anthropic_agent
    from tests.fakeapi import weather_brain

    out, old = tmp_path / "run.json", tmp_path / "old.json"
    fake_api.brain = weather_brain("anthropic")
    bb = blackbox.session("record", out=out)
    client = fake_api.closes(anthropic.Anthropic(base_url=fake_api.url, api_key="k", http_client=bb.http_client()))
    answer = anthropic_agent(client, bb.tools({"get_weather": get_weather}), "Paris?")
    bb.finish(result=answer)
    _without_origins(out, old)
    fake_api.reset()
    bb = blackbox.session("replay", cassette=old)
    client = fake_api.closes(anthropic.Anthropic(base_url=fake_api.url, api_key="k", http_client=bb.http_client()))
    assert anthropic_agent(client, bb.tools({"get_weather": get_weather}), "Paris?") == answer
    assert bb.finish(result=answer).status == "success"


# -- the format: unhashed, neutral, kept by every reader and writer -------------------------------------------


def test_no_string_of_the_file_is_a_provider_id_by_the_rules_the_original_walks_it_with(fake_api: FakeAPI,
                                                                                       tmp_path: Path) -> None:
    for provider in PROVIDERS:
        out = tmp_path / f"{provider}.json"
        record(provider, fake_api, out)
        raw = json.loads(out.read_text())
        # The original's neutrality check walks the whole file, fields it does not know included.
        assert neutrality_problem({k: v for k, v in raw.items()}, []) is None, provider
        assert raw["steps"][1]["origin"]["api"] == provider
        assert list(raw["steps"][1])[-1] == "origin" and list(raw)[-1] == "made"  # after the hashed fields
        assert raw["made"]["blackbox"] == blackbox.__version__
        sdk = {"anthropic": "anthropic", "openai": "openai", "responses": "openai", "gemini": "google-genai"}
        assert sdk[provider] in raw["made"]["packages"]


def test_a_hand_written_raw_id_in_the_field_fails_verify_as_it_would_fail_the_original(fake_api: FakeAPI,
                                                                                        tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    record("anthropic", fake_api, out)
    raw = json.loads(out.read_text())
    raw["steps"][1]["origin"]["toolCallIds"] = ["toolu_01Abcdef1"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    report = verify(load(bad))
    assert not report.ok and report.failure is not None and report.failure.name == "provider_neutrality"
    assert report.failure.step == 1 and "origin" in report.failure.detail


@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=60),
       st.sampled_from(["toolu_", "msg_", "call_", "chatcmpl-", "resp_", "sk-ant-", "sk-proj-", "Bearer ", "AIza"]))
def test_an_escaped_id_round_trips_and_is_never_flagged(tail: str, prefix: str) -> None:
    provider_id = prefix + tail
    kept = origin_of("x", None, provider_id, [provider_id])
    escaped = escape_id(provider_id)
    assert unescape_id(escaped) == provider_id
    if kept is not None and kept.responseId is not None:
        assert not any(p.search(kept.responseId) for _, p in (*secrets.PROVIDER_ID_PATTERNS,
                                                              *secrets.CREDENTIAL_PATTERNS))
        assert kept.response_id() == provider_id and kept.call_ids() == [provider_id]


def test_an_id_that_escaped_would_still_look_like_a_key_is_not_kept() -> None:
    google_key_like = "AIza" + "B" * 35  # letters and digits only: escaping cannot hide it
    assert origin_of("gemini", "m", google_key_like, [google_key_like, "fc-1"]) == Origin(
        "gemini", "m", None, (None, "fc%2D1"))
    assert unescape_id("toolu%5") is None and unescape_id("a b") is None


def test_a_damaged_field_is_refused_on_load_naming_the_step_and_field_and_deleting_it_repairs(
        fake_api: FakeAPI, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    record("anthropic", fake_api, out)
    raw = json.loads(out.read_text())
    raw["steps"][1]["origin"]["toolCallIds"] = [7]
    with pytest.raises(CassetteError, match=r"step 1 field `origin.toolCallIds\[0\]` is not what Blackbox writes "
                                            r"there; the field is not hashed: re-record the run, or delete it"):
        loads(json.dumps(raw).encode())
    raw["made"] = {"at": "yesterday"}
    del raw["steps"][1]["origin"]
    with pytest.raises(CassetteError, match=r"field `made.at` is not what Blackbox writes there"):
        loads(json.dumps(raw).encode())
    del raw["made"]
    assert verify(loads(json.dumps(raw).encode())).ok


def test_lazy_loading_the_journal_and_recovery_keep_the_field(fake_api: FakeAPI, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    record("anthropic", fake_api, out)
    eager = load(out)
    assert [s.origin for s in load_lazy(out).steps] == [s.origin for s in eager.steps]
    assert load_lazy(out).decoded() == eager
    assert loads(dumps(eager)) == eager  # written and read back the same
    journal = tmp_path / "run.json.blackbox-journal"  # a journal holds steps as the cassette does
    header = {"blackboxJournal": 1, "id": "run", "createdAt": eager.createdAt, "out": str(out),
              "made": msgspec.to_builtins(eager.made)}
    journal.write_bytes(b"\n".join([json.dumps(header).encode(), *(msgspec.json.encode(s) for s in eager.steps)]))
    recovered = recover(journal)
    assert recovered.steps == eager.steps and recovered.made == eager.made


# -- forks and what-if ----------------------------------------------------------------------------------------


def test_a_fork_keeps_the_prefix_origins_and_its_live_branch_has_the_new_providers(fake_api: FakeAPI,
                                                                                   tmp_path: Path) -> None:
    out, fork = tmp_path / "run.json", tmp_path / "fork.json"
    record("anthropic", fake_api, out)
    parent = load(out)
    fake_api.reset()
    fake_api.brain = brain("anthropic")
    bb = blackbox.session("fork", cassette=out, out=fork, fork_at=3, fork_set="snowy", continue_with="live")
    answer = echo_agent("anthropic", bb, fake_api)
    bb.finish(result=answer)
    forked = load(fork)
    assert forked.steps[1].origin == parent.steps[1].origin  # the copied prefix keeps its fields
    live = forked.steps[5]
    assert live.type == "model_output" and live.origin is not None
    assert live.origin.response_id() == answer.split()[0] != parent.steps[5].origin.response_id()
    # the live request carried the recorded id (the agent had it from the replayed prefix)
    sent = fake_api.requests[0].body["messages"][1]["content"][-1]["id"]
    assert sent == parent.steps[1].origin.call_ids()[0]
    assert forked.made is not None and verify(forked).ok


def test_a_scripted_fork_has_no_origin_on_its_branch(fake_api: FakeAPI, tmp_path: Path) -> None:
    out, fork, script = tmp_path / "run.json", tmp_path / "fork.json", tmp_path / "replies.json"
    record("anthropic", fake_api, out)
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow."}]))
    fake_api.reset()
    bb = blackbox.session("fork", cassette=out, out=fork, fork_at=3, fork_set="snowy", continue_with="script",
                          script=script)
    answer = echo_agent("anthropic", bb, fake_api)
    bb.finish(result=answer)
    forked = load(fork)
    assert forked.steps[5].origin is None and forked.steps[1].origin is not None and fake_api.requests == []
    assert answer.startswith("blackbox-replay-5 ")


def test_what_if_continues_a_responses_run_with_the_responses_api(fake_api: FakeAPI, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from blackbox.cli import app

    out, fork = tmp_path / "run.json", tmp_path / "fork.json"
    record("responses", fake_api, out)
    fake_api.reset()
    fake_api.brain = lambda body: response_object(text="Snow.")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-what-if")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_api.openai_url)
    result = CliRunner().invoke(app, ["what-if", str(out), "--at", "3", "--set", '"snowy"', "--out", str(fork),
                                      "--live"])
    assert result.exit_code == 0, result.output
    assert fake_api.paths() == ["/v1/responses"]  # the API the run used, not Chat Completions for a GPT name
    forked = load(fork)
    assert forked.steps[-2].origin is not None and forked.steps[-2].origin.api == "responses"
    assert forked.made is not None


def test_what_if_defaults_to_the_api_the_run_used_unless_the_model_is_of_another_family() -> None:
    from blackbox.fork.whatif import choose_provider
    from blackbox.format.cassette import StepChain

    def run(api: str, model: str) -> Any:
        chain = StepChain("run")
        chain.append("model_input", 0, {"messages": [{"role": "user", "content": "hi"}], "tools": [], "model": model})
        chain.append("model_output", 1, {"type": "final_answer", "text": "x"}, origin=Origin(api, model))
        return chain.cassette(0)

    responses = run("responses", "gpt-5.1")
    assert choose_provider(responses, None).name == "responses"  # a GPT name alone would say Chat Completions
    assert choose_provider(responses, None, "gpt-5.2").name == "responses"
    assert choose_provider(responses, None, "claude-sonnet-4-6").name == "anthropic"
    assert choose_provider(responses, "openai").name == "openai"
    assert choose_provider(run("azure", "my-deployment"), None, "gpt-5.2").name == "azure"  # a deployment's name
