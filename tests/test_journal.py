"""The recording journal: one fsynced line per step while recording, in the model's call order, removed on a
clean write, never holding a key; `recover` turns what a killed process left into a verified cassette."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import blackbox
from blackbox.errors import CassetteError, SessionError
from blackbox.format.cassette import chain_break, load
from blackbox.format.outcome import outcome
from blackbox.format.secrets import Secrets
from blackbox.format.verify import verify
from blackbox.live.recorder import Recorder, journal_path, recover
from blackbox.providers.neutral import CallIds

OUTPUT = {"type": "tool_calls", "calls": [
    {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
    {"toolCallId": "call-1", "toolName": "get_weather", "toolInput": {"city": "Oslo"}},
]}
INPUT = {"messages": [{"role": "user", "content": "Weather?"}], "tools": []}


def lines(path: Path, *, starts: bool = False) -> list[dict]:
    """The journal's lines (without the tool-start lines, which recovery skips, unless `starts`)."""
    values = [json.loads(line) for line in path.read_text().splitlines()]
    return [value for value in values if starts or "blackboxToolStart" not in value]


def recorder(tmp_path: Path, secrets: tuple[str, ...] = ()) -> Recorder:
    return Recorder(tmp_path / "run.json", "run", 1000, CallIds(), secrets=Secrets.known(secrets))


def test_steps_are_journaled_in_call_order_and_the_journal_goes_on_a_clean_write(tmp_path: Path) -> None:
    rec = recorder(tmp_path)
    journal = journal_path(tmp_path / "run.json")
    rec.model_step(INPUT, 1001, OUTPUT, 1002)
    oslo = rec.tool_started("get_weather", {"city": "Oslo"}, 1003)
    paris = rec.tool_started("get_weather", {"city": "Paris"}, 1004)
    assert (oslo.call_id, paris.call_id) == ("call-1", "call-0")
    rec.tool_finished(oslo, {"result": "3C"}, 1005)
    # Oslo's result waits for Paris's in the chain, but is journaled the moment the agent gets it.
    assert [line.get("type", line.get("blackboxTool")) for line in lines(journal)] == [
        None, "model_input", "model_output", 1]
    assert [(s.type, s.payload.get("toolCallId")) for s in recover(journal).steps[2:]] == [
        ("tool_call", "call-1"), ("tool_result", "call-1")]
    assert verify(recover(journal)).ok
    # each tool's start is journaled as it begins (for `tui --follow`); recovery skips those lines
    started = [line for line in lines(journal, starts=True) if "blackboxToolStart" in line]
    assert [(line["toolCall"]["toolCallId"], line["order"], line["turn"], line["callAt"]) for line in started] == [
        ("call-1", [0, 1], 1, 1003), ("call-0", [0, 0], 1, 1004)]
    rec.tool_finished(paris, {"result": "18C"}, 1006)
    journaled = lines(journal)
    made = journaled[0].pop("made")  # what made the run (docs/format.md, "Origin"): recovery keeps it
    assert journaled[0] == {"blackboxJournal": 1, "id": "run", "createdAt": 1000, "out": str(tmp_path / "run.json")}
    assert made["blackbox"] and made["python"] and recover(journal).made == rec.made
    assert [(s["type"], s["payload"]["toolCallId"]) for s in journaled[4:]] == [
        ("tool_call", "call-0"), ("tool_result", "call-0"), ("tool_call", "call-1"), ("tool_result", "call-1")]
    assert recover(journal) == rec.cassette()
    rec.terminal({"event": "run_completed", "status": "success", "result": "ok"}, 1007)
    rec.write()
    assert not journal.exists() and (tmp_path / "run.json").exists()


def test_a_tool_still_running_is_journaled_as_started_and_recovered_as_before(tmp_path: Path) -> None:
    """A tool start line shows a follower the tool running; a kill while it runs recovers what it did before
    the line existed: the model call, not the call that never returned."""
    rec = recorder(tmp_path)
    journal = journal_path(tmp_path / "run.json")
    rec.model_step(INPUT, 1001, OUTPUT, 1002)
    rec.tool_started("get_weather", {"city": "Paris"}, 1003)
    last = lines(journal, starts=True)[-1]
    assert last == {"turn": 1, "order": [0, 0], "callAt": 1003, "blackboxToolStart": 1,
                    "toolCall": {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}}
    recovered = recover(journal)
    assert [s.type for s in recovered.steps] == ["model_input", "model_output"] and verify(recovered).ok


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
    assert journal.read_bytes() == b""  # emptied (still locked: the run is live), and journals nothing more
    rec.model_step(INPUT, 1005, {"type": "final_answer", "text": "fine"}, 1006)
    assert journal.read_bytes() == b""
    with pytest.raises(SessionError, match=r"^refusing to write the cassette: step 2 contains the API key"):
        rec.write()
    kept = tmp_path / "run.refused.json"  # the run before the refused step, and nothing else
    assert list(tmp_path.iterdir()) == [kept] and key not in kept.read_text() and len(load(kept).steps) == 2


