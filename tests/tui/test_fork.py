"""Fork screen: validation as you type, remembered settings, the subprocess it runs, cancel and failure."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from textual.widgets import Button, Input, Label, Log, RadioButton, RadioSet, Static, TextArea

from blackbox.format.cassette import load
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.screens.fork import ForkScreen, default_out, fork_argv
from blackbox_tui.state import ForkSettings, recall_fork, state_file
from blackbox_tui.widgets.json_editor import JsonEditor, json_problem
from tests.tui.conftest import SIZE, TRIAGE, make_app, settle
from tests.waiting import pilot_until

pytestmark = pytest.mark.anyio
pytest_plugins = ["tests.conftest_fakeapi"]

REPLIES = TRIAGE.parent / "inputs" / "urgent-replies.json"
READING = TRIAGE.parent / "inputs" / "live-reading.json"


async def open_fork(pilot, at: int = 5) -> ForkScreen:
    await settle(pilot)
    await pilot.press(*["j"] * at, "f")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ForkScreen)
    return screen


def problem_text(screen: ForkScreen) -> str:
    return str(screen.query_one("#fork-problem", Static).render())


async def fill(pilot, screen: ForkScreen, command: str, script: Path | None = REPLIES) -> None:
    """Continue with the agent `command` (and the replies file `script`)."""
    screen.query_one("#runner", RadioSet).query_one("#agent", RadioButton).value = True
    await pilot.pause()
    assert screen.runner == "agent"
    screen.query_one("#command", Input).value = command
    if script is not None:
        screen.query_one("#script-path", Input).value = str(script)
    await pilot.pause()


async def test_f_opens_the_fork_screen_prefilled_with_the_recorded_result(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        editor = screen.query_one("#value", JsonEditor)
        assert json.loads(editor.text) == json.loads(json.dumps(screen.step.payload["result"]))
        assert screen.query_one("#out", Input).value == str(default_out(incident_copy, 5))
        assert "-fork-at-5.json" in screen.query_one("#out", Input).value
        # nothing to run yet: no command, no replies file
        assert screen.query_one("#run", Button).disabled
        assert "replies file" in problem_text(screen)


async def test_invalid_json_disables_run_and_says_where(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        await fill(pilot, screen, "python agent.py")
        assert not screen.query_one("#run", Button).disabled
        area = screen.query_one("#value", JsonEditor).query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)
        await pilot.press("backspace")  # drop the closing brace
        await pilot.pause()
        error = str(screen.query_one("#value .json-error", Static).render())
        assert error.startswith("✗ not JSON")
        assert screen.query_one("#run", Button).disabled
        assert "the new result is not JSON" in problem_text(screen)
        await pilot.press("}")
        await pilot.pause()
        assert str(screen.query_one("#value .json-error", Static).render()) == "✓ valid JSON"
        assert not screen.query_one("#run", Button).disabled


async def test_out_path_must_not_be_the_parent(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        await fill(pilot, screen, "python agent.py")
        screen.query_one("#out", Input).value = str(incident_copy.parent / "." / incident_copy.name)
        await pilot.pause()
        assert screen.query_one("#run", Button).disabled
        assert "another file than its parent" in problem_text(screen)
        hard_link = incident_copy.with_name("same-file.json")  # another name, the same file (docs/format.md, "Fork")
        hard_link.hardlink_to(incident_copy)
        screen.query_one("#out", Input).value = str(hard_link)
        await pilot.pause()
        assert "another file than its parent" in problem_text(screen)


async def test_inline_replies_are_validated_as_an_array(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        await fill(pilot, screen, "python agent.py", script=None)
        screen.query_one("#continuation", RadioSet).query_one("#inline").value = True
        await pilot.pause()
        assert screen.continuation == "inline"
        replies = screen.query_one("#replies", JsonEditor)
        replies.text = '{"type": "final_answer", "text": "x"}'
        await pilot.pause()
        assert "must be a JSON array" in problem_text(screen)
        assert screen.query_one("#run", Button).disabled
        replies.text = '[{"type": "final_answer", "text": "x"}]'
        await pilot.pause()
        assert not screen.query_one("#run", Button).disabled


def test_json_problem_names_line_and_column() -> None:
    assert json_problem('{\n  "a": 1,\n  "b": x\n}') == "not JSON at line 3, column 8: invalid character"
    assert json_problem("") is not None
    assert json_problem("[1, 2]", want_list=True) is None
    assert json_problem('"text"') is None


def test_fork_argv_is_the_cli_contract(tmp_path: Path) -> None:
    argv = fork_argv(tmp_path / "p.json", 5, tmp_path / "v.json", tmp_path / "o.json",
                     ["--script", "r.json"], ["python", "agent.py"])
    assert argv[:3] == [sys.executable, "-m", "blackbox"]
    assert argv[3:] == ["fork", str(tmp_path / "p.json"), "--at", "5", "--set", f"@{tmp_path / 'v.json'}",
                        "--out", str(tmp_path / "o.json"), "--script", "r.json", "--", "python", "agent.py"]


async def test_a_failing_agent_leaves_the_log_and_the_error_on_screen(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        await fill(pilot, screen, f"{sys.executable} -c \"import sys; print('agent says hi'); sys.exit(3)\"")
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ForkScreen)
        log = "\n".join(screen.query_one("#fork-log", Log).lines)
        assert "$ blackbox fork" in log and "--set @" in log and "--script" in log
        assert "agent says hi" in log
        status = str(screen.query_one("#fork-status", Static).render())
        assert status.startswith("error: the fork exited with status")
        assert not screen.query_one("#run", Button).disabled
        assert not default_out(incident_copy, 5).exists()
    # the command and continuation are remembered for this cassette, atomically, in the state folder
    assert state_file().is_file()
    remembered = recall_fork(incident_copy)
    assert remembered is not None and "agent says hi" in remembered.command
    assert remembered.continuation == "script" and remembered.script == str(REPLIES)


async def test_remembered_settings_prefill_the_screen(incident_copy: Path, monkeypatch) -> None:
    from blackbox_tui.state import remember_fork

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")  # the recorded model is a Claude model

    remember_fork(incident_copy, ForkSettings(command="python triage.py", continuation="live"))
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        assert screen.query_one("#command", Input).value == "python triage.py"
        assert screen.runner == "agent"
        assert screen.continuation == "live"
        assert not screen.query_one("#run", Button).disabled


async def test_cancel_stops_a_running_fork_and_the_ui_stays_responsive(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    agent = f"{sys.executable} -u -c \"import time; print('agent started', flush=True); time.sleep(60)\""
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        await fill(pilot, screen, agent)
        await pilot.press("ctrl+r")
        log = screen.query_one("#fork-log", Log)
        # wait until the agent runs (the UI keeps answering meanwhile)
        await pilot_until(pilot, lambda: any("agent started" in line for line in log.lines), "the agent's start")
        assert screen.process is not None
        assert screen.query_one("#run", Button).disabled
        await pilot.press("escape")  # refused while running: still here
        assert app.screen is screen
        await pilot.press("ctrl+g")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.process is None
        assert "cancelled" in str(screen.query_one("#fork-status", Static).render())
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


AGENT = Path(__file__).with_name("triage_agent.py")


async def test_fork_runs_the_agent_and_opens_the_diff_at_the_fork_point(incident_copy: Path) -> None:
    """The whole loop: edit the reading, run `blackbox fork … --script … -- python triage_agent.py`, see the diff."""
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        screen.query_one("#value", JsonEditor).text = READING.read_text(encoding="utf-8")
        await fill(pilot, screen, f"{sys.executable} {AGENT}")
        assert not screen.query_one("#run", Button).disabled
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        diff = app.screen
        if diff is screen:  # still here: the fork failed; say why
            log = "\n".join(screen.query_one("#fork-log", Log).lines)
            pytest.fail(f"the fork failed:\n{log}")
        from blackbox_tui.screens.diff import DiffScreen

        assert isinstance(diff, DiffScreen)
        assert diff.comparison.first_divergence == 5
        assert diff.table.cursor == 5
        assert "result.data[0].dp.value" in str(diff.query_one("#changes", Static).render())
        out = incident_copy.with_name("triage-incident-fork-at-5.json")  # the first fork of step 5
        assert out.is_file()


# -- the second pass: keys, sizes, the key check, continuing without the agent, the demo --------------------


async def test_tab_leaves_the_editor_one_escape_goes_back(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        area = screen.query_one("#value", JsonEditor).query_one(TextArea)
        assert app.focused is area
        before = area.text
        await pilot.press("tab")
        assert app.focused is not area and area.text == before  # no indentation inserted
        area.focus()
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


async def test_ctrl_a_selects_all_and_a_paste_replaces_it(incident_copy: Path) -> None:
    from textual import events

    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        assert "ctrl+a selects all" in str(screen.query_one("#value-box Label", Label).render())
        area = screen.query_one("#value", JsonEditor).query_one(TextArea)
        await pilot.press("ctrl+a")
        assert area.selected_text == area.text
        app.post_message(events.Paste('{"value": "124"}'))  # as a terminal's paste arrives: at the app
        await pilot.pause()
        assert area.text == '{"value": "124"}'


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_the_fork_screen_fits_small_terminals(incident_copy: Path, size: tuple[int, int]) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=size) as pilot:
        screen = await open_fork(pilot)
        await pilot.pause()
        area = screen.query_one("#value", JsonEditor).query_one(TextArea)
        assert area.region.height >= 7, area.region  # room for the value, not zero lines
        screen_region = screen.region
        for selector in ("#run", "#fork-problem", "#fork-status"):
            widget = screen.query_one(selector)
            assert screen_region.contains_region(widget.region), (selector, widget.region)
        if size == (80, 24):  # side by side: every setting is on screen without scrolling
            for selector in ("#runner", "#continuation", "#script-path", "#out"):
                region = screen.query_one(selector).region
                assert region.height > 0 and screen_region.contains_region(region), (selector, region)
        else:  # stacked: the settings are below the editor, and focusing one scrolls it into view
            screen.query_one("#out", Input).focus()
            await pilot.pause()
            region = screen.query_one("#out", Input).region
            assert region.height > 0 and screen_region.contains_region(region), region


async def test_live_without_a_key_is_refused_before_running(incident_copy: Path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        screen.query_one("#continuation", RadioSet).query_one("#live", RadioButton).value = True
        await pilot.pause()
        assert "ANTHROPIC_API_KEY is not set" in problem_text(screen)  # Blackbox continuing: the model's API
        await fill(pilot, screen, "python agent.py")
        screen.query_one("#continuation", RadioSet).query_one("#live", RadioButton).value = True
        await pilot.pause()
        assert "ANTHROPIC_API_KEY is not set" in problem_text(screen)  # the agent's SDK would need it too
        assert screen.query_one("#run", Button).disabled
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        screen.validate()
        assert not screen.query_one("#run", Button).disabled


async def test_a_failing_agent_reports_its_last_error_line(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    agent = f"{sys.executable} -c \"import sys; sys.exit('ModuleNotFoundError: No module named anthropic')\""
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        await fill(pilot, screen, agent)
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(screen.query_one("#fork-status", Static).render())
        assert status.startswith("error: the fork exited with status")
        assert "the log above" not in status
        assert status.count("\n") == 0


async def test_what_if_from_inline_replies_opens_the_diff_at_the_fork_point(incident_copy: Path) -> None:
    from blackbox_tui.screens.diff import DiffScreen

    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        assert screen.runner == "whatif"  # nothing remembered: Blackbox continues by itself
        screen.query_one("#value", JsonEditor).text = READING.read_text(encoding="utf-8")
        screen.query_one("#continuation", RadioSet).query_one("#inline", RadioButton).value = True
        screen.query_one("#replies", JsonEditor).text = '[{"type": "final_answer", "text": "Urgent: VAN-14."}]'
        await pilot.pause()
        assert problem_text(screen) == ""
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        diff = app.screen
        assert isinstance(diff, DiffScreen), str(screen.query_one("#fork-status", Static).render())
        assert diff.comparison.first_divergence == 5 and diff.table.cursor == 5
        fork = load(incident_copy.with_name("triage-incident-fork-at-5.json"))
        assert fork.parentId == "triage-incident" and fork.steps[-2].payload["text"] == "Urgent: VAN-14."


async def test_what_if_live_against_the_fake_api(incident_copy: Path, fake_api, monkeypatch) -> None:
    from blackbox_tui.screens.diff import DiffScreen
    from tests.fakeapi import anthropic_message

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    fake_api.queue(anthropic_message(text="124 °C: open an urgent work order."))
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        screen.query_one("#value", JsonEditor).text = READING.read_text(encoding="utf-8")
        screen.query_one("#continuation", RadioSet).query_one("#live", RadioButton).value = True
        await pilot.pause()
        assert screen.query_one("#model-name", Input).value == "claude-haiku-4-5"
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen), str(screen.query_one("#fork-status", Static).render())
        assert app.screen.table.cursor == 5
    assert fake_api.paths() == ["/v1/messages"]
    sent = [b for m in fake_api.bodies()[0]["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b["type"] == "tool_result"]
    assert json.loads(sent[-1]["content"]) == json.loads(READING.read_text(encoding="utf-8"))


async def test_the_demo_fork_finishes_without_an_agent(tmp_path: Path, monkeypatch) -> None:
    from blackbox.demo import demo_pair
    from blackbox_tui.app import BlackboxApp, load_runs
    from blackbox_tui.screens.diff import DiffScreen

    monkeypatch.chdir(tmp_path / "state" if (tmp_path / "state").is_dir() else tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    parent, _ = demo_pair(scratch)
    app = BlackboxApp(load_runs([parent]), demo=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot, at=3)
        assert screen.runner == "demo"
        screen.query_one("#value", JsonEditor).text = '{"results": [], "available": false}'
        await pilot.pause()
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen), str(screen.query_one("#fork-status", Static).render())
    assert (scratch / "example-trace-fork-at-3.json").is_file()
    assert not (tmp_path / "traces").exists()


async def test_what_if_asks_for_the_result_of_a_call_the_run_never_made(incident_copy: Path) -> None:
    from blackbox_tui.screens.diff import DiffScreen
    from blackbox_tui.screens.tool_answer import ToolResultPrompt

    replies = [{"type": "tool_call", "toolName": "get_service_history", "toolInput": {"vehicle_id": "VAN-99"}},
               {"type": "final_answer", "text": "VAN-99 has no history."}]
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork(pilot)
        screen.query_one("#continuation", RadioSet).query_one("#inline", RadioButton).value = True
        screen.query_one("#replies", JsonEditor).text = json.dumps(replies)
        await pilot.pause()
        await pilot.press("ctrl+r")
        for _ in range(100):
            await pilot.pause(0.05)
            if isinstance(app.screen, ToolResultPrompt):
                break
        prompt = app.screen
        assert isinstance(prompt, ToolResultPrompt) and prompt.tool_name == "get_service_history"
        prompt.query_one("#answer", Input).value = '{"services": []}'
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen), str(screen.query_one("#fork-status", Static).render())
    fork = load(incident_copy.with_name("triage-incident-fork-at-5.json"))
    results = [s.payload for s in fork.steps if s.type == "tool_result"]
    assert results[-1]["result"] == {"services": []} and fork.steps[-1].payload["status"] == "success"
