"""`blackbox migrate` end to end: folders of runs the real `anthropic` and `openai` SDKs recorded against the fake
API, asked again of a candidate model of the other provider (`tests.fakeapi_migrate` decides beforehand which
runs keep their outcome), through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import msgspec
import openai
import pytest
from jsonschema import Draft202012Validator

import blackbox
from blackbox.format.cassette import load, save
from blackbox.format.verify import verify
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI, error_reply
from tests.fakeapi_migrate import MigrationBrain

pytest_plugins = ["tests.conftest_fakeapi"]

ANT_KEY = "sk-ant-migrate-0123456789abcdefghijklmnop"
OAI_KEY = "sk-proj-migrate-0123456789abcdefghijklmnop"
RESULTS = {"get_weather": "{city} is sunny", "get_time": "09:00 in {city}"}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
NAMES = ("get_weather", "get_time")


def _tools(bb: Any) -> dict[str, Any]:
    return {name: bb.tool(name, lambda city, name=name: RESULTS[name].format(city=city)) for name in NAMES}


def record_anthropic(fake: FakeAPI, out: Path, question: str) -> None:
    """A Messages tool loop through the real SDK, recorded."""
    bb = blackbox.session("record", out=out)
    tools = _tools(bb)
    client = anthropic.Anthropic(base_url=fake.url, api_key=ANT_KEY, http_client=bb.http_client(), max_retries=0)
    specs: Any = [{"name": n, "description": n, "input_schema": SCHEMA} for n in NAMES]
    messages: list[Any] = [{"role": "user", "content": question}]
    while True:
        reply = client.messages.create(model="claude-haiku-4-5", max_tokens=300, messages=messages, tools=specs)
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            bb.finish(result=reply.content[0].text)  # type: ignore[union-attr]
            return
        messages += [{"role": "assistant", "content": [block.model_dump() for block in reply.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                   "content": tools[use.name](**use.input)} for use in uses]}]


def record_openai(fake: FakeAPI, out: Path, question: str) -> None:
    """A chat-completions tool loop through the real SDK, recorded."""
    bb = blackbox.session("record", out=out)
    tools = _tools(bb)
    client = openai.OpenAI(base_url=fake.openai_url, api_key=OAI_KEY, http_client=bb.http_client(), max_retries=0)
    specs: Any = [{"type": "function", "function": {"name": n, "description": n, "parameters": SCHEMA}}
                  for n in NAMES]
    messages: list[Any] = [{"role": "user", "content": question}]
    while True:
        reply = client.chat.completions.create(model="gpt-5.1", messages=messages, tools=specs)
        message = reply.choices[0].message
        if not message.tool_calls:
            bb.finish(result=message.content)
            return
        messages.append(message.model_dump(exclude_none=True))
        messages += [{"role": "tool", "tool_call_id": call.id,
                      "content": tools[call.function.name](**json.loads(call.function.arguments))}  # type: ignore[union-attr]
                     for call in message.tool_calls]


QUESTIONS = {"paris": "Weather in Paris?", "oslo": "Weather and time in Oslo?", "rome": "Weather in Rome?"}


def record_folder(fake: FakeAPI, folder: Path, recorder: Any, questions: dict[str, str] = QUESTIONS) -> Path:
    fake.brain = MigrationBrain(set())
    (folder / "nested").mkdir(parents=True)
    for name, question in questions.items():
        recorder(fake, folder / ("nested" if name == "oslo" else "") / f"{name}.json", question)
    fake.reset()
    return folder


@pytest.fixture
def keys(fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> FakeAPI:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANT_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    monkeypatch.setenv("OPENAI_API_KEY", OAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_api.openai_url)
    return fake_api


SCHEMA_DOC = json.loads((Path(__file__).parent.parent / "docs" / "schemas" / "migrate.schema.json").read_text())


def migrate(capsys: pytest.CaptureFixture[str], folder: Path, *args: object) -> tuple[int, Any, str]:
    """`blackbox migrate … --json`: the one document, checked against its schema."""
    code, out, err = run_cli(capsys, "migrate", folder, *args, "--json")
    doc = json.loads(out)
    Draft202012Validator.check_schema(SCHEMA_DOC)
    assert [e.message for e in Draft202012Validator(SCHEMA_DOC).iter_errors(doc)] == []
    return code, doc, err


def classes(doc: dict[str, Any]) -> dict[str, list[str]]:
    return {run["file"]: [a["verdict"] for a in run["attempts"]] for run in doc["runs"]}


def check_forks(folder: Path, out: Path, doc: dict[str, Any]) -> None:
    """Every fork is written, verifies, and links to its run at the run's first request."""
    for run in doc["runs"]:
        parent = load(folder / run["file"])
        for attempt in run["attempts"]:
            fork = load(out / attempt["file"])
            assert verify(fork).ok
            assert fork.parentId == parent.id and fork.forkedFromStepId == parent.steps[0].id
            assert fork.steps[0].payload["messages"] == parent.steps[0].payload["messages"]


