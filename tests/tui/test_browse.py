"""Browse screen, driven with Textual's Pilot against the original's fixtures and a generated large run."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, OptionList, Static

from blackbox.format.cassette import load
from blackbox_tui.run import pretty_json
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.screens.help import HelpScreen
from blackbox_tui.screens.prompts import PathPrompt, PickOne
from blackbox_tui.widgets.conversation import ConversationView
from blackbox_tui.widgets.run_header import RunHeader
from tests.conftest import FIXTURES
from tests.tui.conftest import INCIDENT, PARENT, SIZE, make_app, settle
from tests.waiting import pilot_until

pytestmark = pytest.mark.anyio


def static_text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def toasts(app) -> list[str]:
    """The messages of the notifications on screen now."""
    return [notification.message for notification in app._notifications]


async def test_header_list_and_navigation() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        header = str(screen.query_one(RunHeader).render())
        assert "triage-incident" in header
        assert "17 steps" in header
        assert "chain intact" in header
        assert "success" in header
        table = screen.table
        assert table.step_index == 0
        await pilot.press("j", "j", "down")
        assert table.step_index == 3
        await pilot.press("k")
        assert table.step_index == 2
        await pilot.press("G")
        assert table.step_index == 16
        await pilot.press("g")
        assert table.step_index == 0
        await pilot.press("end", "up")
        assert table.step_index == 15


async def test_tool_rounds_are_nested_under_their_model_output() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        run = app.screen.run
        assert [run.nesting(i) for i in range(6)] == ["", "", "├─ ", "├─ ", "├─ ", "└─ "]
        assert run.nesting(6) == ""


async def test_detail_pane_follows_the_cursor_and_shows_json() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "j", "j", "j")
        await settle(pilot)
        shown = str(app.screen.query_one("#payload-text", Static).render())
        assert '"toolName": "get_telemetry"' in shown
        assert '"value": "91"' in shown


async def test_conversation_view_and_folding() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("G", "k", "k", "2")  # step 14: the last model_input
        await settle(pilot)
        text = str(app.screen.query_one("#conversation-text", Static).render())
        assert "system" in text and "assistant" in text and "user" in text
        assert "→ call open_work_order" in text
        assert "← result get_telemetry" in text
        assert "more lines (z unfolds)" in text
        await pilot.press("z")
        await settle(pilot)
        unfolded = str(app.screen.query_one("#conversation-text", Static).render())
        assert "z unfolds" not in unfolded
        assert app.screen.query_one(ConversationView).unfold


async def test_hash_tab_shows_hash_prevhash_and_time() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "3")
        await settle(pilot)
        steps = load(INCIDENT).steps
        facts = static_text(app.screen, "#step-facts")
        assert steps[1].hash in facts
        assert steps[0].hash in facts  # prevHash
        assert "2026-09-29 09:05:01.400 UTC" in facts
        assert "intact up to here" in facts


async def test_search_then_next_and_previous_match() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"open_work_order", "enter")
        await settle(pilot)
        screen = app.screen
        # every step mentioning the tool: the tool list of each request, the call, its result, the answer
        assert screen.matches[0] == 0
        assert 11 in screen.matches and 12 in screen.matches and 13 in screen.matches
        assert screen.table.step_index == 0
        await pilot.press("n")
        assert screen.table.step_index == screen.matches[1]
        await pilot.press("n", "N")
        assert screen.table.step_index == screen.matches[1]
        assert f"match 2 of {len(screen.matches)}" in static_text(screen, "#status")
        await pilot.press("escape")
        assert screen.matches == []


async def test_search_with_no_match_says_so() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"zebra-unicorn", "enter")
        await settle(pilot)
        assert app.screen.matches == []
        assert app.screen.table.step_index == 0
        assert toasts(app) == ['No step contains "zebra-unicorn".']
        assert 'search "zebra-unicorn": no match' in static_text(app.screen, "#status")


async def pick(pilot, option_id: str) -> None:
    picker = pilot.app.screen
    assert isinstance(picker, PickOne)
    options = picker.query_one(OptionList)
    options.highlighted = options.get_option_index(option_id)
    await pilot.press("enter")
    await settle(pilot)


async def test_filter_by_tool_and_by_type_then_clear() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("t")
        await pick(pilot, "tool:get_telemetry")
        assert list(screen.table.indices) == [4, 5]
        assert screen.table.step_index == 4
        await pilot.press("t")
        await pick(pilot, "type:model_input")
        assert list(screen.table.indices) == [0, 6, 10, 14]
        assert "filter: type:model_input (4 shown)" in static_text(screen, "#status")
        await pilot.press("escape")
        assert len(screen.table.indices) == 17


async def test_jump_to_next_error_and_next_tool_result(large_cassette: Path) -> None:
    app = make_app(large_cassette)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        run = app.screen.run
        table = app.screen.table
        await pilot.press("e")
        first_error = table.step_index
        assert run.steps[first_error].type == "tool_result" and "error" in run.steps[first_error].payload
        await pilot.press("e")
        second = table.step_index
        assert second > first_error and "error" in run.steps[second].payload
        await pilot.press("g", "r")
        assert run.steps[table.step_index].type == "tool_result"
        assert all(run.steps[i].type != "tool_result" for i in range(table.step_index))


async def test_error_jump_in_a_run_without_errors_warns() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        assert app.screen.table.step_index == 0
        assert toasts(app) == ["No error result in the steps shown."]


async def test_copy_to_clipboard_and_write_to_a_file(tmp_path: Path) -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "j", "c")
        expected = pretty_json(load(INCIDENT).steps[3].payload)
        assert app.clipboard == expected
        await pilot.press("w")
        assert isinstance(app.screen, PathPrompt)
        target = tmp_path / "out" / "step3.json"
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert target.read_text(encoding="utf-8") == expected


async def test_open_in_pager_gets_a_read_only_copy_of_the_step(tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "pager.log"
    pager = tmp_path / "fake-pager"
    pager.write_text(f'#!/bin/sh\nstat -c "mode %a" "$1" >> {log}\ncat "$1" >> {log}\n')
    pager.chmod(pager.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PAGER", str(pager))
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "p")
        await settle(pilot)
    shown = log.read_text(encoding="utf-8")
    mode = int(shown.splitlines()[0].removeprefix("mode "), 8)
    assert mode & 0o222 == 0, f"the pager got a writable copy (mode {mode:o})"
    assert '"id": "triage-incident:1"' in shown
    assert '"type": "model_output"' in shown


async def test_open_in_editor_uses_editor(tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "editor.log"
    editor = tmp_path / "fake-editor"
    editor.write_text(f'#!/bin/sh\necho "$@" > {log}\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(editor))
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
    opened = Path(log.read_text().strip())
    assert opened.name.startswith("blackbox-step-0-") and opened.suffix == ".json"
    assert not opened.exists()  # the temporary copy is removed afterwards


async def test_tampered_cassette_shows_the_break_and_stays_browsable(tampered: Path) -> None:
    app = make_app(tampered)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.has_class("-broken")
        assert "Chain broken at step 5" in static_text(screen, "#chain-banner")
        assert "chain BROKEN at step 5" in str(screen.query_one(RunHeader).render())
        await pilot.press("G", "3")
        await settle(pilot)
        assert "after the break at step 5" in static_text(screen, "#step-facts")


async def test_large_cassette_opens_and_moves(large_cassette: Path) -> None:
    app = make_app(large_cassette)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.table
        assert table.row_count == len(load(large_cassette).steps)
        await pilot.press("G")
        assert table.step_index == table.row_count - 1
        await pilot.press("pageup")
        assert table.step_index < table.row_count - 20
        # only visible rows were summarised
        assert sum(s is not None for s in app.screen.run._summaries) < 200


async def test_mouse_click_selects_a_row() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.click("#steps", offset=(5, 4))
        await settle(pilot)
        assert app.screen.table.step_index == 4


async def test_fork_key_off_a_tool_result_explains() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        assert toasts(app) == ["A fork starts at a tool_result step (tool results here: 3, 5, 9, 13); "
                               "press r to go to the next one."]


async def test_help_lists_the_screen_keys() -> None:
    app = make_app(PARENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text", Static).render())
        for words in ("Search", "Next match", "Filter", "Next error", "Diff", "Fork", "Copy", "Quit"):
            assert words in text
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


async def test_payload_view_caps_a_huge_payload() -> None:
    from blackbox_tui.widgets.payload_view import SHOW_LIMIT, json_content

    content = json_content({"text": "x" * (SHOW_LIMIT * 2)}, unfold=True)
    assert "more characters: press o or p" in content.plain
    assert len(content.plain) < SHOW_LIMIT + 200
    folded = json_content({"text": "x" * (SHOW_LIMIT * 2)})
    assert f"[{SHOW_LIMIT * 2 - 600:,} more characters; z unfolds]" in folded.plain
    assert len(folded.plain) < 700


@pytest.mark.parametrize("name", ["error-unknown-tool.v2.json", "success-final-answer.v2.json"])
async def test_other_fixtures_open(name: str) -> None:
    app = make_app(FIXTURES / "traces" / name)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "chain intact" in str(app.screen.query_one(RunHeader).render())


async def test_a_search_typed_at_once_after_the_slash_goes_into_the_box() -> None:
    """Keys sent in one burst (a fast typist, tmux send-keys, a paste): none reaches the step list, where
    `j` would move and `o` open $EDITOR; `/` typed in the box is text."""
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        driver = app._driver
        assert driver is not None
        for key, char in [("slash", "/"), ("j", "j"), ("j", "j"), ("slash", "/"), ("v", "v")]:
            driver.send_message(events.Key(key, char))
        # every key taken (a fixed pause would judge a slow machine's half-read queue)
        await pilot_until(pilot, lambda: app.screen.query("#search") and app.screen.query_one("#search", Input).value
                          == "jj/v", "the keys in the search box")
        box = app.screen.query_one("#search", Input)
        assert app.focused is box and box.value == "jj/v"
        assert app.screen.table.step_index == 0


async def test_keys_typed_at_once_after_a_key_that_opens_a_prompt_never_reach_the_step_list() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        driver = app._driver
        assert driver is not None
        for key in ["w", "j", "j", "o"]:
            driver.send_message(events.Key(key, key))
        await pilot_until(pilot, lambda: isinstance(app.screen, PathPrompt), "the prompt")
        await settle(pilot)  # the keys after w, taken by the prompt
        assert isinstance(app.screen, PathPrompt)
        assert screen.table.step_index == 0  # no j reached it, and o opened no editor
        await pilot.press("escape")
        await pilot.press("slash", *"tdfw", "enter")  # in the search box they are text
        await settle(pilot)
        assert screen.query_text == "tdfw"
