"""A tool source other than a wrapped function (MCP, or one added later) enters the session through its public
door, `Session.begin_tool` / `end_tool` (docs/architecture.md, "A wrapped tool"): recorded, then served on
replay without running anything."""

from __future__ import annotations

from pathlib import Path

import pytest

import blackbox
from blackbox.errors import SessionError
from blackbox.live.recorder import ToolSlot
from blackbox.live.replayer import ToolClaim


def test_a_tool_source_records_and_replays_through_the_public_door(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    with blackbox.session("record", out=out) as bb:
        slot = bb.begin_tool("lookup", {"q": "Lisbon"})
        assert isinstance(slot, ToolSlot)
        slot.call_extra = {"source": {"kind": "test"}}  # a source's own fields on its steps
        assert bb.end_tool(slot, {"weather": "rain"}) == {"weather": "rain"}
        failed = bb.begin_tool("book", {"city": "Porto"})
        assert isinstance(failed, ToolSlot)
        bb.end_tool(failed, error="no seats left")
        bb.finish("booked nothing")
    steps = blackbox.load(out).steps
    assert [s.type for s in steps] == ["tool_call", "tool_result", "tool_call", "tool_result", "metadata"]
    assert steps[0].payload == {"toolCallId": steps[0].payload["toolCallId"], "toolName": "lookup",
                                "toolInput": {"q": "Lisbon"}, "source": {"kind": "test"}}
    assert steps[3].payload["error"] == "no seats left"

    with blackbox.session("replay", cassette=out) as bb:
        claim = bb.begin_tool("lookup", {"q": "Lisbon"})
        assert isinstance(claim, ToolClaim) and claim.outcome["result"] == {"weather": "rain"}
        claim = bb.begin_tool("book", {"city": "Porto"})
        assert isinstance(claim, ToolClaim) and claim.outcome["error"] == "no seats left"
        bb.finish("booked nothing")


def test_an_input_json_cannot_hold_fails_the_run(tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "run.json")
    with pytest.raises(SessionError, match="tool 'lookup'"):
        bb.begin_tool("lookup", {"when": object()})
    with pytest.raises(SessionError):  # the run failed, however the source took the exception
        bb.begin_tool("lookup", {"q": 1})
