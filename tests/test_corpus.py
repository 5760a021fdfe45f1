"""The corpus: example agents written as their SDK's or framework's authors write them (tests/corpus/, one file
each, adapted only as the README says), each run as a script through the real CLI against the fake API's
generic brain: `blackbox record` → `blackbox verify` → `blackbox replay` offline → `blackbox fork --script` and
`--live` at the first tool result → `blackbox diff`.  tests/corpus/README.md is the agent-file contract."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import load
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI
from tests.fakeapi_generic import generic_brain
from tests.fakeapi_threads import ThreadServer

CORPUS = Path(__file__).parent / "corpus"
AGENTS = sorted(path for path in CORPUS.glob("*.py") if not path.name.startswith("_"))
ROOT = Path(__file__).parent.parent
KEYS = {"OPENAI_API_KEY": "sk-proj-corpus-0123456789abcdefghijklmnopqrst",
        "ANTHROPIC_API_KEY": "sk-ant-api03-corpus-0123456789abcdefghijkl",
        "GEMINI_API_KEY": "AIzaSyCORPUS-0123456789abcdefghijklmnopq"}


def contract(agent: Path) -> dict[str, Any]:
    """The agent's `CORPUS = {...}` literal (read, never imported: the test process stays free of the SDKs)."""
    for node in ast.parse(agent.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CORPUS" for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, dict), f"{agent.name}: CORPUS must be a dict"
            return value
    raise AssertionError(f"{agent.name}: no CORPUS = {{...}} (tests/corpus/README.md)")


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    """One fake API for the whole corpus, answering every agent with the generic brain (holding Anthropic's
    message threads as the API does, for the tool runner and `beta.messages.thread`)."""
    fake = FakeAPI().start()
    fake.brain = ThreadServer(generic_brain)
    try:
        yield fake
    finally:
        fake.close()
    assert not fake.brain_errors, f"the generic brain failed: {fake.brain_errors[0]!r}"


@pytest.fixture
def agent_env(api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> FakeAPI:
    """The environment an agent meets: every SDK's base URL on the fake API (read by the SDKs themselves, so the
    agents name none) and a key for each (the launcher replaces them with placeholders in replay)."""
    for name, value in {**KEYS, "OPENAI_BASE_URL": api.openai_url, "ANTHROPIC_BASE_URL": api.url,
                        "GOOGLE_GEMINI_BASE_URL": api.url}.items():
        monkeypatch.setenv(name, value)
    for name in ("GOOGLE_API_KEY", "BLACKBOX_POLICY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    api.brain_errors.clear()
    return api


def forked(value: Any) -> Any:
    """The recorded result with its first text changed (numbers moved when it has none): a value of the same
    shape, which the tool's return annotation rebuilds as it rebuilt the recorded one."""
    found = [False]

    def change(item: Any) -> Any:
        if isinstance(item, str) and not found[0]:
            found[0] = True
            return "forked " + item
        if isinstance(item, dict):
            return {key: change(child) for key, child in item.items()}
        if isinstance(item, list):
            return [change(child) for child in item]
        return item

    changed = change(value)
    return changed if found[0] else (value + 1 if isinstance(value, int | float) else "forked")


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> str:
    code, out, err = run_cli(capsys, *args)
    assert code == 0, f"blackbox {args[0]} exited {code}:\n{out}\n{err}"
    return out + err


@pytest.mark.parametrize("agent", AGENTS, ids=[path.stem for path in AGENTS])
def test_the_agent_records_replays_forks_and_diffs(agent: Path, agent_env: FakeAPI, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    spec = contract(agent)
    for module in spec.get("needs", []):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    command = ["--", sys.executable, str(agent)]
    run = tmp_path / "run.json"

    cli(capsys, "record", "--out", run, *command)
    cassette = load(run)
    ending = cassette.steps[-1].payload
    assert ending.get("status") == "success", f"{agent.name} recorded {ending}"
    tool_results = [step for step in cassette.steps if step.type == "tool_result"]
    assert tool_results, f"{agent.name}: the run called no wrapped tool"
    assert all("error" not in step.payload for step in tool_results), [s.payload for s in tool_results]
    cli(capsys, "verify", run)

    asked = len(agent_env.requests)
    cli(capsys, "replay", run, *command)
    assert len(agent_env.requests) == asked, "replay reached the API"

    name = spec.get("fork_at")
    fork_at = [step for step in tool_results if name in (None, step.payload["toolName"])]
    assert fork_at, f"{agent.name}: no result of {name} to fork at"
    at = fork_at[0].index
    value = json.dumps(forked(fork_at[0].payload["result"]))
    replies = [step.payload for step in cassette.steps[at:] if step.type == "model_output"]
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies or [{"type": "final_answer", "text": "(never asked)"}]))
    fork = tmp_path / "fork.json"
    cli(capsys, "fork", run, "--at", at, "--set", value, "--out", fork, "--script", script, *command)
    assert len(agent_env.requests) == asked, "a scripted fork reached the API"
    cli(capsys, "verify", fork)

    live = tmp_path / "live.json"
    cli(capsys, "fork", run, "--at", at, "--set", value, "--out", live, "--live", *command)
    assert len(agent_env.requests) > asked, "the live fork never asked the API"
    cli(capsys, "verify", live)
    assert load(live).steps[at].payload["result"] == json.loads(value)

    code, out, _ = run_cli(capsys, "diff", run, live, "--json")
    report = json.loads(out)
    assert code == 0 and report["firstDivergence"] == at and report["changedValue"]["key"] == "result", report
