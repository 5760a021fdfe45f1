"""`blackbox drift` end to end: runs recorded by the real SDKs against the fake API, re-sent live to a fake that
drifts (`tests.fakeapi_drift`): each shape tier with its exit code (a field added: info, exit 0; removed: warning,
exit 3; another type: error, exit 4), a change of behaviour (exit 3), the answering model's change, the runs'
ages, a seeded draw, and bad input as one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from blackbox.format.cassette import load, save
from blackbox.format.verify import verify
from blackbox.many.drift import EXIT_ERROR, EXIT_WARNING, behaviour_of, sample_files
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI, anthropic_message, error_reply, turn_brain, weather_brain
from tests.fakeapi_drift import KEYS, add_field, drifting, drop_field, record_weather, retype_field
from tests.test_cli_json import validate
from tests.test_cli_whatif_providers import record_responses_run

pytest_plugins = ["tests.conftest_fakeapi"]

MODEL = "claude-sonnet-4-6-20261101"


@pytest.fixture
def runs(fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of two recorded runs (Anthropic, Chat Completions); the live keys and base URLs point at the
    fake API, whose brain each test sets for the re-sends."""
    folder = tmp_path / "runs"
    folder.mkdir()
    fake_api.brain = weather_brain("anthropic", model=MODEL)
    record_weather(fake_api, folder / "anthropic.json", "anthropic")
    fake_api.brain = weather_brain("openai")
    record_weather(fake_api, folder / "openai.json", "openai")
    fake_api.reset()
    for name, value in (("ANTHROPIC_API_KEY", KEYS["anthropic"]), ("OPENAI_API_KEY", KEYS["openai"]),
                        ("ANTHROPIC_BASE_URL", fake_api.url), ("OPENAI_BASE_URL", fake_api.openai_url)):
        monkeypatch.setenv(name, value)
    return folder


def only_anthropic(folder: Path) -> Path:
    (folder / "openai.json").unlink()
    return folder


def drift_json(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli(capsys, "drift", *args, "--json")
    assert err == ""
    doc = json.loads(out)
    validate("drift", doc)  # docs/schemas/drift.schema.json
    return code, doc


def findings(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["tier"], f["change"], f["path"]) for run in doc["runs"] for call in run["calls"]
            for f in call["findings"]}


def test_no_drift_re_sends_every_recorded_call_and_exits_0(
        runs: Path, fake_api: FakeAPI, capsys: pytest.CaptureFixture[str]) -> None:
    brains = {"anthropic": weather_brain("anthropic", model=MODEL), "openai": weather_brain("openai")}
    fake_api.brain = lambda body: brains["anthropic" if "max_tokens" in body else "openai"](body)
    code, doc = drift_json(capsys, runs, "--sample", "2", "--live")
    assert code == 0, doc
    assert doc["tier"] == "none" and findings(doc) == set() and doc["findings"] == {"info": 0, "warning": 0,
                                                                                      "error": 0}
    assert [run["api"] for run in doc["runs"]] == ["anthropic", "openai"]
    assert [len(run["calls"]) for run in doc["runs"]] == [2, 2]
    assert all(run["firstDivergence"] is None and run["verdict"] == "no_change" for run in doc["runs"])
    # each recorded request went out again, as the provider's own request (the codec rebuilt it)
    assert fake_api.paths() == ["/v1/messages", "/v1/messages", "/v1/chat/completions", "/v1/chat/completions"]
    assert fake_api.requests[0].header("x-api-key") == KEYS["anthropic"]
    assert fake_api.requests[1].body["messages"][-1]["content"][0]["type"] == "tool_result"