def test_a_session_holds_its_journal_until_the_first_request_and_keeps_it_until_finish(tmp_path: Path) -> None:
    """Before the first request a key given only to the SDK client is unknown: nothing reaches the disk."""
    out = tmp_path / "s.json"
    bb = blackbox.session("record", out=out)
    bb.tool("echo", lambda value: value)("hi")
    assert journal_path(out).read_bytes() == b""
    bb.secrets.note_headers([("x-api-key", "sk-ant-api03-held-back-key-000000000")])
    bb.tool("echo", lambda value: value)("again")
    assert [s.get("type") for s in lines(journal_path(out))] == [None, "tool_call", "tool_result", "tool_call",
                                                                 "tool_result"]
    bb.finish(result="done")
    assert not journal_path(out).exists()


def test_a_refused_model_output_leaves_the_input_journaled(tmp_path: Path) -> None:
    """A model call's two steps go out in one write; if the output cannot be hashed, the input still does."""
    from blackbox.format.canonical import CanonicalError, JSFloat

    rec = recorder(tmp_path)
    with pytest.raises(CanonicalError):
        rec.model_step(INPUT, 1001, {"type": "final_answer", "text": JSFloat("nan")}, 1002)
    journal = journal_path(tmp_path / "run.json")
    assert [line.get("type") for line in lines(journal)] == [None, "model_input"]
    assert recover(journal) == rec.cassette()


def test_a_live_journal_is_locked_against_a_second_recorder_and_a_rescue(tmp_path: Path) -> None:
    from blackbox.live.recorder import rescue_journal

    rec = recorder(tmp_path)
    rec.model_step(INPUT, 1001, OUTPUT, 1002)
    journal = journal_path(tmp_path / "run.json")
    before = journal.read_bytes()
    with pytest.raises(SessionError, match=r"^another recording to .*run\.json is running \(its journal .* locked"):
        recorder(tmp_path)
    assert rescue_journal(tmp_path / "run.json") is None
    assert journal.read_bytes() == before and not list(tmp_path.glob("*.recovered*"))
    rec.terminal({"event": "run_completed", "status": "success", "result": "ok"}, 1003)
    rec.write()
    recorder(tmp_path).discard_journal()  # free again once the first recording ended


def test_a_full_disk_stops_the_journal_and_the_end_says_what_was_written(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import blackbox.live.recorder
    from blackbox.live.journal import Journal

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Journal, "_os_write", staticmethod(full))
    rec = recorder(tmp_path)  # the header already fails: recording goes on in memory
    rec.model_step(INPUT, 1001, {"type": "final_answer", "text": "fine"}, 1002)
    assert rec.journal_error == "No space left on device"
    monkeypatch.setattr(blackbox.live.recorder, "atomic_write", lambda path, data: full(0, data))
    with pytest.raises(SessionError, match=r"^the cassette could not be written: No space left on device \(.*"
                                           r"run\.json\); the journal could not be written either: No space left"):
        rec.write()


def test_key_search_finds_every_long_piece_of_a_key_and_nothing_shorter() -> None:
    from blackbox.format.secrets import KEY_PIECE, KeySearch

    key = "sk-ant-api03-" + "".join(chr(ord("a") + (i * 7) % 26) for i in range(90))
    search = KeySearch([key, "short"])
    for start in range(len(key) - KEY_PIECE + 1):
        assert search.found_in(b'{"x":"' + key[start:start + KEY_PIECE].encode() + b'"}'), start
        assert not search.found_in(b'{"x":"' + key[start:start + KEY_PIECE - 1].encode() + b'"}'), start
    assert search.found_in(key[: len(key) * 95 // 100].encode())
    assert not search.found_in(b"short") and not KeySearch(["short"])
    assert KeySearch(["exactly-twenty-chars"]).found_in(b"..exactly-twenty-chars..")


def test_a_session_whose_out_cannot_be_a_file_refuses_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("a file")
    with pytest.raises(SessionError, match=r"^cannot record to .*plain/run\.json: .*; choose an output file in a "
                                           r"folder you can write$"):
        blackbox.session("record", out=tmp_path / "plain" / "run.json")
    assert (tmp_path / "plain").read_text() == "a file"


def test_a_fifo_where_the_journal_goes_is_refused_and_left_alone(tmp_path: Path) -> None:
    import os

    os.mkfifo(journal_path(tmp_path / "run.json"))
    with pytest.raises(SessionError, match=r"^cannot record to .*run\.json: .*blackbox-journal is not a regular "
                                           r"file"):
        recorder(tmp_path)
    assert journal_path(tmp_path / "run.json").is_fifo()
