"""`tui --follow`: a recording in progress, read from its journal, steps appearing as the agent writes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blackbox.recorder import journal_path
from blackbox_tui.app import BlackboxApp
from blackbox_tui.follow import Follower
from blackbox_tui.run import Run
from tests.tui.conftest import INCIDENT, SIZE, settle

pytestmark = pytest.mark.anyio

RECORDED = json.loads(INCIDENT.read_text(encoding="utf-8"))


def line(step: dict) -> bytes:
    return json.dumps(step, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


async def test_steps_appear_as_the_journal_grows(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    journal = journal_path(out)
    header = {"blackboxJournal": 1, "id": RECORDED["id"], "createdAt": RECORDED["createdAt"], "out": str(out)}
    steps = RECORDED["steps"]
    journal.write_bytes(line(header) + b"".join(line(s) for s in steps[:3]))
    follower = Follower(journal)
    first = follower.poll()
    cassette = follower.cassette()
    assert cassette is not None and len(first.steps) == 3 and first.drop == 0
    run = Run(cassette, out)
    run.append(first.steps)
    app = BlackboxApp([run], follow=follower)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.table.row_count == 3
        assert "following run.json.blackbox-journal (live)" in str(screen.query_one("#status").render())
        await pilot.press("G")
        torn = line(steps[5])[:40]
        with journal.open("ab") as handle:
            handle.write(line(steps[3]) + line(steps[4]) + torn)
        await pilot.pause(0.8)
        await settle(pilot)
        assert screen.table.row_count == 5  # the torn line waits for its newline
        assert screen.table.step_index == 4  # the cursor on the last row follows the tail
        with journal.open("ab") as handle:
            handle.write(line(steps[5])[40:])
        await pilot.pause(0.8)
        await settle(pilot)
        assert screen.table.row_count == 6
        assert run.summary(5) == "Tool result: get_telemetry → ok"
        assert "chain intact" in str(screen.query_one("#header").render())
        out.write_bytes(INCIDENT.read_bytes())
        journal.unlink()
        await pilot.pause(0.8)
        await settle(pilot)
        assert screen.follower is None
        assert [n.message for n in app._notifications] == [f"The recording ended: {out} written."]


def test_a_tool_that_finished_ahead_of_its_turn_shows_then_gives_way_to_the_chained_steps(tmp_path: Path) -> None:
    """The recorder journals a tool that finished before an earlier call of its turn as a tool entry; the
    follower shows it where `journal_steps` (the rescue) would put it, then the chained steps replace it."""
    out = tmp_path / "run.json"
    journal = journal_path(out)
    header = {"blackboxJournal": 1, "id": RECORDED["id"], "createdAt": RECORDED["createdAt"], "out": str(out)}
    steps = RECORDED["steps"]
    # step 1 asks for call-0 (lookup_dtc) and call-1 (get_telemetry); get_telemetry finishes first
    entry = {"blackboxTool": 1, "turn": 1, "order": [0, 1], "toolCall": steps[4]["payload"],
             "callAt": steps[4]["timestamp"], "toolResult": steps[5]["payload"], "resultAt": steps[5]["timestamp"]}
    journal.write_bytes(line(header) + line(steps[0]) + line(steps[1]) + line(entry))
    follower = Follower(journal)
    first = follower.poll()
    run = Run(follower.cassette(), out)
    run.append(first.steps, drop=first.drop)
    assert follower.problem == ""
    assert [s.type for s in run.steps] == ["model_input", "model_output", "tool_call", "tool_result"]
    assert [run.summary(i) for i in (2, 3)] == ["Tool called: get_telemetry", "Tool result: get_telemetry → ok"]
    assert run.chain is None  # placed steps are chained like the rest
    assert follower.poll() == ([], 0)  # nothing new: nothing replaced
    with journal.open("ab") as handle:  # lookup_dtc finished: the recorder chains the whole turn
        handle.write(b"".join(line(s) for s in steps[2:6]))
    second = follower.poll()
    assert second.drop == 2 and len(second.steps) == 4
    run.append(second.steps, drop=second.drop)
    assert [s.hash for s in run.steps] == [s["hash"] for s in steps[:6]]
    assert run.summary(2) == "Tool called: lookup_dtc" and run.chain is None
