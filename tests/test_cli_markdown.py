"""`--format markdown` for verify, assert and diff: a compact report for a pull-request comment or a CI job
summary (the verdict first, a table of checks, the first divergence and the changed value)."""

from __future__ import annotations

import json
from pathlib import Path

from blackbox.cli import app
from blackbox.format.cassette import StepChain, save
from tests.cli_helpers import invoke
from tests.conftest import FIXTURES

TRACES = FIXTURES / "traces"


def md(*args: str | Path, code: int = 0) -> str:
    result = invoke(app, args, env={"NO_COLOR": "", "CI": ""})
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "\x1b" not in result.stdout and result.stderr == ""
    return result.stdout


def test_verify_markdown_verdict_and_table(tmp_path: Path) -> None:
    out = md("verify", TRACES / "fork-child.v2.json", "--format", "markdown")
    assert out.startswith("### blackbox verify: ✅ verified\n")
    assert "| check | result | step | detail |" in out and "| hash_chain | ✅ pass |" in out
    bad = tmp_path / "bad.json"
    doc = json.loads((TRACES / "fork-parent.v2.json").read_text())
    doc["steps"][4]["timestamp"] = 5
    bad.write_text(json.dumps(doc))
    out = md("verify", bad, "--format", "markdown", code=1)
    assert out.startswith("### blackbox verify: ❌ failed: hash_chain\n")
    assert "| hash_chain | ❌ FAIL | 4 |" in out and "| replayability | ⏭️ skip |" in out and "**Do:**" in out


def test_assert_markdown_shows_expected_and_found() -> None:
    out = md("assert", TRACES / "success-tool-use.v2.json", "--expect-tools", "search", "--format", "markdown",
             code=1)
    assert out.startswith("### blackbox assert: ❌ failed: tools\n")
    assert '| tools | `"search"` | `"search,calendar,booking"` |' in out
    out = md("assert", TRACES / "success-tool-use.v2.json", "--expect-status", "success", "--format", "markdown")
    assert out.startswith("### blackbox assert: ✅ all assertions pass\n")


def test_diff_markdown_first_divergence_changed_value_and_verdict() -> None:
    out = md("diff", TRACES / "fork-parent.v2.json", TRACES / "fork-child.v2.json", "--format", "markdown")
    assert out.startswith("### blackbox diff: first divergence at step 3 — same status, but the final answer "
                          "changed\n")
    assert "| A | 3 | tool_result |" in out and "**Changed result:**" in out and "| field | A | B |" in out
    assert "**Verdict:** same status, but the final answer changed" in out


def test_markdown_keeps_cassette_text_inert_and_tables_whole(tmp_path: Path) -> None:
    """A pipe, a backtick or an escape sequence in a cassette cannot break the table or reach a terminal."""
    paths = []
    for n, text in enumerate(("a | b `c` \x1b[31mred", "other")):
        chain = StepChain(f"md-{n}")
        chain.append("tool_result", 0, {"toolCallId": "call-0", "toolName": "t|x", "result": text})
        paths.append(tmp_path / f"{n}.json")
        save(chain.cassette(0), paths[-1])
    out = md("diff", *paths, "--format", "markdown")
    assert "\x1b" not in out and "\\u001b[31m" in out  # JSON text of the value: the escape, not ESC
    row = next(line for line in out.splitlines() if line.startswith("| A |"))
    assert row.count("|") - row.count("\\|") == 6  # five cells: escaped pipes stay inside theirs
    assert "``" in out  # a value holding a backtick is fenced with two


def test_json_and_another_format_together_is_a_usage_error() -> None:
    result = invoke(app, ["verify", TRACES / "fork-child.v2.json", "--json", "--format", "markdown"])
    assert result.exit_code == 2 and result.stderr.startswith("error: ")
