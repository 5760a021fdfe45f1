"""Hostile cassettes and transcripts at the CLI: keys in the frame, malformed outputs, bad bytes, odd paths.
Each must end in output with no key in it, or one clear line — never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blackbox.format.cassette import Cassette, StepChain, load, save
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES

TRACE = FIXTURES / "traces/success-tool-use.v2.json"
KEY = "sk-ant-api03-" + "Zx9" * 12


def rebuild(trace_id: str = "run", parent: str | None = None, step1: object = None) -> Cassette:
    chain = StepChain(trace_id)
    for s in load(TRACE).steps:
        chain.append(s.type, s.timestamp, step1 if step1 is not None and s.index == 1 else s.payload)
    return chain.cassette(0, parent_id=parent, forked_from_step_id=None if parent is None else f"{parent}:3")


def pieces(secret: str, size: int = 20) -> list[str]:
    return [secret[i:i + size] for i in range(len(secret) - size + 1)]


@pytest.mark.parametrize("args", [
    ["verify", "{f}"], ["verify", "{f}", "--json"], ["inspect", "{f}"], ["inspect", "{f}", "--json"],
    ["diff", "{f}", "{f}"], ["diff", "{f}", "{f}", "--json"], ["diff", str(TRACE), "{f}"],
    ["assert", "{f}", "--expect-status", "success"], ["assert", "{f}", "--json"], ["list", "{d}"],
    ["list", "{d}", "--json"], ["replay", "{f}"],
])
def test_a_key_in_the_trace_id_or_parent_id_is_never_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             args: list[str]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    path = tmp_path / "leaky.json"
    save(rebuild(trace_id=KEY, parent=f"parent-{KEY}"), path)
    _, out, err = run_cli(capsys, *(a.replace("{f}", str(path)).replace("{d}", str(tmp_path)) for a in args))
    text = out + err
    assert text.strip()
    for piece in pieces(KEY):
        assert piece not in text, f"{piece!r} printed by {args[0]}"


def test_a_key_pattern_in_the_trace_id_is_masked_without_the_environment(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "leaky.json"
    save(rebuild(trace_id=KEY), path)
    for args in (["verify", path], ["inspect", path], ["verify", path, "--json"], ["diff", path, TRACE]):
        _, out, err = run_cli(capsys, *args)
        assert KEY not in out + err


@pytest.mark.parametrize("calls", [5, "search", {"toolName": "x"}, None])
@pytest.mark.parametrize("command", ["inspect", "inspect-step", "diff", "diff-json", "verify"])
def test_a_model_output_whose_calls_is_not_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  calls: object, command: str) -> None:
    path = tmp_path / "calls.json"
    save(rebuild(step1={"type": "tool_calls", "calls": calls}), path)
    argv = {"inspect": ["inspect", path], "inspect-step": ["inspect", path, "--step", "1"],
            "diff": ["diff", TRACE, path], "diff-json": ["diff", TRACE, path, "--json"],
            "verify": ["verify", path]}[command]
    code, out, _ = run_cli(capsys, *argv)
    if command == "verify":
        assert code == 1
    else:
        assert code == 0
    if command == "diff-json":
        assert json.loads(out)["firstDivergence"] == 1
    if command == "diff":
        assert "first divergence at step 1" in out
    if command == "verify":
        assert "is a tool_calls output whose `calls` is not a list" in out
    if command == "inspect":
        assert "(calls is not a list)" in out


def test_claude_code_invalid_utf8_inside_message_is_one_line(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    lines = (FIXTURES / "import/claude-code-session.jsonl").read_bytes().splitlines()
    number = next(i for i, line in enumerate(lines) if b'"type": "user"' in line or b'"type":"user"' in line)
    bad = lines[number].replace(b'"content": "', b'"content": "\xff\xfe', 1).replace(
        b'"content":"', b'"content":"\xff\xfe', 1)
    assert bad != lines[number]
    lines[number] = bad
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out.json"
    code, _, err = run_cli(capsys, "import", "--from", "claude-code", "--in", src, "--out", out)
    assert code == 1
    one = err.strip().splitlines()
    assert len(one) == 1 and one[0].startswith("error: ")
    assert f"line {number + 1}:" in one[0] and "not UTF-8" in one[0]
    assert not out.exists()


def test_claude_code_invalid_utf8_in_a_line_header_is_one_line(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(b'{"type": "us\xffer", "timestamp": "2024-01-01T00:00:00Z", "message": {}}\n')
    code, _, err = run_cli(capsys, "import", "--from", "claude-code", "--in", src, "--out", tmp_path / "o.json")
    assert code == 1
    assert "line 1: not UTF-8" in err


@pytest.mark.parametrize("command", ["verify", "inspect", "list", "assert"])
def test_a_path_the_system_refuses_is_one_line(capsys: pytest.CaptureFixture[str], command: str) -> None:
    code, _, err = run_cli(capsys, command, "x" * 5000)
    assert code in (1, 2)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