@pytest.mark.parametrize("provider", ["anthropic", "openai", "responses"])
def test_an_unchanged_api_shows_no_shape_findings(provider: str, fake_api: FakeAPI, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The baseline (replay's synthesized answer and the API's documented optional fields) holds every field the
    fake sends as each API does: an unchanged API is no drift, not a page of info."""
    fake_api.brain = weather_brain(provider)
    if provider == "responses":
        record_responses_run(fake_api, tmp_path / "run.json")
    else:
        record_weather(fake_api, tmp_path / "run.json", provider)
    key = KEYS["anthropic" if provider == "anthropic" else "openai"]
    monkeypatch.setenv("ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY", key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_BASE_URL",
                       fake_api.url if provider == "anthropic" else fake_api.openai_url)
    code, doc = drift_json(capsys, tmp_path, "--live")
    assert code == 0 and findings(doc) == set()
    (run,) = doc["runs"]
    assert run["api"] == provider and len(run["calls"]) == 2 and run["verdict"] == "no_change"


def test_a_field_added_is_info_and_exits_0(runs: Path, fake_api: FakeAPI,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.brain = drifting(weather_brain("anthropic", model=MODEL), add_field("usage.reasoning_budget", 7))
    code, doc = drift_json(capsys, only_anthropic(runs), "--live")
    assert code == 0
    assert findings(doc) == {("info", "added", "$.usage.reasoning_budget")}
    assert doc["tier"] == "info" and doc["findings"]["info"] == 1


def test_a_field_removed_is_a_warning_and_exits_3(runs: Path, fake_api: FakeAPI,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.brain = drifting(weather_brain("anthropic", model=MODEL), drop_field("stop_sequence"))
    code, doc = drift_json(capsys, only_anthropic(runs), "--live")
    assert code == EXIT_WARNING == 3
    assert findings(doc) == {("warning", "removed", "$.stop_sequence")}


def test_a_type_changed_is_an_error_and_exits_4(runs: Path, fake_api: FakeAPI,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.brain = drifting(weather_brain("anthropic", model=MODEL), retype_field("usage.output_tokens", str),
                              add_field("novel", True))
    code, doc = drift_json(capsys, only_anthropic(runs), "--live")
    assert code == EXIT_ERROR == 4
    assert findings(doc) == {("error", "type", "$.usage.output_tokens"), ("info", "added", "$.novel")}
    (run,) = doc["runs"]
    assert run["tier"] == "error" and run["firstDivergence"] is None  # the shape moved; the behaviour did not


def test_the_documented_optional_fields_are_no_drift(runs: Path, fake_api: FakeAPI,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Replay's chat completion has `refusal` and `annotations`, which the API may leave out: absent, they are
    no removed field (the real SDK samples leave them out)."""
    (runs / "anthropic.json").unlink()
    fake_api.brain = drifting(weather_brain("openai"), drop_field("choices.0.message.refusal"),
                              drop_field("choices.0.message.annotations"))
    code, doc = drift_json(capsys, runs, "--live")
    assert code == 0 and findings(doc) == set()
    assert [len(run["calls"]) for run in doc["runs"]] == [2]


def test_a_change_of_behaviour_is_a_warning_with_diffs_verdict(runs: Path, fake_api: FakeAPI,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The model now answers at once instead of calling the tool: the first call diverges, the path changed."""
    fake_api.brain = turn_brain([anthropic_message(text="It is sunny.", model=MODEL)] * 2)
    code, doc = drift_json(capsys, only_anthropic(runs), "--live")
    assert code == EXIT_WARNING
    (run,) = doc["runs"]
    assert run["firstDivergence"] == 0 and run["tier"] == "warning"
    assert findings(doc) == set()  # a text block where a tool_use was is behaviour, not a removed field
    assert run["calls"][0]["recorded"]["tools"] == ["get_weather"] and run["calls"][0]["live"]["tools"] == []
    assert run["verdict"] == "path_changed"
    code, out, _ = run_cli(capsys, "drift", runs, "--live")
    assert code == EXIT_WARNING
    assert "behaviour: call 1 of 2 (step 1) differs: tool_calls get_weather → final_answer" in out


def test_the_answering_model_and_the_age_are_reported(runs: Path, fake_api: FakeAPI,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = only_anthropic(runs) / "anthropic.json"
    cassette = load(path)
    assert cassette.made is not None
    forty_days = cassette.made.at - 40 * 86_400_000
    cassette.made = msgspec.structs.replace(cassette.made, at=forty_days)  # unhashed: the run still verifies
    save(cassette, path)
    assert verify(load(path)).ok
    fake_api.brain = weather_brain("anthropic", model="claude-sonnet-4-7")
    code, doc = drift_json(capsys, runs, "--live")
    (run,) = doc["runs"]
    assert code == 0 and 40 <= run["ageDays"] < 40.1 and run["madeAt"] == forty_days
    assert run["modelsChanged"] == [{"recorded": MODEL, "now": "claude-sonnet-4-7"}]
    code, out, _ = run_cli(capsys, "drift", runs, "--live")
    assert f"model: recorded {MODEL}, answers now as claude-sonnet-4-7" in out
    assert "40 days old" in out


def test_without_live_nothing_is_sent_and_ages_are_shown(runs: Path, fake_api: FakeAPI,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    cassette = load(runs / "openai.json")
    cassette.made = None  # a file from before `made`: its createdAt says its age
    cassette.createdAt -= 3 * 86_400_000
    save(cassette, runs / "openai.json")
    code, doc = drift_json(capsys, runs, "--sample", "5")
    assert code == 0 and fake_api.requests == [] and doc["live"] is False
    ages = {run["file"]: run["ageDays"] for run in doc["runs"]}
    assert ages["anthropic.json"] < 0.1 and 3 <= ages["openai.json"] < 3.1
    made = {run["file"]: run["madeWith"] for run in doc["runs"]}
    assert made["openai.json"] is None and "blackbox " in made["anthropic.json"]


def test_the_markdown_report_has_a_row_per_run(runs: Path, fake_api: FakeAPI,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.brain = drifting(weather_brain("anthropic", model=MODEL), drop_field("stop_sequence"))
    code, out, _ = run_cli(capsys, "drift", only_anthropic(runs), "--live", "--format", "markdown")
    assert code == EXIT_WARNING
    assert "| run | age (days) |" in out and "| `anthropic.json` |" in out
    assert "warning: `$.stop_sequence: removed (null)`" in out


def test_a_refused_call_and_a_file_that_is_no_cassette_exit_1(runs: Path, fake_api: FakeAPI,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (runs / "openai.json").write_text("{not json")
    fake_api.queue(error_reply("anthropic", 400))
    code, doc = drift_json(capsys, runs, "--live")
    assert code == 1
    problems = {run["file"]: run["problem"] for run in doc["runs"]}
    assert problems["openai.json"].startswith("not a cassette (")
    assert problems["anthropic.json"].startswith("step 0: the Anthropic Messages API answered 400")


def test_an_answer_the_codec_cannot_read_is_an_error(runs: Path, fake_api: FakeAPI,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.brain = drifting(weather_brain("anthropic", model=MODEL), add_field("container", {"id": "c1"}))
    code, doc = drift_json(capsys, only_anthropic(runs), "--live")
    assert code == EXIT_ERROR
    assert ("error", "unreadable", "$") in findings(doc)


def test_the_draw_is_seeded(tmp_path: Path) -> None:
    for n in range(10):
        (tmp_path / f"run{n}.json").write_text("{}")
    first, total = sample_files(tmp_path, 3, seed=7)
    assert total == 10 and len(first) == 3 and first == sample_files(tmp_path, 3, seed=7)[0]
    assert any(sample_files(tmp_path, 3, seed=s)[0] != first for s in range(8, 12))
    assert len(sample_files(tmp_path, 50, seed=1)[0]) == 10


def test_behaviour_compares_classes_not_words() -> None:
    a = behaviour_of({"type": "final_answer", "text": "Sunny."})
    assert a == behaviour_of({"type": "final_answer", "text": "Rainy, then sunny."})
    assert a != behaviour_of({"type": "final_answer", "text": '{"weather": "sunny"}'})
    assert a != behaviour_of({"type": "final_answer", "text": "Sun", "stop": "length"})
    calls = {"type": "tool_calls", "calls": [{"toolCallId": "call-0", "toolName": "w", "toolInput": {"city": "P"}}]}
    other = {"type": "tool_calls", "calls": [{"toolCallId": "call-0", "toolName": "w", "toolInput": {"town": "P"}}]}
    assert behaviour_of(calls) != behaviour_of(other)


@pytest.mark.parametrize(("args", "says"), [
    (["{missing}", "--live"], "no such folder"),
    (["{file}", "--live"], "is a file, not a folder"),
    (["{dir}", "--sample", "0"], "--sample"),
    (["{dir}", "--json", "--format", "markdown"], "--json and --format markdown disagree"),
    (["{dir}", "--live", "--provider", "nope"], "unknown provider"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], says: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("x")
    filled = [a.format(missing=tmp_path / "nope", file=tmp_path / "a-file", dir=tmp_path) for a in args]
    code, _, err = run_cli(capsys, "drift", *filled)
    assert code == 2 and says in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1
    code, out, _ = run_cli(capsys, "drift", *filled, *([] if "--json" in filled else ["--json"]))
    assert code == 2 and json.loads(out)["exitCode"] == 2  # the error document: stdout holds one document


def test_a_missing_key_is_said_before_anything_is_sent(runs: Path, fake_api: FakeAPI,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code, out, err = run_cli(capsys, "drift", only_anthropic(runs), "--live")
    assert code == 2 and "ANTHROPIC_API_KEY" in err and "is not set" in err and out == ""
    assert fake_api.requests == []
    assert KEYS["anthropic"] not in err


def test_shape_rules_null_matches_any_type_and_nothing_below_an_added_field_is_reported() -> None:
    from blackbox.many.shapes import compare_shapes, shape_of

    recorded = shape_of({"stop_sequence": None, "usage": {"n": 1},
                         "content": [{"type": "tool_use", "input": {"a": 1}}]})
    live = shape_of({"stop_sequence": "END", "usage": {"n": 1, "extra": {"deep": {"deeper": 1}}},
                     "content": [{"type": "tool_use", "input": {"b": "x"}}]})
    assert [(f.change, f.path) for f in compare_shapes(recorded, live)] == [("added", "$.usage.extra")]
    moved = shape_of({"stop_sequence": None, "usage": [1], "content": []})
    assert [(f.tier, f.path) for f in compare_shapes(recorded, moved)] == [("error", "$.usage")]
