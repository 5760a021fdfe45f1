"""Hostile input across commands: every mistake a user can make is one `error:` line with the right exit code
(1 failure, 2 usage), never a traceback; help carries no colour where docs/format.md, "CLI conventions" forbids it."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from blackbox.cli import app
from tests.cli_helpers import invoke
from tests.conftest import FIXTURES
from tests.waiting import HANG_GUARD

GOOD = FIXTURES / "traces" / "success-tool-use.v2.json"
# A payload nested 100,000 levels deep: read (without recursing), its step's hash check fails, as in the
# original (whose hash recursion stops at 2,600-4,200 levels).
DEEP = b'{"version": 2, "id": "x", "createdAt": 0, "steps": [{"id": "x:0", "index": 0, "type": "metadata", ' \
       b'"timestamp": 0, "prevHash": null, "hash": "0", "payload": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}"
# The file itself nested 100,000 levels deep outside any payload: refused at load.
DEEP_FILE = b'{"version": 2, "id": "x", "createdAt": 0, "steps": [], "extra": ' + b"[" * 100_000 + \
            b"]" * 100_000 + b"}"


def one_error(args: list[str], code: int, *needles: str) -> str:
    result = invoke(app, args)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(("command", "code"), [(["inspect"], 2), (["replay"], 1), (["diff", str(GOOD)], 2),
                                              (["tui"], 2)])
def test_a_cassette_nested_too_deep_is_one_error_line(command: list[str], code: int, tmp_path: Path) -> None:
    """inspect, diff and tui cannot work on a file nested too deep outside its payloads (2); replay without a
    command judges it as verify does (1)."""
    deep = tmp_path / "deep.json"
    deep.write_bytes(DEEP_FILE)
    one_error([*command, str(deep)], code, "deep.json", "nested more than 10,000 levels deep", "re-record")


@pytest.mark.parametrize("command", ["verify", "assert"])
@pytest.mark.parametrize(("data", "failing", "words"), [
    (DEEP_FILE, ["FAIL"], "nested more than 10,000 levels deep; a cassette never nests this deep"),
    (DEEP, ["FAIL", "0"], "step 0 payload is nested more than 10,000 levels deep, too deep to hash"),
], ids=["the-file-refused-at-load", "a-payload-its-hash-check"])
def test_verify_and_assert_report_a_cassette_nested_too_deep_as_the_check_the_original_fails(
        command: str, data: bytes, failing: list[str], words: str, tmp_path: Path) -> None:
    """Deep outside the payloads: unreadable, the schema_version row fails (re-record).  A payload deeper
    than Blackbox hashes: where the original fails too, at that step's hash check.  Both exit 1."""
    deep = tmp_path / "deep.json"
    deep.write_bytes(data)
    result = invoke(app, [command, deep])
    assert result.exit_code == 1 and result.stderr == "", (result.stdout, result.stderr)
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.split()}
    row = rows["schema_version" if data is DEEP_FILE else "hash_chain"]
    assert row.split()[1 : 1 + len(failing)] == failing and words in row and "re-record" in result.stdout, row


def test_replay_diff_and_inspect_of_a_payload_nested_too_deep(tmp_path: Path) -> None:
    """replay refuses it at its chain check (1), diff cannot compare it (2: its chain is broken at step 0),
    inspect shows the step with its payload's place saying why it was not read."""
    deep = tmp_path / "deep.json"
    deep.write_bytes(DEEP)
    one_error(["replay", str(deep)], 1, "hash_chain failed at step 0", "nested more than 10,000 levels deep")
    one_error(["diff", str(GOOD), str(deep)], 2, "hash chain broken at step 0", "too deep to hash")
    shown = invoke(app, ["inspect", str(deep), "--step", "0"])
    assert shown.exit_code == 0 and "nested more than 10,000 levels deep, too deep to read" in shown.stdout


