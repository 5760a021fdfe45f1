"""`blackbox import` end to end: written bytes, the summary, exit codes, one-line errors, nothing half-written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blackbox.cli import app
from blackbox.format.cassette import load
from tests.cli_helpers import on_terminal
from tests.conftest import FIXTURES
from tests.test_import_claude_code import assistant, result, text, use, user, write
from tests.waiting import HANG_GUARD

CLAUDE_FIXTURE = FIXTURES / "import/claude-code-session.jsonl"
KEY = "sk-test-0123456789abcdefXYZ"
NO_KEYS = {"ANTHROPIC_API_KEY": None, "OPENAI_API_KEY": None, "NO_COLOR": "1"}


def invoke(*args: str, env: dict[str, Any] | None = None) -> Any:
    result = CliRunner().invoke(app, ["import", *map(str, args)], env={**NO_KEYS, **(env or {})})
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def one_error_line(result: Any) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def session(tmp_path: Path, name: str = "session.jsonl", answer: str = "Done.") -> Path:
    return write(tmp_path, [
        user("Please list the files", 0),
        assistant("m1", [text("Listing."), use("t-1", "Bash", {"command": "ls"})], 1),
        result("t-1", "a.py\nb.py", 2),
        assistant("m2", [text(answer)], 3),
    ], name)


def test_chat_json_fixture_writes_the_originals_bytes(tmp_path: Path) -> None:
    out = tmp_path / "chat.json"
    res = invoke("--from", "chat-json", "--in", FIXTURES / "external/chat-tool-use.foreign.json", "--out", out,
                 "--id", "external-chat-tool-use")
    assert res.exit_code == 0, res.stderr
    assert out.read_bytes() == (FIXTURES / "external/chat-tool-use.converted.v2.json").read_bytes()
    assert "chat-json" in res.stdout
    assert "steps   11" in res.stdout
    assert "status  success" in res.stdout
    assert "tools   get_weather → send_email" in res.stdout


def test_claude_code_fixture_writes_the_originals_bytes(tmp_path: Path) -> None:
    out = tmp_path / "cc.json"
    res = invoke("--from", "claude-code", "--in", CLAUDE_FIXTURE, "--out", out, "--id", "claude-code-fixture")
    assert res.exit_code == 0, res.stderr
    assert out.read_bytes() == (FIXTURES / "import/claude-code-session.expected.json").read_bytes()
    assert f"claude-code ({CLAUDE_FIXTURE})" in res.stdout
    assert "steps   9" in res.stdout
    assert "tools   Read → Bash" in res.stdout
    assert res.stderr == ""  # no progress bar when stderr is not a terminal


def test_default_id_is_the_transcripts_name_so_two_sessions_never_share_one(tmp_path: Path) -> None:
    """Issue 30: every import was `imported`.  The id is the transcript file's name (a Claude Code session file is
    named by its session id, a Codex rollout and a Gemini CLI log by their start time and id), as a folder
    import names each cassette; the same file gives the same id, whatever the --out name."""
    sessions = {"claude-code": CLAUDE_FIXTURE,
                "codex": FIXTURES / "import/codex-tax.jsonl", "gemini": FIXTURES / "import/gemini-tax-rewind.jsonl"}
    rollout = tmp_path / "rollout-2026-11-30T10-02-00-019acb41-7e2a-7c11-9d6e-0b1f5e7a2c90.jsonl"
    rollout.write_bytes(sessions["codex"].read_bytes())
    gemini_log = tmp_path / "session-2026-11-30T11-40-5b2e9c4a.jsonl"
    gemini_log.write_bytes(sessions["gemini"].read_bytes())
    ids = {}
    for source, path in (("codex", rollout), ("gemini", gemini_log), ("claude-code", CLAUDE_FIXTURE)):
        for n in (1, 2):
            out = tmp_path / f"whatever-name-{source}-{n}.json"
            assert invoke("--from", source, "--in", path, "--out", out).exit_code == 0
            cassette = load(out)
            assert cassette.steps[0].id == f"{cassette.id}:0"
            ids.setdefault(source, set()).add(cassette.id)
    assert ids == {"codex": {rollout.stem}, "gemini": {gemini_log.stem}, "claude-code": {"claude-code-session"}}
    assert invoke("--from", "codex", "--in", rollout, "--out", tmp_path / "named.json", "--id", "mine").exit_code == 0
    assert load(tmp_path / "named.json").id == "mine"


def test_an_incomplete_session_imports_as_incomplete(tmp_path: Path) -> None:
    path = write(tmp_path, [user("Go", 0), assistant("m1", [use("t-1", "Bash", {"command": "sleep"})], 1)])
    res = invoke("--from", "claude-code", "--in", path, "--out", tmp_path / "out.json")
    assert res.exit_code == 0
    assert "status  incomplete" in res.stdout


@pytest.mark.parametrize("args", [
    ["--from", "cursor", "--in", "x.jsonl", "--out", "y.json"],
    ["--from", "chat-json", "--in", ".", "--out", "y"],
    ["--from", "claude-code", "--in", ".", "--out", "y", "--id", "one"],
    ["--from", "claude-code", "--in", "x.jsonl", "--out", "y.json", "--id", ""],
])
def test_wrong_usage_exits_2_with_one_line(tmp_path: Path, args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.jsonl").write_text("")
    res = invoke(*args)
    assert res.exit_code == 2
    one_error_line(res)


def test_missing_input_exits_2(tmp_path: Path) -> None:
    res = invoke("--from", "claude-code", "--in", tmp_path / "nope.jsonl", "--out", tmp_path / "o.json")
    assert res.exit_code == 2
    assert "no such file" in one_error_line(res)


def test_bad_line_names_the_line_writes_nothing_and_keeps_an_existing_file(tmp_path: Path) -> None:
    path = write(tmp_path, [user("Go", 0), '{"type": "user", "message": "top-secret-words"'])
    out = tmp_path / "out.json"
    out.write_text("previous")
    res = invoke("--from", "claude-code", "--in", path, "--out", out)
    assert res.exit_code == 1
    line = one_error_line(res)
    assert "line 2: not valid JSON" in line
    assert line.endswith("Nothing was written.")
    assert "top-secret-words" not in res.stdout + res.stderr
    assert out.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.json")] == []


def test_chat_json_error_names_the_position(tmp_path: Path) -> None:
    document = json.loads((FIXTURES / "external/chat-tool-use.foreign.json").read_text())
    document["messages"][3]["tool_calls"][0]["function"]["arguments"] = "{not json: top-secret-words"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    res = invoke("--from", "chat-json", "--in", path, "--out", tmp_path / "o.json")
    assert res.exit_code == 1
    line = one_error_line(res)
    assert "messages[3].tool_calls[0].function.arguments is not valid JSON" in line
    assert "top-secret-words" not in line
    assert not (tmp_path / "o.json").exists()


def test_an_api_key_from_the_environment_in_the_transcript_writes_nothing(tmp_path: Path) -> None:
    path = session(tmp_path, answer=f"Your key is {KEY}, keep it safe.")
    out = tmp_path / "out.json"
    res = invoke("--from", "claude-code", "--in", path, "--out", out, env={"OPENAI_API_KEY": KEY})
    assert res.exit_code == 1
    line = one_error_line(res)
    assert "API key" in line and line.endswith("Nothing was written.")
    assert KEY not in res.stdout + res.stderr
    assert not out.exists()
    # Without the key in the environment, the same text is ordinary user data and imports.
    assert invoke("--from", "claude-code", "--in", path, "--out", out).exit_code == 0


def test_a_realistic_credential_fails_verify_and_writes_nothing(tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "A" * 40
    path = session(tmp_path, answer=f"found {secret}")
    out = tmp_path / "out.json"
    res = invoke("--from", "claude-code", "--in", path, "--out", out)
    assert res.exit_code == 1
    line = one_error_line(res)
    assert "fails verify" in line and secret not in line
    assert not out.exists()


def test_a_project_folder_imports_each_session_past_broken_ones(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    session(project, "aaa-111.jsonl")
    session(project, "ccc-333.jsonl", answer="Other answer.")
    write(project, [user("Go", 0), "{broken"], "bbb-222.jsonl")
    (project / "notes.txt").write_text("not a session")
    out_dir = tmp_path / "traces"
    res = invoke("--from", "claude-code", "--in", project, "--out", out_dir)
    assert res.exit_code == 1
    assert sorted(p.name for p in out_dir.iterdir()) == ["aaa-111.json", "ccc-333.json"]
    assert load(out_dir / "aaa-111.json").id == "aaa-111"
    assert "bbb-222.jsonl: line 2: not valid JSON" in res.stdout
    assert "Imported 2 of 3 session(s)" in res.stdout
    assert "1 failed" in res.stdout
    listing = CliRunner().invoke(app, ["list", str(out_dir)], env=NO_KEYS)
    assert listing.exit_code == 0
    assert "aaa-111" in listing.stdout and "ccc-333" in listing.stdout
    assert "2 valid" in listing.stdout


def test_a_folder_of_good_sessions_exits_0(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    session(tmp_path / "p", "one.jsonl")
    res = invoke("--from", "claude-code", "--in", tmp_path / "p", "--out", tmp_path / "out")
    assert res.exit_code == 0
    assert "Imported 1 of 1 session(s)" in res.stdout


def test_an_empty_folder_exits_1(tmp_path: Path) -> None:
    res = invoke("--from", "claude-code", "--in", tmp_path, "--out", tmp_path / "out")
    assert res.exit_code == 1
    assert "no *.jsonl session files" in one_error_line(res)


def test_subprocess_bad_input_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, [user("Go", 0), {"type": "assistant", "message": {"content": []}}])
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    proc = subprocess.run(
        [sys.executable, "-m", "blackbox", "import", "--from", "claude-code", "--in", str(path),
         "--out", str(tmp_path / "o.json")],
        capture_output=True, text=True, env={**env, "NO_COLOR": "1"}, timeout=HANG_GUARD,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"error: {path}: line 2: `timestamp` is missing or not an ISO time. "
                                   "Nothing was written.")
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_terminal_gets_a_progress_bar_by_bytes_read(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    code, _, seen = on_terminal(["import", "--from", "claude-code", "--in", CLAUDE_FIXTURE, "--out",
                                 tmp_path / "o.json"], env)
    assert code == 0
    size = CLAUDE_FIXTURE.stat().st_size
    assert b"reading claude-code-session.jsonl" in seen
    assert b"verifying and writing o.json" in seen
    assert f"{size / 1000:.1f}/{size / 1000:.1f} kB".encode() in seen
    assert b"Traceback" not in seen


def test_a_long_tool_path_shows_its_start_and_end(tmp_path: Path) -> None:
    lines: list[Any] = [user("Go", 0)]
    for i in range(30):
        lines += [assistant(f"m{i}", [use(f"t-{i}", f"Tool{i}", {})], 1), result(f"t-{i}", "ok", 2)]
    lines.append(assistant("end", [text("done")], 3))
    res = invoke("--from", "claude-code", "--in", write(tmp_path, lines), "--out", tmp_path / "o.json")
    assert res.exit_code == 0
    assert "tools   Tool0 → Tool1 → " in res.stdout
    assert "→ Tool8 → … 18 more … → Tool27 → Tool28 → Tool29" in res.stdout
