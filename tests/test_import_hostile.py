"""Issue 30 through the real `blackbox import`, for every importer: a key of the environment, whole or any
20-character piece of it, also split by line ends, spaces, zero-width characters or JSON escapes, is never
written; a transcript nested deeper than any reader goes is one line and exit 2, never a RecursionError; JSON
that cannot be read is reported as what it is (deep, not UTF-8, a number of 5,000 digits), not "truncated?"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import load
from fuzz.planted import PLANTED_KEY, SENTENCES, holds_key_piece, key_forms, near_misses, planted
from tests.conftest import FIXTURES
from tests.test_cli_import import invoke, one_error_line
from tests.waiting import HANG_GUARD

#: (--from, fixture, its file name when imported): one transcript per importer, and Gemini's older document.
TRANSCRIPTS = [
    ("claude-code", "import/claude-code-tax.jsonl", "3f2a.jsonl"),
    ("codex", "import/codex-tax.jsonl", "rollout-2026-11-30T10-02-00-019acb41.jsonl"),
    ("gemini", "import/gemini-tax-rewind.jsonl", "session-2026-11-30T11-40-5b2e9c4a.jsonl"),
    ("gemini", "import/gemini-checkpoint.foreign.json", "session-checkpoint.json"),
    ("chat-json", "external/chat-tool-use.foreign.json", "chat.json"),
    ("otel", "import/otel-weather.foreign.json", "trace.json"),
]
KEY_ENV = {"OPENAI_API_KEY": PLANTED_KEY}


def transcript(tmp_path: Path, fixture: str, name: str, value: str | None = None) -> Path:
    """The fixture as `name`, with its sentence (`planted.SENTENCES`) replaced by `value`."""
    data = (FIXTURES / fixture).read_bytes()
    if value is not None:
        sentence, levels = SENTENCES[fixture]
        data = planted(data, sentence, value, levels)
    path = tmp_path / name
    path.write_bytes(data)
    return path


def shown(result: Any) -> bytes:
    return json.dumps(result.stdout + result.stderr).encode()


# ---------------------------------------------------------------------------------------------------------
# key pieces


@pytest.mark.parametrize(("form", "value"), key_forms())
@pytest.mark.parametrize(("source", "fixture", "name"), TRANSCRIPTS)
def test_a_key_or_a_piece_of_it_is_never_written(tmp_path: Path, source: str, fixture: str, name: str, form: str,
                                                  value: str) -> None:
    path = transcript(tmp_path, fixture, name, value)
    out = tmp_path / "out.json"
    out.write_text("previous")
    res = invoke("--from", source, "--in", path, "--out", out, env=KEY_ENV)
    assert res.exit_code == 1, res.stdout
    line = one_error_line(res)
    assert "API key from the environment, or a piece of one" in line and line.endswith("Nothing was written.")
    assert "of the cassette" in line  # where: the step it would have reached
    assert not holds_key_piece(shown(res))
    assert out.read_text() == "previous"


@pytest.mark.parametrize("value", near_misses())
@pytest.mark.parametrize(("source", "fixture", "name"), TRANSCRIPTS)
def test_pieces_of_19_characters_are_no_key_and_import(tmp_path: Path, source: str, fixture: str, name: str,
                                                       value: str) -> None:
    path = transcript(tmp_path, fixture, name, value)
    out = tmp_path / "out.json"
    res = invoke("--from", source, "--in", path, "--out", out, env=KEY_ENV)
    assert res.exit_code == 0, res.stderr
    assert value.split(" ")[0].replace("\n", "") in out.read_text()


def test_a_folder_imports_the_sessions_without_a_key_and_refuses_the_one_with_a_piece(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "2026" / "11" / "30"
    folder.mkdir(parents=True)
    transcript(folder, "import/codex-tax.jsonl", "rollout-a.jsonl")
    transcript(folder, "import/codex-tax.jsonl", "rollout-b.jsonl", dict(key_forms())["wrapped-every-7"])
    res = invoke("--from", "codex", "--in", tmp_path / "sessions", "--out", tmp_path / "out", env=KEY_ENV)
    assert res.exit_code == 1
    assert "FAIL 2026/11/30/rollout-b.jsonl: the transcript holds an API key from the environment" in res.stdout
    assert "Imported 1 of 2 session(s)" in res.stdout and not holds_key_piece(shown(res))
    assert [p.name for p in (tmp_path / "out/2026/11/30").iterdir()] == ["rollout-a.json"]


# ---------------------------------------------------------------------------------------------------------
# deep nesting


def _deep_line(source: str, depth: int) -> bytes:
    """A transcript of `source` whose second record carries a field nested `depth` arrays deep."""
    fixture = {"claude-code": "import/claude-code-tax.jsonl", "codex": "import/codex-tax.jsonl",
               "gemini": "import/gemini-tax-rewind.jsonl"}[source]
    lines = (FIXTURES / fixture).read_bytes().splitlines()
    lines[1] = lines[1][:-1] + b',"deep":' + b"[" * depth + b"]" * depth + b"}"
    return b"\n".join(lines) + b"\n"


def _deep_document(source: str, depth: int) -> bytes:
    fixture = {"chat-json": "external/chat-tool-use.foreign.json", "otel": "import/otel-weather.foreign.json",
               "gemini": "import/gemini-checkpoint.foreign.json"}[source]
    data = (FIXTURES / fixture).read_bytes().rstrip()
    return data[:-1] + b', "deep": ' + b"[" * depth + b"]" * depth + b"}\n"


def _run(path: Path, source: str, out: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    return subprocess.run([sys.executable, "-m", "blackbox", "import", "--from", source, "--in", str(path), "--out",
                           str(out)], capture_output=True, text=True, env={**env, "NO_COLOR": "1"}, timeout=HANG_GUARD)


@pytest.mark.parametrize(("source", "name", "data"), [
    ("claude-code", "s.jsonl", _deep_line("claude-code", 200_000)),
    ("codex", "rollout-s.jsonl", _deep_line("codex", 200_000)),
    ("gemini", "session-s.jsonl", _deep_line("gemini", 200_000)),
    ("gemini", "session-s.json", _deep_document("gemini", 200_000)),
    ("chat-json", "s.json", _deep_document("chat-json", 200_000)),
    ("otel", "s.json", _deep_document("otel", 200_000)),
], ids=["claude-code", "codex", "gemini", "gemini-document", "chat-json", "otel"])
def test_nesting_past_every_readers_limit_is_one_line_and_exit_2_in_a_real_process(
        tmp_path: Path, source: str, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "o.json"
    proc = _run(path, source, out)
    assert "Traceback" not in proc.stdout + proc.stderr and "RecursionError" not in proc.stderr
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "JSON nested more than 10,000 levels deep at " in lines[0], proc.stderr
    where = "line 2: JSON nested more than 10,000 levels deep at column " if name.endswith(".jsonl") else \
        "JSON nested more than 10,000 levels deep at line "
    assert lines[0].startswith(f"error: {path}: {where}"), lines[0]
    assert lines[0].endswith("remove that part. Nothing was written.") and not out.exists()


@pytest.mark.parametrize("source", ["claude-code", "codex", "gemini"])
def test_a_line_of_5000_nested_arrays_imports_within_the_readers_limit(tmp_path: Path, source: str) -> None:
    """10,000 levels is what every reader of Blackbox reads (docs/format.md, "Depth"), an import too."""
    path = tmp_path / {"claude-code": "s.jsonl", "codex": "rollout-s.jsonl", "gemini": "session-s.jsonl"}[source]
    path.write_bytes(_deep_line(source, 5_000))
    res = invoke("--from", source, "--in", path, "--out", tmp_path / "o.json")
    assert res.exit_code == 0, res.stderr
    assert load(tmp_path / "o.json").steps


def test_a_claude_code_message_of_5000_nested_arrays_imports(tmp_path: Path) -> None:
    lines = (FIXTURES / "import/claude-code-tax.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["message"]["content"] = "@@"
    lines[1] = json.dumps(record).replace('"@@"', "[" * 5_000 + "]" * 5_000)
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = invoke("--from", "claude-code", "--in", path, "--out", tmp_path / "o.json")
    assert res.exit_code == 0, res.stderr
    assert load(tmp_path / "o.json").steps[0].payload["messages"][0]["content"] == "[block omitted]"


def test_a_deep_session_in_a_folder_is_one_failed_line(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "session-deep.jsonl").write_bytes(_deep_line("gemini", 200_000))
    transcript(folder, "import/gemini-tax-rewind.jsonl", "session-good.jsonl")
    res = invoke("--from", "gemini", "--in", folder, "--out", tmp_path / "out")
    assert res.exit_code == 1
    assert "FAIL session-deep.jsonl: line 2: JSON nested more than 10,000 levels deep at column" in res.stdout
    assert "Imported 1 of 2 session(s)" in res.stdout


# ---------------------------------------------------------------------------------------------------------
# what unreadable JSON is called


def _otlp(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "trace.json"
    path.write_bytes(data)
    res = invoke("--from", "otel", "--in", path, "--out", tmp_path / "o.json")
    assert res.exit_code in (1, 2)
    return one_error_line(res).removeprefix(f"error: {path}: ")


def test_otlp_input_is_reported_as_what_is_wrong_where_not_as_truncated(tmp_path: Path) -> None:
    good = (FIXTURES / "import/otel-weather.foreign.json").read_bytes()
    at = good.index(b'"kind"')  # inside the first span: 7 levels deep (the request, resourceSpans, …, the span)
    line, column = good[:at].count(b"\n") + 1, at - good.rfind(b"\n", 0, at)
    deep = good[:at] + b'"deep": ' + b"[" * 20_000 + b"]" * 20_000 + b", " + good[at:]
    first = column + len('"deep": ')  # the first "[", level 8; level 10,001 is the 9,994th
    assert _otlp(tmp_path, deep).startswith(
        f"JSON nested more than 10,000 levels deep at line {line}, column {first + 10_001 - 8}, ")
    assert _otlp(tmp_path, good[:at] + b'"bytes": "\xff\xfe", ' + good[at:]) == (
        f"not UTF-8 text at line {line}, column {column + 10}, so the file is damaged or not an OpenTelemetry "
        "trace file. Nothing was written.")
    assert _otlp(tmp_path, good[:at] + b'"n": ' + b"7" * 5_000 + b", " + good[at:]) == (
        f"a number of 5,000 digits at line {line}, column {column + 5}, too large for JSON (JavaScript reads it as "
        "Infinity); make it a finite number. Nothing was written.")
    assert _otlp(tmp_path, good[: len(good) // 2]) == (
        "not JSON: invalid at the end of the file (truncated?); export the trace again. Nothing was written.")
    assert _otlp(tmp_path, good[:at] + b"}" + good[at:]) == (
        f"not JSON: invalid at line {line}, column {column}; export the trace again. Nothing was written.")


def test_otlp_json_lines_name_the_line(tmp_path: Path) -> None:
    request = json.dumps(json.loads((FIXTURES / "import/otel-weather.foreign.json").read_bytes())).encode()
    deep = b'{"resourceSpans": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
    assert _otlp(tmp_path, request + b"\n" + deep + b"\n").startswith(
        "line 2: JSON nested more than 10,000 levels deep at column 10018, ")  # `{"resourceSpans": ` then 9,999 [
    assert _otlp(tmp_path, request + b"\n" + b'{"resourceSpans": [' + b"\n").startswith(
        "line 2: not valid JSON (truncated?)")


def test_a_transcript_line_names_a_long_number_and_a_json_document_its_bytes(tmp_path: Path) -> None:
    lines = (FIXTURES / "import/gemini-tax-rewind.jsonl").read_bytes().splitlines()
    at = lines[2].index(b'"args":{') + len(b'"args":{')
    lines[2] = lines[2][:at] + b'"n":' + b"9" * 5_000 + b"," + lines[2][at:]
    path = tmp_path / "session-n.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    res = invoke("--from", "gemini", "--in", path, "--out", tmp_path / "o.json")
    assert res.exit_code == 1
    assert one_error_line(res).startswith(f"error: {path}: line 3: a number of 5,000 digits at column {at + 5}, ")
    chat = tmp_path / "chat.json"
    chat.write_bytes(b'{"messages": [{"role": "user", "content": "caf\xe9"}]}')
    res = invoke("--from", "chat-json", "--in", chat, "--out", tmp_path / "o.json")
    assert one_error_line(res) == (f"error: {chat}: not UTF-8 text at line 1, column 47, so the file is damaged or "
                                   "not a chat-JSON transcript. Nothing was written.")