@pytest.mark.parametrize(("recorder", "candidate", "path", "recorded_path", "extra"), [
    (record_anthropic, "gpt-candidate", "/v1/chat/completions", "/v1/messages", []),
    (record_openai, "claude-candidate", "/v1/messages", "/v1/chat/completions", []),
    (record_anthropic, "gpt-candidate", "/v1/responses", "/v1/messages", ["--provider", "responses"]),
])
def test_a_folder_migrated_across_providers_names_exactly_the_runs_whose_outcome_changed(
        keys: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str], recorder: Any, candidate: str,
        path: str, recorded_path: str, extra: list[str]) -> None:
    folder = record_folder(keys, tmp_path / "runs", recorder)
    (folder / "notes.txt").write_text("not a run", encoding="utf-8")
    (folder / "other.json").write_text('{"hello": 1}', encoding="utf-8")
    keys.brain = MigrationBrain({candidate})
    code, doc, err = migrate(capsys, folder, "--model", candidate, "--concurrency", "3", *extra)
    assert code == 0, err
    assert classes(doc) == {"nested/oslo.json": ["changed path"], "paris.json": ["same"],
                            "rome.json": ["changed outcome"]}
    summary = doc["summary"]
    assert summary["outcomeChanged"] == ["rome.json"] and summary["pathChanged"] == ["nested/oslo.json"]
    assert summary["passed"] == 2 and summary["counts"]["changed outcome"] == 1
    assert {s["file"] for s in doc["skipped"]} == {"notes.txt", "other.json"}
    # every request went to the candidate's API, naming the candidate
    assert {r.path for r in keys.requests} == {path} and recorded_path != path
    assert {r.body["model"] for r in keys.requests} == {candidate}
    out = tmp_path / f"runs-migrated-{candidate}"
    check_forks(folder, out, doc)
    rome = next(run for run in doc["runs"] if run["file"] == "rome.json")["attempts"][0]
    assert rome["divergence"]["step"] == 1 and "get_weather" in rome["divergence"]["recorded"]
    assert rome["candidate"]["tools"] == [] and rome["candidate"]["finish"] == "end"
    oslo = next(run for run in doc["runs"] if run["file"] == "nested/oslo.json")
    assert oslo["recorded"]["tools"] == ["get_weather", "get_time"]
    assert oslo["attempts"][0]["candidate"]["tools"] == ["get_time", "get_weather"]
    assert json.loads((out / "report.json").read_text())["summary"]["outcomeChanged"] == ["rome.json"]
    for key in (ANT_KEY, OAI_KEY):
        assert not any(key in f.read_text() for f in out.rglob("*.json"))


