"""Each coding agent's session through the whole tool, as a user runs it: `blackbox import` → verify → inspect →
`fork --model-only --script` (the what-if) → diff; the Codex run continued live by the provider its recorded
model names (the tests' fake API); and two agents' imports of one task diffed across agents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blackbox.cli import app
from blackbox.fork.whatif import LiveModel, choose_provider, what_if
from blackbox.format.cassette import load
from blackbox.format.diff import diff
from blackbox.format.verify import verify
from tests.cli_helpers import invoke
from tests.conftest import FIXTURES
from tests.fakeapi import response_object
from tests.fakeapi_gemini import gemini_response

IMPORT = FIXTURES / "import"
NO_KEYS = {"ANTHROPIC_API_KEY": None, "OPENAI_API_KEY": None, "NO_COLOR": "1"}
SESSIONS = [("claude-code", "claude-code-tax.jsonl"), ("codex", "codex-tax.jsonl"),
            ("codex", "codex-long-compacted.jsonl"), ("gemini", "gemini-tax-rewind.jsonl"),
            ("gemini", "gemini-checkpoint.foreign.json")]


def cli(*args: Any) -> Any:
    result = invoke(app, args, env=NO_KEYS)  # type: ignore[arg-type]
    assert "Traceback" not in result.stdout + result.stderr
    return result


def first_result(path: Path) -> int:
    return next(s.index for s in load(path).steps if s.type == "tool_result")


@pytest.mark.parametrize(("source", "name"), SESSIONS)
def test_import_verify_inspect_and_a_scripted_what_if(tmp_path: Path, source: str, name: str) -> None:
    cassette = tmp_path / "imported.json"
    res = cli("import", "--from", source, "--in", IMPORT / name, "--out", cassette, "--id", "agent-run")
    assert res.exit_code == 0, res.stderr
    assert cli("verify", cassette).exit_code == 0
    shown = cli("inspect", cassette)
    assert shown.exit_code == 0 and "agent-run" in shown.stdout and "Tool called:" in shown.stdout
    at = first_result(cassette)
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"type": "final_answer", "text": "With that result there is nothing to fix."}]))
    fork = tmp_path / "whatif.json"
    res = cli("fork", cassette, "--at", at, "--set", json.dumps("2 passed"), "--out", fork, "--model-only",
              "--script", replies)
    assert res.exit_code == 0, res.stderr
    assert "without the agent" in res.stdout
    parent, child = load(cassette), load(fork)
    assert verify(child, env={}).ok
    assert child.steps[:at] == parent.steps[:at] and child.steps[at].payload["result"] == "2 passed"
    report = diff(parent, child)
    assert report.first_divergence == at
    assert report.outcome_b.final_answer == "With that result there is nothing to fix."


def test_an_imported_codex_run_continues_live_with_its_recorded_model(tmp_path: Path, fake_api: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cassette = tmp_path / "codex.json"
    assert cli("import", "--from", "codex", "--in", IMPORT / "codex-tax.jsonl", "--out", cassette).exit_code == 0
    parent = load(cassette)
    # Codex's API (the importer names it: Responses) and the model its turn_context recorded
    assert choose_provider(parent, None).name == "responses"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-whatif-codex-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_api.openai_url)
    fake_api.queue(response_object(text="The rate is already 20%; nothing to change."))
    fork, reason = what_if(parent, 3, "2 passed", LiveModel(choose_provider(parent, None)), trace_id="codex-live")
    assert reason == "final answer" and verify(fork, env={}).ok
    assert fork.steps[-1].payload["result"] == "The rate is already 20%; nothing to change."
    request = fake_api.requests[0]
    assert request.path.endswith("/responses")
    body = fake_api.bodies()[0]
    assert body["model"] == "gpt-5-codex"
    assert {tool["name"] for tool in body["tools"]} == {"shell", "apply_patch"}
    outputs = [item for item in body["input"] if item.get("type") == "function_call_output"]
    assert outputs[-1] == {"type": "function_call_output", "call_id": "call-0", "output": "2 passed"}


def test_an_imported_gemini_run_continues_live_with_its_recorded_model(tmp_path: Path, fake_api: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cassette = tmp_path / "gemini.json"
    res = cli("import", "--from", "gemini", "--in", IMPORT / "gemini-tax-rewind.jsonl", "--out", cassette)
    assert res.exit_code == 0
    parent = load(cassette)
    assert choose_provider(parent, None).name == "gemini"  # Gemini CLI's API, the model its session named
    key = "gemini-test-key-0123456789abcdef"
    monkeypatch.setenv("GEMINI_API_KEY", key)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_api.url)
    fake_api.queue(gemini_response(text="The rate is already 20%; nothing to change."))
    fork, reason = what_if(parent, 3, "2 passed", LiveModel(choose_provider(parent, None)), trace_id="gemini-live")
    assert reason == "final answer" and verify(fork, env={}).ok
    assert fork.steps[-1].payload["result"] == "The rate is already 20%; nothing to change."
    (request,) = fake_api.requests
    assert request.path == "/v1beta/models/gemini-2.5-pro:generateContent"
    responses = [part["functionResponse"] for content in request.body["contents"] for part in content["parts"]
                 if "functionResponse" in part]
    assert responses[0]["name"] == "run_shell_command" and responses[0]["id"] == "call-0"
    assert key not in json.dumps([step.payload for step in fork.steps])


def test_two_agents_doing_one_task_diff_across_agents(tmp_path: Path) -> None:
    paths = {}
    for source, name in SESSIONS[:2] + SESSIONS[3:4]:
        paths[source] = tmp_path / f"{source}.json"
        assert cli("import", "--from", source, "--in", IMPORT / name, "--out", paths[source]).exit_code == 0
    res = cli("diff", paths["claude-code"], paths["codex"], "--across-agents", "--json")
    doc = json.loads(res.stdout)
    assert doc["mode"] == "agents"
    # the same prompt, the same test run and its failure; then Claude Code reads tax.py with Read and Codex with
    # `cat` in its shell (5–7); both edit tax.py, run the tests again, pass, and answer
    assert doc["firstDivergence"] == 5
    assert doc["rows"] == ["same"] * 5 + ["changed"] * 3 + ["same"] * 11
    assert doc["verdict"]["kind"] == "path_changed"
    # Gemini CLI read it with read_file: the same actions all the way
    res = cli("diff", paths["claude-code"], paths["gemini"], "--across-agents")
    assert "no divergence" in res.stdout and "the same actions, through each agent's tools" in res.stdout
    # by payload the same two runs part at once: every request carries its agent's own tools
    assert json.loads(cli("diff", paths["claude-code"], paths["codex"], "--semantic", "--json").stdout)[
        "firstDivergence"] == 0
    assert cli("diff", paths["claude-code"], paths["codex"], "--semantic", "--across-agents").exit_code == 2
