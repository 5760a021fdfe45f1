"""What a cassette says of its making, shown (docs/format.md, "Origin"): `inspect` and `list` print when and with
what a run was made and the model that answered in place of the requested one, `--json` carries both; `redact`
(and so a recovery under a policy) keeps the run's `made`."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from blackbox.format.cassette import load, save
from blackbox.format.inert import inert
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI, weather_brain
from tests.fakeapi_drift import record_weather

pytest_plugins = ["tests.conftest_fakeapi"]

ANSWERED = "claude-sonnet-4-6-20261101"  # the agent asks for claude-sonnet-4-6


@pytest.fixture
def run(fake_api: FakeAPI, tmp_path: Path) -> Path:
    fake_api.brain = weather_brain("anthropic", model=ANSWERED)
    out = tmp_path / "runs" / "weather.json"
    out.parent.mkdir()
    record_weather(fake_api, out, "anthropic")
    return out


def test_inspect_shows_the_making_and_the_answering_model(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    made = load(run).made
    assert made is not None and made.packages is not None
    code, out, _ = run_cli(capsys, "inspect", run)
    assert code == 0
    made_line = next(line for line in out.splitlines() if line.startswith("made:"))
    assert f"blackbox {made.blackbox}" in made_line and f"anthropic {made.packages['anthropic']}" in made_line
    assert "model:   requested claude-sonnet-4-6, answered by claude-sonnet-4-6-20261101 (2 calls)" in out
    code, out, _ = run_cli(capsys, "inspect", run, "--json")
    doc = json.loads(out)
    assert doc["made"]["at"] == made.at and doc["made"]["packages"] == made.packages
    assert doc["models"] == [{"requested": "claude-sonnet-4-6", "answered": ANSWERED, "calls": 2, "differs": True}]


def test_the_same_model_is_not_called_a_change(fake_api: FakeAPI, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.brain = weather_brain("anthropic", model="claude-sonnet-4-6")
    record_weather(fake_api, tmp_path / "same.json", "anthropic")
    code, out, _ = run_cli(capsys, "inspect", tmp_path / "same.json")
    assert code == 0 and "model:" not in out and "answered by" not in out


def test_a_file_without_made_says_so(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassette = load(run)
    cassette.made = None
    save(cassette, run)
    code, out, _ = run_cli(capsys, "inspect", run)
    assert code == 0 and "made:    not recorded" in out
    code, out, _ = run_cli(capsys, "inspect", run, "--json")
    assert json.loads(out)["made"] is None


def test_list_has_the_made_and_answered_by_columns(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    made = load(run).made
    assert made is not None
    code, out, _ = run_cli(capsys, "list", run.parent)
    assert code == 0
    header, row = out.splitlines()[:2]
    assert header.split() == ["file", "id", "steps", "status", "created", "parent", "made", "answered", "by"]
    assert f"blackbox {made.blackbox}" in row and f"claude-sonnet-4-6→{ANSWERED}" in row
    code, out, _ = run_cli(capsys, "list", run.parent, "--json")
    (entry,) = json.loads(out)["cassettes"]
    assert entry["made"]["blackbox"] == made.blackbox and entry["models"][0]["answered"] == ANSWERED


def test_a_hostile_model_name_is_made_inert(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassette = load(run)
    step = cassette.steps[1]
    assert step.type == "model_output" and step.origin is not None
    cassette.steps[1] = msgspec.structs.replace(step, origin=msgspec.structs.replace(step.origin,
                                                                                      model="evil\x1b[31mred"))
    save(cassette, run)
    code, out, _ = run_cli(capsys, "inspect", run)
    assert code == 0 and "\x1b[31m" not in out and inert("evil\x1b[31mred") in out


def test_redact_keeps_the_runs_made(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "redacted.json"
    code, _, err = run_cli(capsys, "redact", run, "--out", out)
    assert code == 0, err
    assert load(out).made == load(run).made is not None
