"""`blackbox diff` of two separate recordings of one run: the hashes differ from step 0 on because the hash covers
each step's time, not because anything the agent or the model did changed.  The report says so (as the UI's diff
does), in text, Markdown and JSON, instead of showing a "changed" value equal on both sides."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from blackbox.format.cassette import StepChain, load, save
from tests.conftest import FIXTURES
from tests.test_cli_json import validate
from tests.waiting import HANG_GUARD

INCIDENT = FIXTURES / "fleet-triage" / "cassettes" / "triage-incident.json"
SHIFT = 2_009  # ms: the second recording started this much later


def blackbox(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real command, as a user runs it (the light dispatcher takes simple diffs)."""
    return subprocess.run([sys.executable, "-m", "blackbox", *map(str, args)], capture_output=True, text=True,
                          timeout=HANG_GUARD, stdin=subprocess.DEVNULL, env={"NO_COLOR": "1", "PATH": ""})


def recorded_again(tmp_path: Path, late_from: int = 0) -> Path:
    """The incident run recorded again: every step the same, those from `late_from` on `SHIFT` ms later."""
    first = load(INCIDENT)
    chain = StepChain(first.id)
    for step in first.steps:
        chain.append(step.type, step.timestamp + (SHIFT if step.index >= late_from else 0), step.payload)
    again = tmp_path / "again.json"
    save(chain.cassette(first.createdAt), again)
    return again


@pytest.fixture
def recordings(tmp_path: Path) -> tuple[Path, Path]:
    return INCIDENT, recorded_again(tmp_path)


def test_text_says_only_the_time_differs_and_shows_no_equal_change(recordings: tuple[Path, Path]) -> None:
    result = blackbox("diff", *recordings)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "first divergence at step 0" in out
    assert ("same type and payload, different hash: only the time differs (2026-09-29 09:05:01.050 UTC → "
            "2026-09-29 09:05:03.059 UTC); nothing in this step changed") in out
    assert "compare them with --semantic" in out
    assert "changed " not in out  # no "changed result: X → X", no changed fields: nothing changed
    semantic = blackbox("diff", *recordings, "--semantic")
    assert "no divergence" in semantic.stdout  # what the note advises finds the runs identical


def test_a_tool_result_that_only_came_later_shows_no_changed_result(tmp_path: Path) -> None:
    """The diverging step is a tool result whose result is the same: no "changed result: X → X" line."""
    again = recorded_again(tmp_path, late_from=3)
    out = blackbox("diff", INCIDENT, again).stdout
    assert "first divergence at step 3" in out and "#3 tool_result" in out
    assert "only the time differs" in out and "changed " not in out
    assert json.loads(blackbox("diff", INCIDENT, again, "--json").stdout)["changedValue"] is None


def test_markdown_says_so_too(recordings: tuple[Path, Path]) -> None:
    result = blackbox("diff", *recordings, "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert "**Same payload:** same type and payload, different hash: only the time differs" in result.stdout
    assert "**Changed" not in result.stdout


def test_json_marks_the_same_payload_and_carries_both_times(recordings: tuple[Path, Path]) -> None:
    result = blackbox("diff", *recordings, "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    validate("diff", doc)
    assert doc["firstDivergence"] == 0 and doc["samePayload"] is True
    assert doc["changedValue"] is None and doc["changedFields"] == []
    assert doc["stepB"]["timestamp"] - doc["stepA"]["timestamp"] == SHIFT


def test_a_real_change_is_no_same_payload(tmp_path: Path) -> None:
    """A fork and its parent: the diverging step's value changed, and the report shows it as before."""
    parent, child = FIXTURES / "traces" / "fork-parent.v2.json", FIXTURES / "traces" / "fork-child.v2.json"
    text = blackbox("diff", parent, child).stdout
    assert "only the time differs" not in text and "changed result:" in text
    doc = json.loads(blackbox("diff", parent, child, "--json").stdout)
    assert doc["samePayload"] is False and doc["changedValue"]["key"] == "result"
