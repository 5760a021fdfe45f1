"""verify, assert, diff, inspect, list and the replay summary through the real command line (typer runner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blackbox.cli import app
from tests.conftest import FIXTURES

runner = CliRunner()
TRACES, FLEET = FIXTURES / "traces", FIXTURES / "fleet-triage" / "cassettes"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args], env={"NO_COLOR": "1", "ANTHROPIC_API_KEY": "",
                                                              "OPENAI_API_KEY": ""})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_verify_passes_with_rows() -> None:
    code, out, _ = run("verify", TRACES / "fork-child.v2.json")
    assert code == 0
    for name in ("schema_version", "hash_chain", "provider_neutrality", "replayability"):
        assert name in out
    assert "FAIL" not in out


def test_verify_json_and_failure_block(tmp_path: Path) -> None:
    doc = json.loads((TRACES / "fork-parent.v2.json").read_text())
    doc["steps"][4]["timestamp"] = 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, out, _ = run("verify", bad)
    assert code == 1 and "FAIL" in out and "hash_chain at step 4" in out and "re-record" in out
    code, out, _ = run("verify", bad, "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and report["failure"]["step"] == 4
    assert [c["status"] for c in report["checks"]] == ["pass", "fail", "skip", "skip"]
    assert "\x1b[" not in out


@pytest.mark.parametrize(("content", "words"), [
    (b"{ nope", "not JSON"),
    (None, "ends early"),
    (b'{"version": 1, "id": "x", "createdAt": 0, "steps": []}', "version 1"),
    (b'{"version": 2, "id": "x", "steps": []}', "createdAt"),
    (b'{"version": 2, "id": "x", "createdAt": 0, "steps": [{"id": "x:0", "index": NaN}]}', "NaN"),
    (b'{"version": 2, "id": "x", "createdAt": 0, "steps": [{"id": "x:0", "index": 0, "type": "bogus", '
     b'"timestamp": 0, "payload": {}, "prevHash": null, "hash": "x"}]}', "unknown type"),
])
def test_bad_files_are_one_line_exit_2(tmp_path: Path, content: bytes | None, words: str) -> None:
    """inspect and diff cannot work on a file that is not a cassette: bad input, exit 2 (not 1, which diff
    --exit-code gives a divergence)."""
    path = tmp_path / "bad.json"
    path.write_bytes(content if content is not None else (TRACES / "fork-child.v2.json").read_bytes()[:500])
    for command in ("inspect", "diff"):
        args = (path, TRACES / "fork-child.v2.json") if command == "diff" else (path,)
        code, out, err = run(command, *args)
        assert code == 2, (command, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], err
        assert "Traceback" not in out + err


@pytest.mark.parametrize(("content", "words"), [
    (b"{ nope", "not JSON"),
    (None, "ends early"),
    (b'{"version": 1, "id": "x", "createdAt": 0, "steps": []}', "version 1"),
    (b'{"id": "x", "createdAt": 0, "steps": []}', "no numeric `version`"),
    (b'{"version": 2, "id": "x", "steps": []}', "createdAt"),
    (b'{"version": 2, "id": "x", "createdAt": 0, "steps": [{"id": "x:0", "index": NaN}]}', "NaN"),
])
def test_verify_and_assert_report_a_file_that_cannot_be_loaded_as_schema_version_failing(
        tmp_path: Path, content: bytes | None, words: str) -> None:
    """As the original reports it: the schema_version row fails with the load error, the rest are skipped,
    exit 1, in the text report and in --json (a CI job parsing the JSON always gets a report)."""
    path = tmp_path / "bad.json"
    path.write_bytes(content if content is not None else (TRACES / "fork-child.v2.json").read_bytes()[:500])
    for command in ("verify", "assert"):
        code, out, err = run(command, path)
        assert code == 1 and err == "", (command, out, err)
        row = next(line for line in out.splitlines() if line.startswith("schema_version"))
        assert "FAIL" in row and words in row, out
        assert out.count("skip") >= 3 and "Traceback" not in out
        code, out, err = run(command, path, "--json")
        doc = json.loads(out)
        report = doc if command == "verify" else doc["verify"]
        assert code == 1 and err == "" and doc["ok"] is False
        assert [c["status"] for c in report["checks"]] == ["fail", "skip", "skip", "skip"]
        assert words in report["checks"][0]["detail"] and report["failure"]["name"] == "schema_version"


def test_missing_file_is_one_line_exit_2() -> None:
    """A path that is not there is bad input (2), never a failed check (1), for every reading command."""
    for args in (["verify"], ["assert"], ["inspect"], ["diff", TRACES / "fork-child.v2.json"], ["replay"]):
        code, _, err = run(*args, "does-not-exist.json")
        assert code == 2 and err.startswith("error: ") and "no such file" in err, (args, code, err)


def test_assert_flags() -> None:
    path = TRACES / "success-tool-use.v2.json"
    code, out, _ = run("assert", path, "--expect-status", "success", "--expect-tools", "search,calendar,booking",
                       "--expect-final-answer", "Hotel booked for Alice on 2024-03-15 at 14:00.")
    assert code == 0, out
    code, out, _ = run("assert", path, "--expect-tools", "search,booking")
    assert code == 1 and "expected" in out and "found" in out and "search,calendar,booking" in out
    code, out, _ = run("assert", TRACES / "error-unknown-tool.v2.json", "--expect-status", "error",
                       "--expect-failure-reason", "unknown_tool")
    assert code == 0, out
    code, out, _ = run("assert", TRACES / "success-final-answer.v2.json", "--expect-tools", "")
    assert code == 0, out
    code, _, err = run("assert", path, "--expect-status", "done")
    assert code == 2 and err.startswith("error: ")


def test_assert_skips_expectations_when_verify_fails(tmp_path: Path) -> None:
    doc = json.loads((TRACES / "success-tool-use.v2.json").read_text())
    doc["steps"][2]["payload"]["toolName"] = "other"
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps(doc))
    code, out, _ = run("assert", bad, "--expect-status", "success", "--json")
    result = json.loads(out)
    assert code == 1 and result["expectations"][0]["status"] == "skip"


def test_diff_commands() -> None:
    code, out, _ = run("diff", TRACES / "fork-parent.v2.json", TRACES / "fork-child.v2.json")
    assert code == 0 and "first divergence at step 3" in out and "verdict" in out
    code, out, _ = run("diff", FLEET / "triage-incident.json", FLEET / "triage-hypothesis.json", "--json")
    assert code == 0 and json.loads(out)["firstDivergence"] == 5
    code, out, _ = run("diff", FLEET / "triage-incident.json", FLEET / "triage-fixed.json", "--semantic", "--json")
    assert code == 0 and json.loads(out)["firstDivergence"] == 5


def test_diff_of_a_broken_chain_exits_2(tmp_path: Path) -> None:
    doc = json.loads((TRACES / "fork-child.v2.json").read_text())
    doc["steps"][1]["timestamp"] = 9
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps(doc))
    for extra in ([], ["--exit-code"]):  # a tampered file is never mistaken for a divergence
        code, _, err = run("diff", TRACES / "fork-parent.v2.json", bad, *extra)
        assert code == 2 and err.startswith("error: ") and "step 1" in err


@pytest.mark.parametrize("light", [True, False], ids=["light path", "typer path"])
def test_diff_exit_code_fails_on_a_divergence_only(light: bool, capsys: pytest.CaptureFixture[str]) -> None:
    """`--exit-code`: 1 when the runs diverge at some step (also when one is a prefix of the other), 0 when
    identical; without it 0 either way.  Through `main` (the light dispatcher) and the typer app."""
    from tests.cli_helpers import invoke, run_cli

    def code(*args: object) -> tuple[int, str]:
        if light:
            return run_cli(capsys, "diff", *args)[:2]
        result = invoke(app, ["diff", *args])
        return result.exit_code, result.stdout

    parent, child = TRACES / "fork-parent.v2.json", TRACES / "fork-child.v2.json"
    assert code(parent, child)[0] == 0
    assert code(parent, child, "--exit-code")[0] == 1
    assert code(parent, parent, "--exit-code")[0] == 0
    status, out = code(parent, child, "--exit-code", "--semantic", "--json")
    assert status == 1 and json.loads(out)["firstDivergence"] is not None


def test_inspect() -> None:
    code, out, _ = run("inspect", TRACES / "fork-child.v2.json")
    assert code == 0 and "fixture-fork-parent-fork" in out and "parent:" in out and "Tool result: search" in out
    code, out, _ = run("inspect", TRACES / "success-final-answer.v2.json", "--step", "1")
    assert code == 0 and "92e98ba5d5c7" in out and "The capital of France is Paris." in out
    code, _, err = run("inspect", TRACES / "success-final-answer.v2.json", "--step", "9")
    assert code == 2 and err.startswith("error: ")


def test_list(tmp_path: Path) -> None:
    for name in ("fork-parent.v2.json", "fork-child.v2.json"):
        shutil.copy(TRACES / name, tmp_path / name)
    (tmp_path / "broken.json").write_text("{")
    code, out, _ = run("list", tmp_path)
    assert code == 0 and "broken.json: invalid" in out
    assert "3 file(s): 2 valid, 1 invalid" in out
    code, out, _ = run("list", tmp_path, "--json")
    listing = json.loads(out)
    assert listing["valid"] == 2
    assert {e.get("id") for e in listing["cassettes"]} == {"fixture-fork-parent", "fixture-fork-parent-fork", None}
    code, _, err = run("list", tmp_path / "nope")
    assert code == 2 and err.startswith("error: ")


def test_list_without_a_folder_in_a_new_project_points_at_the_demo(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no traces/ yet: the default folder is what `blackbox demo` writes
    code, _, err = run("list")
    assert code == 2 and err == ("error: traces: no such folder; pass the folder that holds your cassettes "
                                 "(`blackbox demo` writes traces/)\n")
    code, _, err = run("list", tmp_path / "elsewhere")
    assert code == 2 and "blackbox demo" not in err


def test_replay_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    from blackbox.cli.cassettes import replay_summary

    replay_summary(TRACES / "success-tool-use.v2.json")
    out = capsys.readouterr().out
    assert "15 recorded step(s)" in out and "outcome: success" in out
    doc = json.loads((TRACES / "success-tool-use.v2.json").read_text())
    doc["steps"][3]["index"] = 7
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(typer.Exit) as info:
        replay_summary(bad)
    assert info.value.exit_code == 1


@pytest.mark.parametrize("command", ["verify", "assert", "diff", "inspect", "list"])
def test_help_has_examples(command: str) -> None:
    code, out, _ = run(command, "--help")
    assert code == 0 and "Examples" in out and "blackbox " + command in out


@pytest.mark.parametrize("command", ["record", "replay", "fork", "tui", "verify", "assert", "diff", "inspect",
                                     "list", "import", "demo", "check", "recover"])
def test_help_shows_no_type_beside_a_flag(command: str) -> None:
    """A flag takes no value: its help row shows none (typer's rich help would print `<bool>`)."""
    code, out, _ = run(command, "--help")
    assert code == 0 and "--help" in out
    assert "<bool>" not in out
