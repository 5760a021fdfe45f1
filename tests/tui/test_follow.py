"""`tui --follow`: a recording in progress, read from its journal, steps appearing as the agent writes them."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from blackbox.live.recorder import journal_path
from blackbox_tui.app import BlackboxApp
from blackbox_tui.follow import Follower
from blackbox_tui.run import Run
from tests.tui.conftest import INCIDENT, SIZE, settle
from tests.waiting import pilot_until

pytestmark = pytest.mark.anyio

RECORDED = json.loads(INCIDENT.read_text(encoding="utf-8"))


def line(step: dict) -> bytes:
    return json.dumps(step, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@contextmanager
def recording(journal: Path) -> Iterator[Callable[[], None]]:
    """Hold the journal's lock as a live recorder does (a journal no recorder holds is a recording that ended);
    yields the way to let go of it early."""
    journal.touch()
    fd = os.open(journal, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    held = [True]

    def release() -> None:
        if held.pop():
            os.close(fd)
        held.append(False)

    try:
        yield release
    finally:
        release()


def header_of(out: Path) -> dict:
    return {"blackboxJournal": 1, "id": RECORDED["id"], "createdAt": RECORDED["createdAt"], "out": str(out)}


def started(step: dict, order: int, turn: int = 1) -> dict:
    """The journal line of a tool that began (the recorder's `ToolStart`)."""
    return {"blackboxToolStart": 1, "turn": turn, "order": [0, order], "toolCall": step["payload"],
            "callAt": step["timestamp"]}


async def test_steps_appear_as_the_journal_grows(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    journal = journal_path(out)
    header = {"blackboxJournal": 1, "id": RECORDED["id"], "createdAt": RECORDED["createdAt"], "out": str(out)}
    steps = RECORDED["steps"]
    with recording(journal) as end:
        await check_steps_appear(journal, header, steps, out, end)


async def check_steps_appear(journal: Path, header: dict, steps: list[dict], out: Path,
                             end: Callable[[], None]) -> None:
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
        await wait_for(pilot, lambda: screen.table.row_count == 5)
        await settle(pilot)
        assert screen.table.row_count == 5  # the torn line waits for its newline
        assert screen.table.step_index == 4  # the cursor on the last row follows the tail
        with journal.open("ab") as handle:
            handle.write(line(steps[5])[40:])
        await wait_for(pilot, lambda: screen.table.row_count == 6
                       and "chain intact" in str(screen.query_one("#header").render()))
        await settle(pilot)
        assert screen.table.row_count == 6
        assert run.summary(5) == "Tool result: get_telemetry → ok"
        assert "chain intact" in str(screen.query_one("#header").render())
        out.write_bytes(INCIDENT.read_bytes())
        journal.unlink()
        end()
        await wait_for(pilot, lambda: screen.follower is None and screen.table.row_count == len(steps)
                       and bool(app._notifications))
        await settle(pilot)
        assert screen.follower is None
        assert [n.message for n in app._notifications] == [f"The recording ended: {out} written; showing it."]
        assert screen.table.row_count == len(steps)  # the written cassette, every step of it


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
    with recording(journal):
        check_entries_give_way(journal, header, steps, entry, out)


def check_entries_give_way(journal: Path, header: dict, steps: list[dict], entry: dict, out: Path) -> None:
    journal.write_bytes(line(header) + line(steps[0]) + line(steps[1]) + line(entry))
    follower = Follower(journal)
    first = follower.poll()
    run = Run(follower.cassette(), out)
    run.append(first.steps, drop=first.drop)
    assert follower.problem == ""
    assert [s.type for s in run.steps] == ["model_input", "model_output", "tool_call", "tool_result"]
    assert [run.summary(i) for i in (2, 3)] == ["Tool called: get_telemetry", "Tool result: get_telemetry → ok"]
    assert run.chain is None  # placed steps are chained like the rest
    assert follower.poll()[:2] == ([], 0)  # nothing new: nothing replaced
    with journal.open("ab") as handle:  # lookup_dtc finished: the recorder chains the whole turn
        handle.write(b"".join(line(s) for s in steps[2:6]))
    second = follower.poll()
    assert second.drop == 2 and len(second.steps) == 4
    run.append(second.steps, drop=second.drop)
    assert [s.hash for s in run.steps] == [s["hash"] for s in steps[:6]]
    assert run.summary(2) == "Tool called: lookup_dtc" and run.chain is None
    follower.close()  # the recording goes on: the follower still holds the journal


async def test_a_running_tool_shows_at_once_then_its_result_then_the_written_cassette(tmp_path: Path) -> None:
    """A tool start is shown as the bare call the recorder would write, marked running, until its steps are
    chained; the last steps, written with the cassette just before the journal goes (between two looks),
    are shown from the cassette: every step, the real outcome."""
    out = tmp_path / "run.json"
    journal = journal_path(out)
    steps = RECORDED["steps"]
    with recording(journal) as end:
        journal.write_bytes(line(header_of(out)) + line(steps[0]) + line(steps[1]) + line(started(steps[2], 0)))
        follower = Follower(journal)
        first = follower.poll()
        run = Run(follower.cassette(), out)
        run.append(first.steps, drop=first.drop)
        assert follower.running == frozenset({2}) and run.chain is None  # chained like the recorder would
        app = BlackboxApp([run], follow=follower)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = app.screen
            await pilot.press("G")
            await settle(pilot)
            assert screen.table.row_count == 3
            assert "Tool called: lookup_dtc · running…" in rendered_rows(screen)
            assert "1 tool running" in str(screen.query_one("#status").render())
            with journal.open("ab") as handle:  # it returned; the next one began
                handle.write(line(steps[2]) + line(steps[3]) + line(started(steps[4], 1)))
            await wait_for(pilot, lambda: screen.table.row_count == 5 and screen.table.running == {4})
            assert "Tool called: lookup_dtc · running…" not in rendered_rows(screen)
            assert "Tool called: get_telemetry · running…" in rendered_rows(screen)
            assert screen.table.step_index == 4  # the cursor kept to the last row
            # the rest, the cassette and the journal's end all at once, as a recorder finishing does
            with journal.open("ab") as handle:
                handle.write(b"".join(line(s) for s in steps[4:]))
            out.write_bytes(INCIDENT.read_bytes())
            journal.unlink()
            end()
            await wait_for(pilot, lambda: screen.follower is None)
            await settle(pilot)
            assert screen.table.row_count == len(steps) and not screen.table.running
            assert "outcome success" in str(screen.query_one("#header").render())
            assert "chain intact" in str(screen.query_one("#header").render())
            assert [n.message for n in app._notifications] == [f"The recording ended: {out} written; showing it."]


def test_a_recorder_that_exits_without_writing_ends_the_follow_with_the_journal_steps(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    journal = journal_path(out)
    steps = RECORDED["steps"]
    with recording(journal):
        journal.write_bytes(line(header_of(out)) + b"".join(line(s) for s in steps[:4]))
        follower = Follower(journal)
        assert len(follower.poll().steps) == 4 and not follower.finished
    update = follower.poll()  # the lock is gone, the journal stays: the recorder died or refused to write
    assert follower.finished and not update.final and update.steps == []
    assert follower.poll() == ([], 0, frozenset(), False)


def rendered_rows(screen) -> str:
    table = screen.table
    return "\n".join("".join(seg.text for seg in table.render_row(row, 200)) for row in range(table.row_count))


async def wait_for(pilot, condition: Callable[[], bool]) -> None:
    """Let the app run until `condition` holds (the follow timer looks every FOLLOW_EVERY seconds)."""
    await pilot_until(pilot, condition, "the followed screen")
