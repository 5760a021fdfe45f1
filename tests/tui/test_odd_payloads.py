"""Payloads that do not fit their step type's shape (hand-edited files, damaged imports) in the UI: the views read
them as `Odd`, so every screen still shows the step — "?" where a name is missing, the payload's JSON where a
shape is — and nothing crashes, whichever tab the cursor rests on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static, TextArea

from blackbox.format.cassette import StepChain, save
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.screens.fork import ForkScreen
from tests.tui.conftest import INCIDENT, SIZE, make_app, settle

pytestmark = pytest.mark.anyio

ODD_PAYLOADS = [
    ("model_input", {"messages": "not a list", "model": "m-1"}),
    ("model_output", {"type": "tool_calls", "calls": [{"toolCallId": "c0", "toolName": "lookup", "toolInput": {}}]}),
    ("tool_call", {"toolCallId": "c0", "toolName": 7, "toolInput": {}}),  # a name that is no string
    ("tool_result", {"toolCallId": "c0", "error": "boom"}),  # no tool name at all
    ("tool_call", {"toolCallId": "c1", "toolName": "mcp__gh__issue", "toolInput": {}, "mcp": "not an object"}),
    ("tool_result", {"toolCallId": "c1", "toolName": "mcp__gh__issue",
                     "result": {"content": [{"type": "text", "text": "issue made"}, {"type": "hologram", "depth": 3},
                                            {"type": "text", "text": 5}]}}),
    ("model_input", {"messages": [{"role": "user", "content": [{"type": "thinking", "text": "hmm"}]}]}),
    ("metadata", {"event": "run_exploded"}),
]


def odd_cassette(path: Path) -> Path:
    chain = StepChain("odd-payloads")
    for at, (kind, payload) in enumerate(ODD_PAYLOADS):
        chain.append(kind, 1000 + at, payload)
    save(chain.cassette(0), path)
    return path


def conversation(app: object) -> str:
    return str(app.screen.query_one("#conversation-text", Static).render())  # type: ignore[attr-defined]


async def test_odd_payloads_read_as_unknown_and_show_their_json(tmp_path: Path) -> None:
    app = make_app(odd_cassette(tmp_path / "odd.json"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        run = app.screen.run
        assert run.summary(2) == "Tool called: ?" and run.summary(3) == "Tool result: ? → (unreadable payload)"
        assert run.summary(7) == "Metadata: run_exploded"
        assert run.tool_names() == ["mcp__gh__issue"]  # the name 7 is no tool name
        assert run.indices("errors") == []  # a result that does not fit is not read as an error result
        assert run.outcome.status == "incomplete"
        await pilot.press("2")  # step 0, the conversation tab: a request whose messages are no list
        await settle(pilot)
        text = conversation(app)
        assert "? This request does not fit its shape at $.messages" in text and '"not a list"' in text
        await pilot.press("j", "j", "j", "j", "j")  # step 5: an MCP result with an odd block among good ones
        await settle(pilot)
        text = conversation(app)
        assert "issue made" in text  # a text block as text
        assert '"hologram"' in text and '"text": 5' in text  # the odd blocks as their JSON
        await pilot.press("j")  # step 6: a message part of a kind a request cannot hold
        await settle(pilot)
        text = conversation(app)
        assert "does not fit its shape at $.messages[0].content" in text and '"thinking"' in text


async def test_every_step_of_an_odd_file_shows_in_every_tab(tmp_path: Path) -> None:
    app = make_app(odd_cassette(tmp_path / "odd.json"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for tab in ("1", "2", "3"):
            await pilot.press("g", tab)
            for _ in ODD_PAYLOADS:
                await settle(pilot)
                assert isinstance(app.screen, BrowseScreen)
                await pilot.press("j")
        await pilot.press("t")  # the filter's tool list reads the names too
        await settle(pilot)
        await pilot.press("escape")


async def test_forking_at_a_result_that_does_not_fit_starts_from_its_json(tmp_path: Path) -> None:
    app = make_app(odd_cassette(tmp_path / "odd.json"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "j", "f")  # step 3: a result that names no tool
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ForkScreen)
        assert "result of ? (?)" in str(screen.query_one("#fork-title", Static).render())
        editor = screen.query_one("#value").query_one(TextArea)
        assert json.loads(editor.text) == {"toolCallId": "c0", "error": "boom"}  # all of it, not a guess


async def test_a_hand_edited_tool_name_reads_as_unknown(tmp_path: Path) -> None:
    """The original's fixture with one tool's name edited to a number everywhere: the chain breaks, its steps
    show "?", and the run stays browsable."""
    text = INCIDENT.read_text(encoding="utf-8")
    edited = text.replace('"toolName": "get_telemetry"', '"toolName": 17')
    assert edited != text
    path = tmp_path / "edited.json"
    path.write_text(edited, encoding="utf-8")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        run = app.screen.run
        at = next(i for i in range(len(run)) if run.steps.type(i) == "tool_call"
                  and json.dumps(run.steps[i].payload).count('"toolName": 17'))
        assert run.summary(at) == "Tool called: ?" and run.summary(at + 1) == "Tool result: ? → (unreadable payload)"
        assert "get_telemetry" not in run.tool_names()
        assert run.chain is not None  # the edit broke the chain
        await pilot.press(*["j"] * at, "2")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        await pilot.press("G", "1")
        await settle(pilot)
