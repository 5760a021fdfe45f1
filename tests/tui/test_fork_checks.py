"""The fork form and the agent: the form refuses every fork `blackbox fork … -- <agent>` would refuse before it
starts the agent, in the command's own words (each case runs the real command the form would run, with the
files the runner would write, and compares its error line with the form's); the agent the UI was opened with
(`blackbox tui run.json -- python agent.py`) is the one the fork continues with."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Input, RadioButton, RadioSet

from blackbox_tui.app import BlackboxApp, load_runs
from blackbox_tui.fork_files import fork_argv, input_paths
from blackbox_tui.screens.fork import ForkScreen
from blackbox_tui.widgets.json_editor import JsonEditor
from tests.tui.conftest import INCIDENT, SIZE, TRIAGE, settle
from tests.tui.test_fork import open_fork, problem_text
from tests.waiting import HANG_GUARD, pilot_until

pytestmark = pytest.mark.anyio

REPLIES = TRIAGE.parent / "inputs" / "urgent-replies.json"
AGENT = [sys.executable, "-c", "pass"]  # never started: every case is refused before the agent runs
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def cli_refusal(parent: Path, out: Path, value_text: str, continuation: list[str],
                replies_text: str | None = None) -> str:
    """What the real `blackbox fork` says when run as the fork screen's agent runner runs it (the value, and the
    inline replies, written where the runner writes them): its one error line, without `error: `."""
    value_file, replies_file = input_paths(out)
    value_file.parent.mkdir(parents=True, exist_ok=True)
    value_file.write_text(value_text, encoding="utf-8")
    if replies_text is not None:
        replies_file.write_text(replies_text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    result = subprocess.run(fork_argv(parent, 5, value_file, out, continuation, AGENT), capture_output=True,
                            text=True, timeout=HANG_GUARD, env=env, stdin=subprocess.DEVNULL)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    value_file.unlink()
    if replies_text is not None:
        replies_file.unlink()
    return lines[0].removeprefix("error: ")


async def agent_form(pilot: Any, continuation: str = "script", script: Path | None = REPLIES,
                     out: Path | None = None, replies: str | None = None, value: str | None = None) -> ForkScreen:
    """The fork screen at step 5, continued by the agent `AGENT`, settled (its parent read)."""
    screen = await open_fork(pilot)
    screen.query_one("#runner", RadioSet).query_one("#agent", RadioButton).value = True
    screen.query_one("#continuation", RadioSet).query_one(f"#{continuation}", RadioButton).value = True
    await pilot.pause()
    screen.query_one("#command", Input).value = shlex.join(AGENT)
    if script is not None:
        screen.query_one("#script-path", Input).value = str(script)
    if replies is not None:
        screen.query_one("#replies", JsonEditor).text = replies
    if value is not None:
        screen.query_one("#value", JsonEditor).text = value
    if out is not None:
        screen.query_one("#out", Input).value = str(out)
    await settle(pilot)
    screen.validate()
    await pilot.pause()
    return screen


Case = Callable[[Path, Path], Awaitable[tuple[ForkScreen, str]]]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


def parent_copy(tmp_path: Path, text: str | None = None) -> Path:
    parent = tmp_path / "runs" / "triage-incident.json"
    parent.parent.mkdir(exist_ok=True)
    parent.write_text(text if text is not None else INCIDENT.read_text(encoding="utf-8"), encoding="utf-8")
    return parent


BAD_REPLIES = '[{"type": "final_answer"}]'  # JSON, an array: but a final answer without its text


@pytest.mark.parametrize("case", ["replies file", "inline replies", "live without its key", "out a fifo",
                                  "broken chain", "a value JSON cannot hold"])
async def test_the_form_refuses_what_the_cli_refuses_in_its_words(case: str, tmp_path: Path) -> None:
    text = INCIDENT.read_text(encoding="utf-8")
    parent = parent_copy(tmp_path, text.replace('"value": "91"', '"value": "35"', 1) if case == "broken chain"
                         else None)
    out = tmp_path / "runs" / "triage-incident-fork-at-5.json"
    value = '{"vehicle_id": "VAN-14", "data": []}'
    app = BlackboxApp(load_runs([parent]))
    async with app.run_test(size=SIZE) as pilot:
        if case == "replies file":
            bad = tmp_path / "bad-replies.json"
            bad.write_text(BAD_REPLIES, encoding="utf-8")
            screen = await agent_form(pilot, script=bad, value=value)
            expected = cli_refusal(parent, out, value, ["--script", str(bad)])
        elif case == "inline replies":
            screen = await agent_form(pilot, "inline", script=None, replies=BAD_REPLIES, value=value)
            expected = cli_refusal(parent, out, value, ["--script", str(input_paths(out)[1])], BAD_REPLIES)
        elif case == "live without its key":
            screen = await agent_form(pilot, "live", script=None, value=value)
            expected = cli_refusal(parent, out, value, ["--live"])
            assert "ANTHROPIC_API_KEY" in expected
        elif case == "out a fifo":
            fifo = tmp_path / "runs" / "fifo.json"
            os.mkfifo(fifo)
            screen = await agent_form(pilot, out=fifo, value=value)
            expected = cli_refusal(parent, fifo, value, ["--script", str(REPLIES)])
            assert "is not a regular file" in expected
        elif case == "broken chain":
            screen = await agent_form(pilot, value=value)
            expected = cli_refusal(parent, out, value, ["--script", str(REPLIES)])
            assert "hash chain broken at step 5" in expected
        else:
            value = '{"reading": 1e400}'
            screen = await agent_form(pilot, value=value)
            expected = cli_refusal(parent, out, value, ["--script", str(REPLIES)])
            assert "cannot hold" in expected
        await pilot_until(pilot, lambda: screen.parent_read is not None, "the parent read")
        screen.validate()
        await pilot.pause()
        assert problem_text(screen) == f"⚠ {expected}"
        assert screen.query_one("#run", Button).disabled


async def test_a_fork_the_cli_accepts_can_run(tmp_path: Path) -> None:
    """The checks refuse nothing sound: with a replies file and an intact parent, Run is offered."""
    app = BlackboxApp(load_runs([parent_copy(tmp_path)]))
    async with app.run_test(size=SIZE) as pilot:
        screen = await agent_form(pilot)
        await pilot_until(pilot, lambda: screen.parent_read is not None, "the parent read")
        screen.validate()
        await pilot.pause()
        assert screen.problem is None
        assert not screen.query_one("#run", Button).disabled


async def test_the_agent_the_ui_was_opened_with_continues_the_fork(tmp_path: Path) -> None:
    """`blackbox tui run.json -- python agent.py`: the agent is chosen and its command filled in, over what was
    remembered for this run (here: Blackbox itself)."""
    from blackbox_tui.state import ForkSettings, remember_fork

    parent = parent_copy(tmp_path)
    remember_fork(parent, ForkSettings(runner="whatif", continuation="script", script=str(REPLIES)))
    app = BlackboxApp(load_runs([parent]), agent_command=["python", "my agent.py", "--fast"])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        assert screen.runner == "agent"
        assert screen.query_one("#command", Input).value == "python 'my agent.py' --fast"
        assert screen.query_one("#command-part").display  # shown: the agent continues
    again = BlackboxApp(load_runs([parent]))  # without it: what was remembered
    async with again.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        assert screen.runner == "whatif" and screen.query_one("#command", Input).value == ""
