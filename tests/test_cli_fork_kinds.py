"""One command per kind of fork: `blackbox fork` (the agent), `blackbox what-if` (no agent), `blackbox demo fork`
(the demo's), each with only its own options in its help; the older forms (`fork` with no agent command forks the
demo, as the TypeScript Blackbox's does; `fork --model-only`) keep working, hidden from `fork --help`, and an
option of another kind is one line naming the command it belongs to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blackbox.cli import app
from blackbox.demo.clock import frozen
from blackbox.demo.scenarios import record_success
from blackbox.format.cassette import load, save
from blackbox.format.verify import verify

runner = CliRunner()
NO_HOTELS = json.dumps({"results": [], "available": False, "message": "Closed."})
REPLIES = '[{"type": "final_answer", "text": "Nothing to book."}]'

FORK_OWN = ["--at", "--set", "--out", "--live", "--script", "--match", "--pace"]
WHATIF_OWN = ["--at", "--set", "--out", "--live", "--script", "--provider", "--model", "--tool-results"]
DEMO_OWN = ["--trace", "--out", "--fork-index", "--mutation-step", "--payload-json", "--mode", "--prompt"]
ALL = sorted(set(FORK_OWN + WHATIF_OWN + DEMO_OWN + ["--model-only"]))


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    path = tmp_path / "parent.json"
    save(record_success(clock=frozen(0)), path)
    return path


def _help(*args: str) -> str:
    """The help as a user's process prints it (the light path builds only that command)."""
    done = subprocess.run([sys.executable, "-m", "blackbox", *args, "--help"], capture_output=True, text=True,
                          env={"COLUMNS": "200", "NO_COLOR": "1", "PATH": ""}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _options(text: str) -> set[str]:
    return {flag for flag in ALL if f" {flag} " in text or f" {flag}\n" in text}


@pytest.mark.parametrize(("command", "own"), [(["fork"], FORK_OWN), (["what-if"], WHATIF_OWN),
                                              (["demo", "fork"], DEMO_OWN)])
def test_each_help_shows_only_its_own_options(command: list[str], own: list[str]) -> None:
    text = _help(*command)
    assert _options(text) == set(own), text
    full = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert full.exit_code == 0 and _options(full.stdout) == set(own)


def test_the_helps_point_at_each_other_and_the_root_lists_what_if() -> None:
    assert "blackbox what-if" in _help("fork") and "blackbox demo fork" in _help("fork")
    assert "blackbox fork" in _help("what-if")
    demo = _help("demo")
    assert "--scenario" in demo and " fork " in demo
    root = subprocess.run([sys.executable, "-m", "blackbox", "--help"], capture_output=True, text=True,
                          env={"COLUMNS": "200", "NO_COLOR": "1", "PATH": ""}, timeout=120).stdout
    assert "what-if" in root and "Blackbox continues the conversation itself" in root


def test_demo_fork_and_the_older_form_write_the_same_fork(parent: Path, tmp_path: Path) -> None:
    new = runner.invoke(app, ["demo", "fork", "--trace", str(parent), "--out", str(tmp_path / "new.json"),
                              "--payload-json", NO_HOTELS])
    old = runner.invoke(app, ["fork", "--trace", str(parent), "--out", str(tmp_path / "old.json"),
                              "--payload-json", NO_HOTELS])
    assert new.exit_code == old.exit_code == 0, new.stderr + old.stderr
    assert new.stderr == old.stderr == ""
    a, b = load(tmp_path / "new.json"), load(tmp_path / "old.json")
    assert verify(a).ok and [s.payload for s in a.steps] == [s.payload for s in b.steps]
    assert "Closed." in a.steps[5].payload["text"]


def test_demo_fork_with_no_options_and_fork_with_no_arguments_fork_the_demo(tmp_path: Path) -> None:
    assert runner.invoke(app, ["demo", "--out-dir", str(tmp_path / "traces")]).exit_code == 0
    for args, name in ((["demo", "fork"], "example-run-001-fork.json"), (["fork", "--out", "traces/old.json"],
                                                                         "old.json")):
        done = subprocess.run([sys.executable, "-m", "blackbox", *args], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Fork index:   4" in done.stdout and verify(load(tmp_path / "traces" / name)).ok


def test_what_if_and_the_older_form_write_the_same_fork_and_only_the_older_says_so(parent: Path,
                                                                                   tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(REPLIES, encoding="utf-8")
    common = [str(parent), "--at", "3", "--set", NO_HOTELS, "--script", str(replies)]
    new = runner.invoke(app, ["what-if", *common, "--out", str(tmp_path / "new.json")])
    old = runner.invoke(app, ["fork", *common, "--out", str(tmp_path / "old.json"), "--model-only"])
    assert new.exit_code == old.exit_code == 0, new.stderr + old.stderr
    assert "without the agent: 7 steps, success" in new.stdout and new.stderr == ""
    assert old.stderr.strip() == ("note: `blackbox fork --model-only` is now `blackbox what-if` (the same "
                                  "options); this form keeps working")
    a, b = load(tmp_path / "new.json"), load(tmp_path / "old.json")
    assert verify(a).ok and [s.payload for s in a.steps] == [s.payload for s in b.steps]


@pytest.mark.parametrize(("args", "line"), [
    (["fork", "{parent}", "--at", "3", "--set", "1", "--out", "{out}", "--live", "--provider", "openai", "--",
      "python", "a.py"], "--provider is not an option of the agent's fork; it belongs to `blackbox what-if`"),
    (["fork", "{parent}", "--at", "3", "--set", "1", "--out", "{out}", "--live", "--fork-index", "2", "--",
      "python", "a.py"], "--fork-index is not an option of the agent's fork; it belongs to `blackbox demo fork`"),
    (["fork", "{parent}", "--at", "3", "--set", "1", "--out", "{out}", "--model-only", "--script", "r.json",
      "--trace", "{parent}"], "--trace is not an option of the what-if (fork --model-only); it belongs to "
                              "`blackbox demo fork`"),
    (["fork", "{parent}", "--at", "3", "--set", "1", "--out", "{out}", "--model-only", "--script", "r.json", "--",
      "python", "a.py"], "the what-if (fork --model-only) runs no agent: drop the command after `--`"),
    (["fork", "{parent}", "--at", "3", "--set", "1", "--out", "{out}", "--live"],
     "the agent's fork needs its command after `--`"),
    (["what-if", "{parent}", "--at", "3", "--out", "{out}", "--live"],
     "what-if needs a cassette, --at N, --set VALUE and --out FILE"),
    (["what-if", "{parent}", "--at", "3", "--set", "1", "--out", "{out}", "--live", "--", "python", "a.py"],
     "Got unexpected extra argument(s) (python a.py); see `blackbox what-if --help`"),
    (["demo", "fork", "--trace", "{parent}", "--at", "3"], "No such option: --at"),
])
def test_an_option_of_another_kind_is_one_line(parent: Path, tmp_path: Path, args: list[str], line: str) -> None:
    out = tmp_path / "out.json"
    argv = [a.format(parent=parent, out=out) for a in args]
    done = subprocess.run([sys.executable, "-m", "blackbox", *argv], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1 and line in lines[0], done.stderr
    assert "Traceback" not in done.stderr and not out.exists()
