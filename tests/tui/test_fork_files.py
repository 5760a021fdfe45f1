"""The fork screen's files and the model it asks: a second fork never overwrites the first, the command in
the log names files that outlive the run, a scripted fork keeps the recorded model, and the question for a
call the run never made says which tool, with what input, and the answer's form."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from textual.widgets import Input, Log, RadioButton, RadioSet

from blackbox.format.cassette import StepChain, load, save
from blackbox_tui.app import BlackboxApp, load_runs
from blackbox_tui.screens.diff import DiffScreen
from blackbox_tui.screens.fork import ForkScreen, default_out
from blackbox_tui.screens.tool_answer import FORMAT_HINT, ToolResultPrompt
from blackbox_tui.widgets.json_editor import JsonEditor
from tests.tui.conftest import SIZE, make_app, settle
from tests.tui.test_fork import fill, open_fork

pytestmark = pytest.mark.anyio

REPLIES = '[{"type": "final_answer", "text": "Urgent: VAN-14."}]'


async def inline_what_if(pilot, screen: ForkScreen, replies: str = REPLIES) -> None:
    screen.query_one("#continuation", RadioSet).query_one("#inline", RadioButton).value = True
    screen.query_one("#replies", JsonEditor).text = replies
    await pilot.pause()


async def wait_for_screen(pilot, kind: type) -> None:
    while not isinstance(pilot.app.screen, kind):
        await pilot.pause(0.05)


async def test_a_second_fork_from_the_same_step_gets_its_own_file(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        first = Path(screen.query_one("#out", Input).value)
        await inline_what_if(pilot, screen)
        await pilot.press("ctrl+r")
        await wait_for_screen(pilot, DiffScreen)
        await settle(pilot)
        await pilot.press("f")  # the diff's cursor is on the fork point: fork again from there
        await wait_for_screen(pilot, ForkScreen)
        again = app.screen
        second = Path(again.query_one("#out", Input).value)
        assert first.name == "triage-incident-fork-at-5.json"
        assert second.name == "triage-incident-fork-at-5-2.json"
        await inline_what_if(pilot, again, '[{"type": "final_answer", "text": "Second thoughts."}]')
        await pilot.press("ctrl+r")
        await wait_for_screen(pilot, DiffScreen)
    cwd_relative = incident_copy.parent
    assert load(cwd_relative / first.name).steps[-1].payload["result"] == "Urgent: VAN-14."
    assert load(cwd_relative / second.name).steps[-1].payload["result"] == "Second thoughts."
    assert default_out(incident_copy, 5).name == "triage-incident-fork-at-5-3.json"


async def test_the_command_in_the_log_reads_files_that_stay_beside_the_fork(incident_copy: Path) -> None:
    """The log's `$ blackbox fork …` can be run again after the UI ran it: its value and replies files stay."""
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        await fill(pilot, screen, f"{sys.executable} -c \"import sys; sys.exit(3)\"", script=None)
        screen.query_one("#continuation", RadioSet).query_one("#inline", RadioButton).value = True
        screen.query_one("#replies", JsonEditor).text = REPLIES
        await pilot.pause()
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        log = screen.query_one("#fork-log", Log).lines
        value_text = screen.query_one("#value", JsonEditor).text
    command = shlex.split(next(line for line in log if line.startswith("$ "))[2:])
    value_file = Path(command[command.index("--set") + 1].removeprefix("@"))
    replies_file = Path(command[command.index("--script") + 1])
    out = Path(command[command.index("--out") + 1])
    assert value_file.parent == replies_file.parent == out.parent  # beside the fork
    assert value_file.read_text(encoding="utf-8") == value_text
    assert json.loads(replies_file.read_text(encoding="utf-8")) == json.loads(REPLIES)
    assert value_file.suffix == ".value" and replies_file.suffix == ".replies"  # not cassettes to `list`


def _without_model(source: Path, path: Path) -> Path:
    """`source` with no `model` in its requests (as an imported session records none), re-chained."""
    parent = load(source)
    chain = StepChain(parent.id)
    for step in parent.steps:
        payload = step.payload
        if step.type == "model_input":
            payload = {k: v for k, v in payload.items() if k != "model"}
        chain.append(step.type, step.timestamp, payload)
    save(chain.cassette(parent.createdAt), path)
    return path


async def test_a_scripted_what_if_keeps_the_recorded_model_whatever_was_typed_for_a_live_one(
        incident_copy: Path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    parent = _without_model(incident_copy, incident_copy.with_name("no-model.json"))
    app = BlackboxApp(load_runs([parent]))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        out = Path(screen.query_one("#out", Input).value)
        screen.query_one("#continuation", RadioSet).query_one("#live", RadioButton).value = True
        await pilot.pause()
        screen.query_one("#model-name", Input).value = "claude-sonnet-4-5"  # for a live run, then not used
        await inline_what_if(pilot, screen)
        await pilot.press("ctrl+r")
        await wait_for_screen(pilot, DiffScreen)
        await settle(pilot)
        behavioural = app.screen.first_behavioural
    fork = load(parent.parent / out.name)
    assert all("model" not in s.payload for s in fork.steps if s.type == "model_input")
    assert behavioural == 7  # the new reply; the request before it (step 6) differs only by the edited value


async def test_the_question_for_an_unmade_call_shows_the_tool_its_input_and_the_answer_form(
        incident_copy: Path) -> None:
    replies = [{"type": "tool_call", "toolName": "get_service_history",
                "toolInput": {"vehicle_id": "VAN-99", "since": "2026-01-01"}},
               {"type": "final_answer", "text": "VAN-99 has no history."}]
    app = make_app(incident_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_fork(pilot)
        out = Path(screen.query_one("#out", Input).value)
        await inline_what_if(pilot, screen, json.dumps(replies))
        await pilot.press("ctrl+r")
        await wait_for_screen(pilot, ToolResultPrompt)
        await pilot.pause()
        prompt = app.screen
        shown = "\n".join(str(w.render()) for w in prompt.query("Label, Static"))
        assert "get_service_history" in shown and '"vehicle_id": "VAN-99"' in shown and '"since"' in shown
        assert FORMAT_HINT in shown
        box = prompt.query_one("Vertical")
        assert box.region.bottom <= 24 and prompt.query_one("#answer", Input).region.height > 0  # all on screen
        assert prompt.query_one("#answer-hint").region.height >= 2  # the hint wraps, never cut off
        await pilot.press(*'{"error": "no such vehicle"}', "enter")
        await wait_for_screen(pilot, DiffScreen)
    fork = load(incident_copy.parent / out.name)
    results = [s.payload for s in fork.steps if s.type == "tool_result"]
    assert results[-1]["error"] == "no such vehicle"
