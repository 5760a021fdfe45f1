"""The machine contract: every `--json` output is one JSON document that validates against its schema in
docs/schemas/, with numbers printed as the canonical form prints them (JavaScript's way)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import typer
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from blackbox.cli import app
from blackbox.cli.cassettes import replay_summary
from blackbox.format.canonical import JSFloat
from blackbox.format.cassette import StepChain, load, save
from tests.cli_helpers import invoke
from tests.conftest import FIXTURES

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"
TRACES = FIXTURES / "traces"
_DOCS = {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.schema.json")}
REGISTRY = Registry().with_resources((doc["$id"], Resource.from_contents(doc)) for doc in _DOCS.values())


def validate(name: str, doc: Any) -> None:
    schema = _DOCS[f"{name}.schema.json"]
    Draft202012Validator.check_schema(schema)
    errors = list(Draft202012Validator(schema, registry=REGISTRY).iter_errors(doc))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]


def run_json(name: str, *args: str | Path, code: int = 0) -> tuple[Any, str]:
    """Run the command; stdout must be exactly one JSON document (nothing before or after it)."""
    result = invoke(app, args, env={"NO_COLOR": "", "CI": "", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""})
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr, result.exception)
    doc = json.loads(result.stdout)  # raises on anything but one document
    assert "\x1b" not in result.stdout and result.stdout.endswith("}\n")
    validate(name, doc)
    return doc, result.stdout


def test_every_schema_is_a_valid_draft_2020_12_schema() -> None:
    assert len(_DOCS) == 13  # drift.schema.json is validated by tests/test_drift.py
    for schema in _DOCS.values():
        Draft202012Validator.check_schema(schema)


FLOATS = {"small": JSFloat(1e-7), "micro": JSFloat(0.000001), "big": JSFloat(1e21), "whole": JSFloat(5.0),
          "tenth": JSFloat(0.1), "huge": 2**60}


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    """Two cassettes that diverge at a tool result holding decimal numbers."""
    paths = []
    for n, result in enumerate(({"v": FLOATS}, {"v": {**FLOATS, "tenth": JSFloat(0.2)}})):
        chain = StepChain(f"floats-{n}")
        chain.append("tool_call", 1, {"toolCallId": "call-0", "toolName": "probe", "toolInput": {"x": JSFloat(2.5)}})
        chain.append("tool_result", JSFloat(2.5), {"toolCallId": "call-0", "toolName": "probe", "result": result})
        chain.append("metadata", 3, {"event": "run_completed", "status": "success", "result": "done"})
        path = tmp_path / f"floats-{n}.json"
        save(chain.cassette(0), path)
        paths.append(path)
    return paths[0], paths[1]


def test_verify_json_passing_failing_and_unloadable(tmp_path: Path) -> None:
    doc, _ = run_json("verify", "verify", TRACES / "fork-child.v2.json", "--json")
    assert doc["ok"] is True and doc["failure"] is None
    bad = tmp_path / "bad.json"
    data = json.loads((TRACES / "fork-parent.v2.json").read_text())
    data["steps"][4]["timestamp"] = 5
    bad.write_text(json.dumps(data))
    doc, _ = run_json("verify", "verify", bad, "--json", code=1)
    assert doc["failure"]["name"] == "hash_chain" and doc["failure"]["step"] == 4
    broken = tmp_path / "broken.json"
    broken.write_text("{ nope")
    doc, _ = run_json("verify", "verify", broken, "--format", "json", code=1)
    assert doc["failure"]["name"] == "schema_version" and doc["id"] is None


def test_assert_json(tmp_path: Path) -> None:
    path = TRACES / "success-tool-use.v2.json"
    doc, _ = run_json("assert", "assert", path, "--expect-status", "success", "--expect-tools",
                      "search,calendar,booking", "--json")
    assert doc["ok"] is True and [e["status"] for e in doc["expectations"]] == ["pass", "pass"]
    doc, _ = run_json("assert", "assert", path, "--expect-tools", "search", "--json", code=1)
    assert doc["expectations"][0] == {"name": "tools", "status": "fail", "expected": "search",
                                      "found": "search,calendar,booking"}
    broken = tmp_path / "broken.json"
    broken.write_bytes(path.read_bytes()[:300])
    doc, _ = run_json("assert", "assert", broken, "--expect-status", "success", "--json", code=1)
    assert doc["verify"]["failure"]["name"] == "schema_version" and doc["expectations"][0]["status"] == "skip"


def test_diff_json_prints_decimal_numbers_as_the_canonical_form_does(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    doc, out = run_json("diff", "diff", a, b, "--json")
    assert doc["firstDivergence"] == 1 and doc["changedValue"]["key"] == "result"
    assert doc["changedFields"] == [{"path": "result.v.tenth", "old": 0.1, "new": 0.2, "old_present": True,
                                     "new_present": True}]
    for text in ('"small": 1e-7', '"micro": 0.000001', '"big": 1e+21', '"whole": 5,', '"huge": 1152921504606847000'):
        assert text in out, text
    assert "1e-07" not in out and "5.0" not in out and "1e21" not in out
    doc, _ = run_json("diff", "diff", TRACES / "fork-parent.v2.json", TRACES / "fork-child.v2.json", "--json")
    assert doc["firstDivergence"] == 3 and doc["verdict"]["kind"] != "no_change"
    doc, _ = run_json("diff", "diff", a, a, "--semantic", "--json")
    assert doc["firstDivergence"] is None and doc["mode"] == "semantic"


def test_inspect_json_rows_and_one_step(tmp_path: Path) -> None:
    a, _ = _runs(tmp_path)
    doc, _ = run_json("inspect", "inspect", TRACES / "fork-child.v2.json", "--json")
    assert doc["steps"] == len(doc["rows"]) == 7 and doc["parentId"]
    doc, out = run_json("inspect-step", "inspect", a, "--step", "1", "--json")
    assert doc["timestamp"] == 2.5 and doc["payload"]["result"]["v"]["tenth"] == 0.1
    assert '"big": 1e+21' in out and '"whole": 5,' in out


def test_list_json(tmp_path: Path) -> None:
    shutil.copy(TRACES / "fork-child.v2.json", tmp_path / "child.json")
    (tmp_path / "broken.json").write_text("[]")
    doc, _ = run_json("list", "list", tmp_path, "--json")
    assert (doc["valid"], doc["invalid"]) == (1, 1)


def test_import_json_written_refused_and_folder(tmp_path: Path) -> None:
    foreign = FIXTURES / "external" / "chat-tool-use.foreign.json"
    doc, _ = run_json("import", "import", "--from", "chat-json", "--in", foreign, "--out", tmp_path / "c.json",
                      "--id", "external-chat-tool-use", "--json")
    assert doc["written"] is True and doc["steps"] == 11 and load(tmp_path / "c.json").id == "external-chat-tool-use"
    doc, _ = run_json("import", "import", "--from", "chat-json", "--in", TRACES / "fork-child.v2.json", "--out",
                      tmp_path / "no.json", "--json", code=1)
    assert doc["written"] is False and "Nothing was written" in doc["error"]
    assert not (tmp_path / "no.json").exists()
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(FIXTURES / "import" / "claude-code-session.jsonl", folder / "s1.jsonl")
    (folder / "s2.jsonl").write_text("not json\n")
    doc, _ = run_json("import", "import", "--from", "claude-code", "--in", folder, "--out", tmp_path / "out",
                      "--json", code=1)
    by_file = {entry["file"]: entry for entry in doc["sessions"]}  # newest first: s2, then s1
    assert (doc["imported"], doc["failed"]) == (1, 1) and by_file["s1.jsonl"]["steps"] == 9
    doc, _ = run_json("import", "import", "--from", "claude-code", "--in", folder, "--json")  # no --out: a list
    assert doc["listed"] == 2 and {entry["file"] for entry in doc["sessions"]} == {"s1.jsonl", "s2.jsonl"}


@pytest.mark.parametrize("ok", [True, False])
def test_replay_summary_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], ok: bool) -> None:
    path = TRACES / "success-tool-use.v2.json"
    if not ok:
        data = json.loads(path.read_text())
        data["steps"][2]["payload"]["toolName"] = "tampered"
        path = tmp_path / "tampered.json"
        path.write_text(json.dumps(data))
    try:
        replay_summary(path, json_out=True)
    except typer.Exit as exc:
        assert not ok and exc.exit_code == 1
    doc = json.loads(capsys.readouterr().out)
    validate("replay-summary", doc)
    assert doc["ok"] is ok and (len(doc["rows"]) == 15 if ok else "rows" not in doc)


def test_json_output_makes_terminal_controls_inert(tmp_path: Path) -> None:
    """A bidi override or C1 control inside a string is written as an escape: the same value, not obeyed."""
    chain = StepChain("evil")
    chain.append("metadata", 0, {"event": "run_completed", "status": "success", "result": "a\u202eb\x9bc\x1b[2J"})
    path = tmp_path / "evil.json"
    save(chain.cassette(0), path)
    doc, out = run_json("inspect", "inspect", path, "--json")
    assert "\u202e" not in out and "\x9b" not in out and "\x1b" not in out
    assert "\\u202e" in out and doc["outcome"]["final_answer"] == "a\u202eb\x9bc\x1b[2J"


@pytest.mark.parametrize("args", [
    ["verify", "MISSING", "--json"],
    ["assert", "MISSING", "--expect-status", "success", "--json"],
    ["diff", "MISSING", str(TRACES / "fork-child.v2.json"), "--json"],
    ["inspect", "MISSING", "--json"],
    ["replay", "MISSING", "--json"],
    ["import", "--from", "chat-json", "--in", "MISSING", "--out", "OUT", "--json"],
    ["list", "MISSING", "--json"],
    ["verify", str(TRACES / "fork-child.v2.json"), "--json", "--format", "text"],
    ["verify", "--json"],
    ["diff", str(TRACES / "fork-child.v2.json"), "--json", "--bogus"],
], ids=lambda a: " ".join(x for x in a if not x.startswith("/")))
def test_a_json_call_that_fails_prints_one_error_document(args: list[str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Through the real entry point: stdout is one document whatever went wrong, the exit code unchanged."""
    from tests.cli_helpers import run_cli

    names = {"MISSING": str(tmp_path / "missing.json"), "OUT": str(tmp_path / "out.json")}
    code, out, err = run_cli(capsys, *[names.get(a, a) for a in args])
    doc = json.loads(out)
    validate("error", doc)
    assert code == 2 and doc["exitCode"] == 2 and err.startswith("error: ")
    assert doc["error"] == err.splitlines()[0].removeprefix("error: ")
    assert not (tmp_path / "out.json").exists()
