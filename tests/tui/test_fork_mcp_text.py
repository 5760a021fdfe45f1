"""Forking at an MCP tool result: the form offers the text of its text block itself (not a JSON string inside the
result's JSON), writes it back into that block when the fork runs (other blocks, `_meta` and the rest kept,
structured content that was the text's JSON following it), and ctrl+t switches to the whole result as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Label, RadioButton, RadioSet, Static, TextArea

from blackbox.format.cassette import StepChain, load, save
from blackbox_tui.commands import screen_actions
from blackbox_tui.fork_value import text_block
from blackbox_tui.screens.fork import ForkScreen
from blackbox_tui.widgets.json_editor import JsonEditor
from tests.tui.conftest import SIZE, make_app, settle
from tests.waiting import pilot_until

pytestmark = pytest.mark.anyio

TEXT = '{"temp": 21, "sky": "clear"}'
RESULT = {"content": [{"type": "text", "text": TEXT},
                      {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}],
          "structuredContent": {"temp": 21, "sky": "clear"}, "isError": False, "_meta": {"trace": "t-1"}}


def mcp_run(path: Path, result: dict[str, Any] = RESULT) -> Path:
    """A run whose step 3 is an MCP `tools/call` result (the model asked for it at step 1)."""
    chain = StepChain("mcp-fork")
    call = {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}
    chain.append("model_input", 1, {"messages": [{"role": "user", "content": "Weather in Paris?"}],
                                    "tools": [{"name": "get_weather", "description": ""}], "model": "claude-haiku-4-5"})
    chain.append("model_output", 2, {"type": "tool_calls", "calls": [call]})
    chain.append("tool_call", 3, {**call, "mcp": {"server": "weather", "method": "tools/call"}})
    chain.append("tool_result", 4, {"toolCallId": "call-0", "toolName": "get_weather", "result": result})
    save(chain.cassette(0), path)
    return path


async def open_fork_at_3(pilot: Any) -> ForkScreen:
    await settle(pilot)
    await pilot.press("j", "j", "j", "f")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ForkScreen)
    return screen


def shown(screen: ForkScreen) -> str:
    return screen.query_one("#value", JsonEditor).query_one(TextArea).text


async def test_the_text_itself_is_edited_and_written_back_into_its_block(tmp_path: Path) -> None:
    app = make_app(mcp_run(tmp_path / "mcp.json"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork_at_3(pilot)
        assert shown(screen) == TEXT  # the text, not "{\"temp\": 21, …}" inside the result's JSON
        assert "text block" in str(screen.query_one("#value-label", Label).render())
        assert str(screen.query_one("#value .json-error", Static).render()) == "✓ text"
        assert "Text/JSON" in {description for description, *_ in screen_actions(screen)}  # help, palette
        screen.query_one("#value", JsonEditor).text = '{"temp": 35, "sky": "storm"}'
        await pilot.pause()
        new = json.loads(screen.form.value_text)
        assert new == {**RESULT, "content": [{"type": "text", "text": '{"temp": 35, "sky": "storm"}'},
                                             RESULT["content"][1]],
                       "structuredContent": {"temp": 35, "sky": "storm"}}
        await pilot.press("ctrl+t")  # the whole result as JSON, the edit kept
        await pilot.pause()
        assert not screen.form.editing_text and json.loads(shown(screen)) == new
        await pilot.press("ctrl+t")  # and back to its text
        await pilot.pause()
        assert screen.form.editing_text and shown(screen) == '{"temp": 35, "sky": "storm"}'
        screen.query_one("#value", JsonEditor).text = "storm warning, 35 °C"  # no JSON: no structured content
        await pilot.pause()
        new = json.loads(screen.form.value_text)
        assert new["content"][0]["text"] == "storm warning, 35 °C" and "structuredContent" not in new
        assert new["_meta"] == {"trace": "t-1"} and new["content"][1] == RESULT["content"][1]


async def test_the_fork_holds_the_edited_text_in_its_block(tmp_path: Path) -> None:
    """Run it (Blackbox itself, replies written here): the fork's step 3 is the result with the new text."""
    parent = mcp_run(tmp_path / "mcp.json")
    app = make_app(parent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork_at_3(pilot)
        screen.query_one("#value", JsonEditor).text = "Storm over Paris."
        screen.query_one("#continuation", RadioSet).query_one("#inline", RadioButton).value = True
        await pilot.pause()
        screen.query_one("#replies", JsonEditor).text = '[{"type": "final_answer", "text": "Stay in."}]'
        await settle(pilot)
        out = Path(screen.query_one("#out", Input).value)
        await pilot.press("ctrl+r")
        await pilot_until(pilot, lambda: out.is_file() and not screen.busy, "the fork written")
    fork = load(out)
    result = fork.steps[3].payload["result"]
    assert result["content"][0] == {"type": "text", "text": "Storm over Paris."}
    assert result["content"][1] == RESULT["content"][1] and result["_meta"] == RESULT["_meta"]
    assert "structuredContent" not in result and result["isError"] is False
    sent = fork.steps[4].payload["messages"][-1]["content"][0]  # what the model was sent: the same result
    assert sent["result"] == result


async def test_a_result_without_one_text_block_is_edited_as_json(tmp_path: Path) -> None:
    two = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "isError": False}
    assert text_block(two) is None and text_block({"content": [{"type": "text", "text": "\x1b[31mred"}]}) is None
    app = make_app(mcp_run(tmp_path / "two.json", two))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fork_at_3(pilot)
        assert not screen.form.editing_text and json.loads(shown(screen)) == two
        assert "Text/JSON" not in {str(key.render()) for key in screen.query("FooterKey")}
        await pilot.press("ctrl+t")  # nothing to switch to: unchanged
        await pilot.pause()
        assert json.loads(shown(screen)) == two