def test_list_names_a_too_deep_file_invalid_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_bytes(DEEP_FILE)
    (tmp_path / "deep-payload.json").write_bytes(DEEP)
    (tmp_path / "good.json").write_bytes(GOOD.read_bytes())
    result = invoke(app, ["list", tmp_path])
    assert result.exit_code == 0, result.stderr
    assert "deep.json: invalid: JSON nested more than 10,000 levels deep" in result.stdout
    assert "deep-payload.json: invalid: hash chain broken: step 0 payload is nested more than" in result.stdout
    assert "3 file(s): 1 valid, 2 invalid" in result.stdout


def test_list_of_a_file_says_it_is_a_file() -> None:
    one_error(["list", str(GOOD)], 2, "is a file, not a folder")


def test_inspect_step_of_an_empty_cassette_says_it_has_no_steps(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text('{"version": 2, "id": "e", "createdAt": 0, "steps": []}')
    one_error(["inspect", str(empty), "--step", "0"], 2, "this cassette has no steps")


def test_an_import_error_ending_in_a_question_reads_as_one_sentence(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    line = one_error(["import", "--from", "claude-code", "--in", str(empty), "--out", str(tmp_path / "o.json")], 1)
    assert line.endswith("is it a Claude Code session? Nothing was written."), line
    assert not (tmp_path / "o.json").exists()


def test_the_real_entry_point_prints_no_traceback(tmp_path: Path) -> None:
    """Through `python -m blackbox` (main's own handling, not CliRunner's)."""
    deep = tmp_path / "deep.json"
    deep.write_bytes(DEEP_FILE)
    done = subprocess.run([sys.executable, "-m", "blackbox", "inspect", str(deep)], capture_output=True,
                          text=True, timeout=HANG_GUARD)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    done = subprocess.run([sys.executable, "-m", "blackbox", "verify", str(deep), "--json"], capture_output=True,
                          text=True, timeout=HANG_GUARD)
    assert done.returncode == 1 and done.stderr == "", done.stderr
    assert json.loads(done.stdout)["failure"]["name"] == "schema_version"


def _on_a_terminal(args: list[str], env: dict[str, str]) -> bytes:
    """Run the CLI with stdout and stderr on a pseudo-terminal and return everything it printed."""
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "blackbox", *args], stdout=child, stderr=child,
                            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", **env})
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    proc.wait(timeout=HANG_GUARD)
    return b"".join(chunks)


@pytest.mark.parametrize("env", [{"CI": "1"}, {"NO_COLOR": "1"}])
def test_help_has_no_colour_under_ci_or_no_color(env: dict[str, str]) -> None:
    plain = {k: "" for k in ("CI", "NO_COLOR")}
    assert b"\x1b[" in _on_a_terminal(["verify", "--help"], plain)  # the test can fail: a terminal gets colour
    shown = _on_a_terminal(["verify", "--help"], {**plain, **env})
    assert b"Examples" in shown and b"\x1b[" not in shown


@pytest.mark.parametrize("args", [["inspect"], ["diff", "--semantic"]])
def test_a_reader_that_leaves_early_ends_the_output_quietly(tmp_path: Path, args: list[str]) -> None:
    """`blackbox inspect big.json | head -1`: the closed pipe stops the command, with no traceback."""
    from blackbox.format.cassette import StepChain, save

    chain = StepChain("big")
    for i in range(3000):
        chain.append("model_output", i, {"type": "final_answer", "text": "x" * 60})
    big = tmp_path / "big.json"
    save(chain.cassette(0), big)
    files = [big] if args[0] == "inspect" else [big, FIXTURES / "traces" / "fork-child.v2.json"]
    command = [sys.executable, "-m", "blackbox", args[0], *map(str, files), *args[1:]]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ,
                            "NO_COLOR": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()  # the first line, then the reader goes away
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=HANG_GUARD) in (0, 1)
    assert "Traceback" not in stderr and "Broken pipe" not in stderr, stderr
