"""Every credential shape the key check refuses is one the README's policy masks, so a recording under it is
never refused for one; and a recording that is refused (no policy) keeps the run before the refused step and
says so in one line — never a traceback from `bb.finish`, never the whole run lost.  Through `blackbox record
-- python agent.py` (the real anthropic SDK against the fake API) with the policy the README shows."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackbox.format.cassette import load
from blackbox.format.secrets import CREDENTIAL_SHAPES
from blackbox.format.verify import neutrality_problem, verify
from blackbox.redaction.apply import Redactor
from blackbox.redaction.policy import policy_from_table
from tests.fakeapi import FakeAPI, anthropic_message, turn_brain
from tests.test_launcher import ROOT
from tests.test_launcher import blackbox as launch

pytest_plugins = ["tests.conftest_fakeapi"]

TOKEN = "sk-test-51HqLyjWDarjtT1zdp7dc_4eC39HqLyjWDarjtT1zdp7dc"


def readme_policy() -> str:
    """The `[tool.blackbox.redact]` block the README's "Redaction" section tells users to put in pyproject.toml."""
    section = (ROOT / "README.md").read_text().split("## Redaction", 1)[1]
    block = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert block is not None and "[tool.blackbox.redact]" in block[1] and "cloud-key" in block[1]
    return block[1]


def readme_redactor() -> Redactor:
    import tomllib

    table = tomllib.loads(readme_policy())["tool"]["blackbox"]["redact"]
    return Redactor(policy_from_table(table, "README"), b"k" * 32, "test")


REDACTOR = readme_redactor()
_AROUND = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)


def _planted(kind: int) -> st.SearchStrategy[str]:
    return st.tuples(_AROUND, st.sampled_from(CREDENTIAL_SHAPES).flatmap(
        lambda shape: st.from_regex(re.compile(shape[kind], re.ASCII), fullmatch=True)), _AROUND).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(_planted(2), min_size=1, max_size=3), outside=_planted(3))
def test_every_shape_the_key_check_refuses_is_masked_by_the_readme_policy(texts: list[str], outside: str) -> None:
    """Any text holding a shape verify refuses in user data (a tool result, a prompt), or the looser form it
    refuses outside user data (a tool's description), passes verify once the README's policy redacted it."""
    result: dict[str, Any] = {"toolCallId": "call-0", "toolName": "read_config",
                              "result": {"values": texts, texts[0]: "as a key"}}
    assert neutrality_problem(REDACTOR("tool_result", result), [], "payload") is None
    request = {"messages": [{"role": "user", "content": texts[-1]}],
               "tools": [{"name": "read_config", "description": outside}]}
    redacted = REDACTOR("model_input", request)
    assert neutrality_problem(redacted, [], "payload") is None
    assert REDACTOR("model_input", redacted) == redacted  # applying it again changes nothing


def agent_script(tools: str, prompt: str) -> str:
    """An agent on the anthropic SDK (the fake API's URL and a key from the environment) that sends each tool
    result to the model as `json.dumps(...)` text; `tools` is the dict of its tools, as Python source."""
    return f"""
import json
import anthropic
import blackbox

bb = blackbox.session()
client = anthropic.Anthropic(http_client=bb.http_client(), max_retries=0)
tools = bb.tools({tools})
messages = [{{"role": "user", "content": {prompt!r}}}]
for _ in range(6):
    reply = client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=messages, tools=[
        {{"name": name, "description": name, "input_schema": {{"type": "object"}}}} for name in tools])
    uses = [b for b in reply.content if b.type == "tool_use"]
    if not uses:
        break
    messages.append({{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]}})
    messages.append({{"role": "user", "content": [{{"type": "tool_result", "tool_use_id": u.id,
                                                  "content": json.dumps(tools[u.name](**u.input))}} for u in uses]}})
bb.finish()
print("DONE")
"""


AGENT = agent_script(f'{{"read_config": lambda: {{"service": "billing", "token": {TOKEN!r}}}}}',
                     "Which billing token is set?")


def brain() -> Any:
    return turn_brain([anthropic_message(tool_uses=[("read_config", {})]), anthropic_message(text="A key is set.")])


@pytest.fixture
def project(tmp_path: Path, fake_api: FakeAPI) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT)
    fake_api.brain = brain()
    return folder, {"ANTHROPIC_BASE_URL": fake_api.url, "ANTHROPIC_API_KEY": "test-recording-key",
                    "BLACKBOX_REDACT_KEY": "a test key of thirty-two characters"}


def test_under_the_readmes_policy_a_tool_result_holding_a_key_records_and_replays(
        project: tuple[Path, dict[str, str]], fake_api: FakeAPI) -> None:
    folder, env = project
    (folder / "pyproject.toml").write_text('[project]\nname = "agent"\n\n' + readme_policy())
    result = launch("record", "--out", "run.json", "--", sys.executable, "agent.py", env=env, cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "recorded run.json: " in result.stdout and "DONE" in result.stdout
    text = (folder / "run.json").read_text()
    assert TOKEN not in text and "[redacted:cloud-key:" in text and verify(folder / "run.json").ok
    fake_api.reset()
    result = launch("replay", "run.json", "--", sys.executable, "agent.py", env=env, cwd=folder)
    assert result.returncode == 0 and "PASS" in result.stdout, result.stdout + result.stderr
    assert not fake_api.requests


def test_a_refused_recording_keeps_the_run_before_it_and_says_so_in_one_line(
        project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project  # no policy anywhere: the key in the tool result is refused
    result = launch("record", "--out", "run.json", "--", sys.executable, "agent.py", env=env, cwd=folder)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "DONE" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert "step 3: payload.result.token: an API key" in line  # the step, the path, what it holds
    assert "the run before it (steps 0–2) was kept in run.refused.json" in line
    assert "the `cloud-key` detector of a redaction policy (docs/format.md#redaction)" in line  # the remedy
    assert TOKEN not in result.stdout + result.stderr
    assert not (folder / "run.json").exists()  # the refused cassette itself is never written
    kept = folder / "run.refused.json"
    assert verify(kept).ok and TOKEN not in kept.read_text()
    assert [s.type for s in load(kept).steps] == ["model_input", "model_output", "tool_call"]
    assert sorted(p.name for p in folder.iterdir()) == ["agent.py", "run.refused.json"]  # no journal left