def test_the_gate_exits_1_below_min_pass_with_one_line_and_0_at_or_above(
        keys: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = record_folder(keys, tmp_path / "runs", record_anthropic)
    keys.brain = MigrationBrain({"gpt-candidate"})
    code, out, err = run_cli(capsys, "migrate", folder, "--model", "gpt-candidate", "--min-pass", "0.9")
    assert code == 1
    assert err.strip().splitlines() == ["gate FAILED: pass rate 67% < --min-pass 90%"]
    assert "rome.json" in out and "changed outcome" in out
    code, out, err = run_cli(capsys, "migrate", folder, "--model", "gpt-candidate", "--min-pass", "66%")
    assert code == 0, err
    assert "gate passed" in out
    code, markdown, _ = run_cli(capsys, "migrate", folder, "--model", "gpt-candidate", "--min-pass", "1",
                                "--format", "markdown")
    assert code == 1
    assert markdown.startswith("## ❌ Migration to `gpt-candidate` (openai)")
    row = next(line for line in markdown.splitlines() if line.startswith("| rome.json"))
    assert "| changed outcome | FAIL |" in row


def test_repeat_reports_each_runs_stability(keys: FakeAPI, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = record_folder(keys, tmp_path / "runs", record_openai,
                           {"paris": "Weather in Paris?", "bergen": "Weather in Bergen?"})
    keys.brain = MigrationBrain({"claude-candidate"})
    code, doc, err = migrate(capsys, folder, "--model", "claude-candidate", "--repeat", "3", "--concurrency", "1")
    assert code == 0, err
    assert classes(doc) == {"bergen.json": ["changed outcome", "same", "same"], "paris.json": ["same"] * 3}
    assert doc["summary"]["unstable"] == ["bergen.json"] and doc["summary"]["continuations"] == 6
    out = tmp_path / "runs-migrated-claude-candidate"
    assert sorted(p.name for p in out.glob("bergen*.json")) == ["bergen.2.json", "bergen.3.json", "bergen.json"]
    check_forks(folder, out, doc)


def _lima(keys: FakeAPI, tmp_path: Path) -> Path:
    folder = record_folder(keys, tmp_path / "runs", record_anthropic, {"lima": "Weather in Lima?"})
    keys.brain = MigrationBrain({"gpt-candidate"})
    return folder


def _unseen(doc: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    attempt = doc["runs"][0]["attempts"][0]
    out = Path(doc["out"]) / attempt["file"]
    return attempt, load(out)


def test_an_unseen_call_under_fail_stops_the_run_as_changed_path_naming_the_call(
        keys: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _lima(keys, tmp_path)
    code, doc, _ = migrate(capsys, folder, "--model", "gpt-candidate")
    attempt, fork = _unseen(doc)
    assert attempt["verdict"] == "changed path" and attempt["passed"] is False
    assert attempt["unseen"] == [{"tool": "get_forecast", "keys": ["city"], "answered": "no (fail)"}]
    assert "get_forecast" in attempt["verdictText"]
    assert fork.steps[-1].type == "tool_call" and fork.steps[-1].payload["toolName"] == "get_forecast"
    assert doc["summary"]["passRate"] == 0.0 and code == 0


def test_an_unanswered_call_does_not_pass_even_when_the_recording_was_incomplete_too(
        keys: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _lima(keys, tmp_path)
    run = load(folder / "lima.json")
    save(msgspec.structs.replace(run, steps=run.steps[:-1]), folder / "lima.json")  # no terminal step: incomplete
    _, doc, _ = migrate(capsys, folder, "--model", "gpt-candidate")
    attempt, _ = _unseen(doc)
    assert attempt["verdict"] == "changed path" and attempt["passed"] is False


def test_an_unseen_call_under_static_gets_the_text(keys: FakeAPI, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    folder = _lima(keys, tmp_path)
    code, doc, err = migrate(capsys, folder, "--model", "gpt-candidate", "--unseen", "static:Lima is sunny",
                             "--min-pass", "1")
    assert code == 0, err
    assert doc["summary"]["gate"] == "pass"  # a rate equal to --min-pass passes
    attempt, fork = _unseen(doc)
    assert attempt["unseen"][0]["answered"] == "static"
    results = [s.payload for s in fork.steps if s.type == "tool_result"]
    assert results == [{"toolCallId": results[0]["toolCallId"], "toolName": "get_forecast", "result": "Lima is sunny"}]
    # the same answer as recorded through another tool: the outcome holds, the path does not
    assert attempt["verdict"] == "changed path" and attempt["passed"] is True
    assert fork.steps[-1].payload == {"event": "run_completed", "status": "success", "result": "Lima: Lima is sunny"}


def test_an_unseen_call_under_live_readonly_runs_the_named_function_only(
        keys: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _lima(keys, tmp_path)
    tools = tmp_path / "tooling"
    tools.mkdir()
    (tools / "lima_tools_live.py").write_text("CALLS = []\n\ndef forecast(city):\n    CALLS.append(city)\n"
                                              "    return {'city': city, 'sky': 'rain'}\n", encoding="utf-8")
    monkeypatch.chdir(tools)
    monkeypatch.syspath_prepend(str(tools))
    code, doc, err = migrate(capsys, folder, "--model", "gpt-candidate", "--unseen",
                             "live-readonly:get_forecast=lima_tools_live:forecast")
    assert code == 0, err
    attempt, fork = _unseen(doc)
    assert attempt["unseen"][0]["answered"] == "live"
    import lima_tools_live  # type: ignore[import-not-found]

    assert lima_tools_live.CALLS == ["Lima"]
    result = next(s.payload for s in fork.steps if s.type == "tool_result")
    assert result["result"] == {"city": "Lima", "sky": "rain"}
    assert attempt["verdict"] == "changed outcome"
    # a tool the list does not name is not run: the call fails as under `fail`
    code, doc, _ = migrate(capsys, folder, "--model", "gpt-candidate", "--unseen",
                           "live-readonly:lima_tools_live:forecast")
    attempt, _ = _unseen(doc)
    assert attempt["unseen"][0]["answered"] == "no (fail)" and lima_tools_live.CALLS == ["Lima"]


def test_a_broken_chain_is_that_runs_error_and_the_others_go_on(
        keys: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = record_folder(keys, tmp_path / "runs", record_anthropic)
    rome = folder / "rome.json"
    rome.write_text(rome.read_text().replace("Rome is sunny", "Rome is snowy", 1), encoding="utf-8")
    keys.brain = MigrationBrain({"gpt-candidate"})
    keys.queue(error_reply("openai", 429, retry_after_ms=10))  # the pool waits and asks again
    out = folder / "migrated"  # inside the folder: a second migration does not take the forks for runs
    for _ in range(2):
        code, doc, err = migrate(capsys, folder, "--model", "gpt-candidate", "--concurrency", "1", "--out", out)
        assert code == 0, err
        assert classes(doc) == {"nested/oslo.json": ["changed path"], "paris.json": ["same"],
                                "rome.json": ["error"]}
        rome_attempt = doc["runs"][-1]["attempts"][0]
        assert "hash chain broken at step" in rome_attempt["error"] and rome_attempt["file"] is None
        assert doc["summary"]["errors"] == ["rome.json"]
    assert {s["file"] for s in doc["skipped"]} == {"migrated/paris.json", "migrated/nested/oslo.json",
                                                   "migrated/report.json"}
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    code, _, err = run_cli(capsys, "migrate", folder, "--model", "gpt-candidate", "--out", blocked / "out")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "cannot make --out" in err, err


@pytest.mark.parametrize(("args", "words"), [
    (["--min-pass", "1.5"], "--min-pass '1.5' is not a rate"),
    (["--min-pass", "most"], "--min-pass 'most' is not a rate"),
    (["--provider", "acme"], "unknown provider 'acme'"),
    (["--unseen", "ask-me"], "--unseen 'ask-me' is not a policy"),
    (["--unseen", "live-readonly:no_such_module_here:fn"], "cannot import no_such_module_here"),
])
def test_bad_flags_are_one_line_and_exit_2(keys: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           args: list[str], words: str) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    code, out, err = run_cli(capsys, "migrate", folder, "--model", "gpt-candidate", *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err, err
    assert not (tmp_path / "runs-migrated-gpt-candidate").exists() and keys.requests == []


def test_bad_folders_are_one_line_and_exit_2(keys: FakeAPI, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.md").write_text("# runs", encoding="utf-8")
    a_file = tmp_path / "run.json"
    a_file.write_text("{}", encoding="utf-8")
    for folder, words in ((empty, "no cassettes in"), (a_file, "is not a folder"),
                          (tmp_path / "missing", "is not a folder")):
        code, _, err = run_cli(capsys, "migrate", folder, "--model", "gpt-5.1")
        assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    code, _, err = run_cli(capsys, "migrate", empty, "--model", "llama-3")
    assert code == 2 and "cannot tell the provider from 'llama-3'" in err
    code, out, _ = run_cli(capsys, "migrate", empty, "--model", "gpt-5.1", "--json")
    assert code == 2 and "no cassettes in" in json.loads(out)["error"]
    assert keys.requests == []
