"""What "the same step" means across coding agents (docs/format.md, "Diff across agents"), rule by rule, and the
cross-agent diff read lazily and eagerly alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

from blackbox.format.agentview import action, agent_of, same_step
from blackbox.format.cassette import load
from blackbox.format.diff import diff, diff_lazy
from blackbox.format.lazy import load_lazy
from tests.conftest import FIXTURES

IMPORT = FIXTURES / "import"


@pytest.mark.parametrize(("name", "tool_input", "expected"), [
    ("Bash", {"command": " pytest -q ", "description": "run"}, ("shell", "pytest -q")),
    ("shell", {"command": ["bash", "-lc", "pytest -q"], "workdir": "/w"}, ("shell", "pytest -q")),
    ("shell", {"command": ["git", "status"]}, ("shell", "git status")),
    ("exec_command", {"cmd": "pytest -q"}, ("shell", "pytest -q")),
    ("local_shell", {"type": "exec", "command": ["sh", "-c", "ls"]}, ("shell", "ls")),
    ("run_shell_command", {"command": "ls", "description": "list"}, ("shell", "ls")),
    ("Read", {"file_path": "/home/dev/shop/tax.py", "limit": 40}, ("read", ("/home/dev/shop/tax.py",))),
    ("read_file", {"absolute_path": "/a/b.py"}, ("read", ("/a/b.py",))),
    ("apply_patch", "*** Begin Patch\n*** Update File: b.py\n*** Add File: a.py\n*** End Patch",
     ("edit", ("a.py", "b.py"))),
    ("replace", {"file_path": "/x/tax.py", "old_string": "a", "new_string": "b"}, ("edit", ("/x/tax.py",))),
    ("mcp__github__search", {"q": 1}, ("tool", "mcp__github__search", '{"q":1}')),
    ({"not": "a name"}, {}, ("tool", '{"not":"a name"}', "{}")),
])
def test_a_tool_call_is_an_action(name: Any, tool_input: Any, expected: tuple[Any, ...]) -> None:
    assert action(name, tool_input) == expected


def call(name: str, tool_input: Any) -> dict[str, Any]:
    return {"toolCallId": "call-0", "toolName": name, "toolInput": tool_input}


def test_paths_match_absolute_and_relative_spellings_at_a_slash() -> None:
    claude = call("Edit", {"file_path": "/home/dev/shop/tax.py"})
    assert same_step("tool_call", claude, "tool_call", call("apply_patch", "*** Update File: tax.py\n"))
    assert same_step("tool_call", claude, "tool_call", call("replace", {"file_path": "./tax.py"}))
    assert not same_step("tool_call", claude, "tool_call", call("apply_patch", "*** Update File: ax.py\n"))
    assert not same_step("tool_call", claude, "tool_call", call("Read", {"file_path": "/home/dev/shop/tax.py"}))


@pytest.mark.parametrize(("a", "b", "same"), [
    ({"toolName": "Bash", "error": "Exit code 1\nboom"},
     {"toolName": "shell", "result": {"output": "boom\n", "metadata": {"exit_code": 1}}}, True),
    ({"toolName": "Bash", "result": "2 passed"},
     {"toolName": "shell", "result": {"output": "2 passed\n", "metadata": {"exit_code": 0}}}, True),
    ({"toolName": "Bash", "result": "2 passed"},
     {"toolName": "exec_command", "result": "Chunk ID: a\nWall time: 0.1 seconds\nProcess exited with code 0\n"
                                            "Output:\n2 passed\n"}, True),
    ({"toolName": "Bash", "result": "2 passed"},
     {"toolName": "run_shell_command", "result": "Command: pytest\nDirectory: (root)\nOutput: 2 passed\n"
                                                 "Error: (none)\nExit Code: 0\nSignal: (none)"}, True),
    ({"toolName": "Bash", "result": "2 passed"}, {"toolName": "shell", "result": "1 failed"}, False),
    ({"toolName": "Bash", "result": "ok"}, {"toolName": "shell", "error": "denied"}, False),
    ({"toolName": "Edit", "result": "The file was updated."},
     {"toolName": "apply_patch", "result": {"output": "Success.", "metadata": {"exit_code": 0}}}, True),
    ({"toolName": "Read", "result": "     1\tRATE"}, {"toolName": "shell", "result": "RATE"}, False),
])
def test_results_compare_by_failure_and_output(a: dict[str, Any], b: dict[str, Any], same: bool) -> None:
    assert same_step("tool_result", a, "tool_result", b) is same


def test_requests_compare_by_the_users_words_and_answers_by_kind() -> None:
    claude = {"messages": [{"role": "user", "content": "Fix it."}], "tools": [{"name": "Bash"}]}
    codex = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Fix it. "}]}], "tools": [],
             "model": "gpt-5-codex"}
    assert same_step("model_input", claude, "model_input", codex)
    assert not same_step("model_input", claude, "model_input", {"messages": [{"role": "user", "content": "No."}]})
    assert same_step("model_output", {"type": "final_answer", "text": "a"}, "model_output",
                     {"type": "final_answer", "text": "b"})
    assert not same_step("model_output", {"type": "final_answer", "text": "a"}, "model_output",
                         {"type": "tool_calls", "calls": [call("Bash", {"command": "ls"})]})
    assert not same_step("model_input", claude, "model_output", claude)


def test_the_agent_of_an_import_is_read_from_its_tools() -> None:
    for name, agent in (("claude-code-tax", "claude-code"), ("codex-tax", "codex"), ("gemini-tax-rewind", "gemini")):
        assert agent_of(load(IMPORT / f"{name}.expected.json").steps) == agent
    assert agent_of(load(FIXTURES / "traces" / "fork-parent.v2.json").steps) is None


@pytest.mark.parametrize("other", ["codex-tax", "gemini-tax-rewind", "codex-long-compacted"])
def test_the_lazy_diff_across_agents_is_the_eager_one(other: str) -> None:
    a, b = IMPORT / "claude-code-tax.expected.json", IMPORT / f"{other}.expected.json"
    eager = diff(load(a), load(b), agents=True).to_dict()
    lazy = diff_lazy(load_lazy(a), load_lazy(b), agents=True).to_dict()
    assert json.dumps(eager, sort_keys=True, default=str) == json.dumps(lazy, sort_keys=True, default=str)
    assert eager["mode"] == "agents"
