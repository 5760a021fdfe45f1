"""What the README shows a new user works as shown: the `--script` replies example is a replies file the fork
accepts, and the frameworks' install lines name the versions the tests run (pyproject's test extra)."""

from __future__ import annotations

import re
from pathlib import Path

from blackbox.fork.plan import load_script

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_script_format_is_shown_where_script_first_appears_and_loads(tmp_path: Path) -> None:
    first = README.index("--script")
    block = re.search(r"```json\n(.*?)```", README[first:], re.S)
    assert block is not None and block.start() < 2500, "the replies format must follow the first --script"
    replies = tmp_path / "replies.json"
    replies.write_text(block.group(1))
    loaded = load_script(replies)
    assert [r["type"] for r in loaded] == ["tool_calls", "final_answer"]


def test_the_frameworks_have_install_lines_with_the_tested_versions() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    installs = [line for line in README.splitlines() if line.startswith("pip install ")]
    for package in ("openai-agents", "pydantic-ai-slim", "langchain", "langgraph", "langchain-openai",
                    "langchain-anthropic", "langchain-google-genai"):
        tested = re.search(rf'"({re.escape(package)}[^"a-z-][^"]*)"', pyproject)
        assert tested is not None
        assert any(f"'{tested.group(1)}'" in line for line in installs), tested.group(1)


def test_the_readme_test_command_is_what_ci_runs() -> None:
    """`.ci/run` runs exactly the README's test command (after making the venv), so a green CI means the command
    a newcomer copies works."""
    shown = re.search(r"python3 -m venv \.venv && \. \.venv/bin/activate && (pip install -e .*)$", README, re.M)
    assert shown is not None, "the README must show the test command"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert shown.group(1) in ci, f"{shown.group(1)!r} is not a line of .ci/run"
