"""The recording journal: one fsynced line per step while recording, in the model's call order, removed on a
clean write, never holding a key; `recover` turns what a killed process left into a verified cassette."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import blackbox
from blackbox.cassette import chain_break
from blackbox.errors import CassetteError, SessionError
from blackbox.outcome import outcome
from blackbox.providers.neutral import CallIds
from blackbox.recorder import Recorder, journal_path, recover
from blackbox.verify import verify

OUTPUT = {"type": "tool_calls", "calls": [
    {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
    {"toolCallId": "call-1", "toolName": "get_weather", "toolInput": {"city": "Oslo"}},
]}
INPUT = {"messages": [{"role": "user", "content": "Weather?"}], "tools": []}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def recorder(tmp_path: Path, secrets: tuple[str, ...] = ()) -> Recorder:
    return Recorder(tmp_path / "run.json", "run", 1000, CallIds(), secrets=lambda: secrets)


def test_steps_are_journaled_in_call_order_and_the_journal_goes_on_a_clean_write(tmp_path: Path) -> None:
    rec = recorder(tmp_path)
    journal = journal_path(tmp_path / "run.json")
    rec.model_step(INPUT, 1001, OUTPUT, 1002)
    oslo = rec.tool_started("get_weather", {"city": "Oslo"}, 1003)
    paris = rec.tool_started("get_weather", {"city": "Paris"}, 1004)
    assert (oslo.call_id, paris.call_id) == ("call-1", "call-0")
    rec.tool_finished(oslo, {"result": "3C"}, 1005)
    assert [line.get("type") for line in lines(journal)] == [None, "model_input", "model_output"]
    rec.tool_finished(paris, {"result": "18C"}, 1006)
    journaled = lines(journal)
    assert journaled[0] == {"blackboxJournal": 1, "id": "run", "createdAt": 1000, "out": str(tmp_path / "run.json")}
    assert [(s["type"], s["payload"]["toolCallId"]) for s in journaled[3:]] == [
        ("tool_call", "call-0"), ("tool_result", "call-0"), ("tool_call", "call-1"), ("tool_result", "call-1")]
    assert recover(journal) == rec.cassette()
    rec.terminal({"event": "run_completed", "status": "success", "result": "ok"}, 1007)
    rec.write()
    assert not journal.exists() and (tmp_path / "run.json").exists()


def test_recover_drops_a_torn_last_line_and_cuts_a_broken_chain(tmp_path: Path) -> None:
    rec = recorder(tmp_path)
    rec.model_step(INPUT, 1001, OUTPUT, 1002)
    for call in ("Paris", "Oslo"):
        slot = rec.tool_started("get_weather", {"city": call}, 1003)
        rec.tool_finished(slot, {"result": call.lower()}, 1004)
    journal = journal_path(tmp_path / "run.json")
    data = journal.read_bytes()
    journal.write_bytes(data[: len(data) - 25])  # the process died while writing the last step
    torn = recover(journal)
    assert len(torn.steps) == 5 and chain_break(torn) is None and verify(torn).ok
    assert outcome(torn).status == "incomplete"

    journal.write_bytes(data)
    steps = lines(journal)
    steps[4]["payload"]["result"] = "edited"  # step 3 (line 0 is the header)
    journal.write_text("\n".join(json.dumps(s) for s in steps) + "\n")
    assert len(recover(journal).steps) == 3


def test_recover_refuses_what_is_not_a_journal(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    with pytest.raises(CassetteError, match="not a Blackbox journal"):
        recover(other)
    with pytest.raises(CassetteError, match="cannot read the journal"):
        recover(tmp_path / "missing")


def test_a_step_holding_a_key_is_never_journaled(tmp_path: Path) -> None:
    key = "sk-ant-api03-journal-secret-000000000"
    rec = recorder(tmp_path, secrets=(key,))
    journal = journal_path(tmp_path / "run.json")
    rec.model_step(INPUT, 1001, {"type": "final_answer", "text": "fine"}, 1002)
    assert journal.exists()
    rec.model_step({**INPUT, "messages": [{"role": "user", "content": f"key {key}"}]}, 1003,
                   {"type": "final_answer", "text": "leaked"}, 1004)
    assert not journal.exists()
    with pytest.raises(SessionError, match=r"^refusing to write the cassette: step 2 contains the API key"):
        rec.write()
    assert list(tmp_path.iterdir()) == []


def test_a_session_keeps_its_journal_until_finish(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    bb = blackbox.session("record", out=out)
    bb.tool("echo", lambda value: value)("hi")
    assert [s.get("type") for s in lines(journal_path(out))] == [None, "tool_call", "tool_result"]
    bb.finish(result="done")
    assert not journal_path(out).exists()


def test_a_refused_model_output_leaves_the_input_journaled(tmp_path: Path) -> None:
    """A model call's two steps go out in one write; if the output cannot be hashed, the input still does."""
    from blackbox.canonical import CanonicalError, JSFloat

    rec = recorder(tmp_path)
    with pytest.raises(CanonicalError):
        rec.model_step(INPUT, 1001, {"type": "final_answer", "text": JSFloat("nan")}, 1002)
    journal = journal_path(tmp_path / "run.json")
    assert [line.get("type") for line in lines(journal)] == [None, "model_input"]
    assert recover(journal) == rec.cassette()
