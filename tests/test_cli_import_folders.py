"""`blackbox import` of a folder of sessions for every importer that has one: the agent's own folder when `--in`
is left out (listed without `--out`), newest first, `--since`, the tree kept under `--out`, a bar of files on a
terminal, and the rules of a single import (one line, nothing half-written, `--out` never the transcripts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blackbox.cli import app
from blackbox.format.cassette import load
from tests.cli_helpers import invoke, on_terminal
from tests.conftest import FIXTURES
from tests.waiting import HANG_GUARD

IMPORT = FIXTURES / "import"
DAY = 86400


def cli(*args: Any, env: dict[str, Any] | None = None) -> Any:
    result = invoke(app, ["import", *args], env={"ANTHROPIC_API_KEY": None, "OPENAI_API_KEY": None, "NO_COLOR": "1",
                                                 **(env or {})})
    assert "Traceback" not in result.stdout + result.stderr
    return result


def codex_home(tmp_path: Path) -> Path:
    """A $CODEX_HOME with three rollouts on three days (the oldest broken)."""
    home = tmp_path / "codex-home"
    for day, name, source in ((28, "rollout-2026-11-28T09-00-00-aaaa.jsonl", None),
                              (29, "rollout-2026-11-29T10-02-00-bbbb.jsonl", "codex-tax.jsonl"),
                              (30, "rollout-2026-11-30T14-20-00-cccc.jsonl", "codex-long-compacted.jsonl")):
        folder = home / "sessions" / "2026" / "11" / f"{day}"
        folder.mkdir(parents=True)
        path = folder / name
        path.write_bytes((IMPORT / source).read_bytes() if source else b'{"timestamp": "x"\n')
        stamp = 1795996800 + (day - 30) * DAY  # midnight UTC of that day
        os.utime(path, (stamp, stamp))
    (home / "sessions" / "notes.txt").write_text("not a rollout")
    return home


def test_without_in_or_out_the_agents_own_sessions_are_listed_newest_first(tmp_path: Path) -> None:
    home = codex_home(tmp_path)
    res = cli("--from", "codex", env={"CODEX_HOME": str(home)})
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == f"3 codex session(s) in {home / 'sessions'}, newest first:"
    assert [line.split()[-1] for line in lines[1:4]] == [
        "2026/11/30/rollout-2026-11-30T14-20-00-cccc.jsonl", "2026/11/29/rollout-2026-11-29T10-02-00-bbbb.jsonl",
        "2026/11/28/rollout-2026-11-28T09-00-00-aaaa.jsonl"]
    assert "2026-11-30 00:00" in lines[1]
    res = cli("--from", "codex", "--since", "2026-11-29", "--json", env={"CODEX_HOME": str(home)})
    doc = json.loads(res.stdout)
    assert doc["listed"] == 2 and doc["sessions"][0]["file"].endswith("cccc.jsonl")


def test_the_default_folder_imports_into_the_same_tree_past_a_broken_session(tmp_path: Path) -> None:
    home, out = codex_home(tmp_path), tmp_path / "traces"
    res = cli("--from", "codex", "--out", out, env={"CODEX_HOME": str(home)})
    assert res.exit_code == 1  # one session is broken
    assert "FAIL 2026/11/28/rollout-2026-11-28T09-00-00-aaaa.jsonl: line 1: not valid JSON. Nothing was written." \
        in res.stdout
    assert "2 unknown record(s) skipped" in res.stdout
    assert "Imported 2 of 3 session(s)" in res.stdout
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.json"))
    assert written == ["2026/11/29/rollout-2026-11-29T10-02-00-bbbb.json",
                       "2026/11/30/rollout-2026-11-30T14-20-00-cccc.json"]
    assert load(out / written[0]).id == "rollout-2026-11-29T10-02-00-bbbb"
    res = cli("--from", "codex", "--out", tmp_path / "recent", "--since", "2026-11-29T12:00", "--json",
              env={"CODEX_HOME": str(home)})
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["imported"] == 1 and doc["sessions"][0]["skipped"] == {
        "response_item.web_search_call": 1, "world_state": 1}


def test_a_gemini_folder_finds_sessions_below_each_project(tmp_path: Path) -> None:
    chats = tmp_path / "gemini-tmp" / ("ab" * 32) / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2026-11-30T11-40-5b2e9c4a.jsonl").write_bytes((IMPORT / "gemini-tax-rewind.jsonl").read_bytes())
    (chats / "not-a-session.jsonl").write_text("{}")
    out = tmp_path / "out"
    res = cli("--from", "gemini", "--in", tmp_path / "gemini-tmp", "--out", out)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "Imported 1 of 1 session(s)" in res.stdout
    assert (out / ("ab" * 32) / "chats" / "session-2026-11-30T11-40-5b2e9c4a.json").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--from", "chat-json"], "--from chat-json has no session folder; pass the transcript with --in FILE"),
    (["--from", "codex", "--in", "x.jsonl"], "--out is needed: the cassette to write"),
    (["--from", "codex", "--in", "x.jsonl", "--out", "y.json", "--since", "1d"],
     "--since picks sessions from a folder"),
    (["--from", "codex", "--in", ".", "--since", "yesterday"], "--since 'yesterday' is not a date, a time or an age"),
    (["--from", "codex", "--in", ".", "--out", "inside"], "--out inside is inside --in ."),
])
def test_wrong_usage_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
                                            message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.jsonl").write_bytes((IMPORT / "codex-tax.jsonl").read_bytes())
    (tmp_path / "rollout-1.jsonl").write_bytes((IMPORT / "codex-tax.jsonl").read_bytes())
    res = cli(*args)
    assert res.exit_code == 2, res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), res.stderr
    assert not (tmp_path / "inside").exists() and not (tmp_path / "y.json").exists()


def test_a_missing_default_folder_says_where_it_looked(tmp_path: Path) -> None:
    res = cli("--from", "codex", env={"CODEX_HOME": str(tmp_path / "none")})
    assert res.exit_code == 2  # a path that is not there (README, "Exit codes")
    assert res.stderr.strip() == (f"error: {tmp_path / 'none' / 'sessions'}: no such folder; it is where codex keeps "
                                  "its sessions: pass --in FOLDER if yours are elsewhere")


@pytest.mark.parametrize("data", [
    b"\xff\xfe\x00garbage\n",
    b'{"timestamp": "2026-11-30T10:00:00Z", "type": "response_item", "payload": {"type": "function_call", '
    b'"name": ["x"], "arguments": "{}", "call_id": "c"}}\n',
    b'{"timestamp": "2026-11-30T10:00:00Z", "type": "response_item", "payload": {"type": "message", "role": "user", '
    b'"content": 12}}\n',
])
def test_hostile_rollouts_in_a_real_process_give_one_line(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "rollout-bad.jsonl"
    path.write_bytes(data)
    out = tmp_path / "o.json"
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    proc = subprocess.run([sys.executable, "-m", "blackbox", "import", "--from", "codex", "--in", str(path), "--out",
                           str(out)], capture_output=True, text=True, env={**env, "NO_COLOR": "1"}, timeout=HANG_GUARD)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: line 1: ") and lines[0].endswith(
        "Nothing was written."), proc.stderr
    assert not out.exists() and "Traceback" not in proc.stdout + proc.stderr


def test_a_terminal_gets_a_bar_of_sessions_done(tmp_path: Path) -> None:
    home = codex_home(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    code, stdout, seen = on_terminal(["import", "--from", "codex", "--out", tmp_path / "out"],
                                     {**env, "CODEX_HOME": str(home)})
    assert code == 1  # the broken session
    assert b"importing 3 codex sessions" in seen and b"3/3" in seen
    assert b"Imported 2 of 3 session(s)" in stdout and b"Traceback" not in seen + stdout


@pytest.mark.parametrize(("source", "name"), [("codex", "codex-tax.jsonl"), ("gemini", "gemini-tax-rewind.jsonl")])
def test_a_key_from_the_environment_in_a_session_writes_nothing(tmp_path: Path, source: str, name: str) -> None:
    key = "sk-test-agents-0123456789abcdefXYZ"
    path = tmp_path / name
    path.write_text((IMPORT / name).read_text().replace("Find out why and fix it.", f"My key is {key}."))
    out = tmp_path / "out.json"
    res = cli("--from", source, "--in", path, "--out", out, env={"OPENAI_API_KEY": key})
    assert res.exit_code == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "API key" in lines[0] and lines[0].endswith("Nothing was written.")
    assert key not in res.stdout + res.stderr and not out.exists()
    same = cli("--from", source, "--in", path, "--out", path)
    assert same.exit_code == 2 and "--out must differ from --in" in same.stderr
