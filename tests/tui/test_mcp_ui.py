"""MCP tool steps in the UI: the server a tool came from in the step list (Blackbox's MCP steps and a Claude Code
import's `mcp__server__tool` names, read from the name only), and a result's content blocks readable in the
conversation tab (text as text, structured content as JSON, an image as what it is)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from blackbox.format.cassette import Step, StepChain, save
from blackbox_tui.mcp_view import mcp_origin
from tests.tui.conftest import SIZE, make_app, settle

pytestmark = pytest.mark.anyio

RESULT = {"content": [{"type": "text", "text": "line one\nline two"},
                      {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}],
          "structuredContent": {"city": "Paris", "forecast": "sunny"}, "isError": False}


def mcp_cassette(path: Path) -> Path:
    chain = StepChain("mcp-ui")
    chain.append("tool_call", 1, {"toolCallId": "call-0", "toolName": "mcp:weather:tools/list", "toolInput": {},
                                  "mcp": {"server": "weather", "method": "tools/list"}})
    chain.append("tool_result", 2, {"toolCallId": "call-0", "toolName": "mcp:weather:tools/list",
                                    "result": {"tools": []}})
    chain.append("tool_call", 3, {"toolCallId": "call-1", "toolName": "get_weather", "toolInput": {"city": "Paris"},
                                  "mcp": {"server": "weather", "method": "tools/call"}})
    chain.append("tool_result", 4, {"toolCallId": "call-1", "toolName": "get_weather", "result": RESULT})
    chain.append("tool_call", 5, {"toolCallId": "call-2", "toolName": "mcp__github__create_issue", "toolInput": {}})
    chain.append("tool_result", 6, {"toolCallId": "call-2", "toolName": "mcp__github__create_issue", "result": "ok"})
    chain.append("tool_call", 7, {"toolCallId": "call-3", "toolName": "plain_tool", "toolInput": {}})
    chain.append("tool_result", 8, {"toolCallId": "call-3", "toolName": "plain_tool", "result": 1})
    save(chain.cassette(0), path)
    return path


def _origin(payload: object) -> tuple[str, str] | None:
    return mcp_origin(Step("id", 0, "tool_call", 1, payload, None, "h"))


def test_the_origin_is_read_from_the_step_only() -> None:
    assert _origin({"toolName": "get_weather", "mcp": {"server": "weather"}}) == ("weather", "get_weather")
    assert _origin({"toolName": "mcp:weather:tools/list"}) == ("weather", "tools/list")
    assert _origin({"toolName": "mcp__github__create_issue"}) == ("github", "create_issue")
    assert _origin({"toolName": "get_weather"}) is None and _origin({"toolName": "mcp__only"}) is None
    # a payload that does not fit (no tool name) or an `mcp` field that is not an object: no server, no crash
    assert _origin({"toolName": 7, "mcp": {"server": "weather"}}) is None
    assert _origin({"toolName": "get_weather", "mcp": "weather"}) is None


async def test_step_list_names_the_server_and_the_result_reads_as_text(tmp_path: Path) -> None:
    app = make_app(mcp_cassette(tmp_path / "mcp.json"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        run = app.screen.run
        summaries = [run.summary(i) for i in range(8)]
        assert summaries[0].endswith("· MCP weather") and summaries[1].endswith("· MCP weather")
        assert summaries[2] == "Tool called: get_weather  · MCP weather"
        assert summaries[3].endswith("· MCP weather")  # a result takes its call's server
        assert summaries[4].endswith("· MCP github") and summaries[5].endswith("· MCP github")
        assert "MCP" not in summaries[6] + summaries[7]
        await pilot.press("j", "j", "j", "2")  # step 3, the conversation tab
        await settle(pilot)
        text = str(app.screen.query_one("#conversation-text", Static).render())
        assert "line one\nline two" in text  # text as text, not a JSON string
        assert "[image image/png, 12 base64 characters]" in text
        assert "structured content" in text and '"forecast": "sunny"' in text
