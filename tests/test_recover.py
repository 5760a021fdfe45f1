"""`recover` and the automatic rescue: only a cassette that verifies is written, and a journal is deleted
only after that; a damaged journal header is one clear line, never a cassette no command can read."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from blackbox.errors import CassetteError, WriteError
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from blackbox.live.recorder import JournalError, recover, rescue_journal
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES

TRACE = FIXTURES / "traces/success-tool-use.v2.json"


def write_journal(folder: Path, header: dict[str, Any], steps: int = 5, tamper: Any = None) -> Path:
    cassette = load(TRACE, js_floats=False)
    journal = folder / "run.json.blackbox-journal"
    rows = [msgspec.to_builtins(s) for s in cassette.steps[:steps]]
    if tamper is not None:
        tamper(rows)
    lines = [json.dumps({"blackboxJournal": 1, **header}).encode()] + [json.dumps(r).encode() for r in rows]
    journal.write_bytes(b"\n".join(lines) + b"\n")
    return journal


BAD_HEADERS = {
    "parentId": ({"id": "run", "createdAt": 0, "parentId": 7}, "`parentId` is not a string"),
    "forkedFromStepId": ({"id": "run", "createdAt": 0, "parentId": "p", "forkedFromStepId": {"a": 1}},
                         "`forkedFromStepId` is not a string"),
    "createdAt text": ({"id": "run", "createdAt": "yesterday"}, "`createdAt` is not a whole number"),
    "createdAt fraction": ({"id": "run", "createdAt": 1.5}, "`createdAt` is not a whole number"),
    "createdAt bool": ({"id": "run", "createdAt": True}, "`createdAt` is not a whole number"),
    "id": ({"id": ["run"], "createdAt": 0}, "`id` is not a string"),
}


@pytest.mark.parametrize("case", sorted(BAD_HEADERS))
def test_a_damaged_header_is_one_line_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             case: str) -> None:
    header, message = BAD_HEADERS[case]
    journal = write_journal(tmp_path, header)
    with pytest.raises(JournalError, match=message):
        recover(journal)
    code, _, err = run_cli(capsys, "recover", journal)
    assert code == 2  # no journal to recover from: the question cannot be asked (README, "Exit codes")
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert journal.exists()
    assert not list(tmp_path.glob("*.json"))


def test_an_integral_float_created_at_is_the_integer(tmp_path: Path) -> None:
    cassette = recover(write_journal(tmp_path, {"id": "run", "createdAt": 1700000000000.0}))
    assert cassette.createdAt == 1700000000000 and isinstance(cassette.createdAt, int)
    assert verify(cassette).ok


def test_a_fork_journal_keeps_its_links(tmp_path: Path) -> None:
    cassette = recover(write_journal(tmp_path, {"id": "run", "createdAt": 0, "parentId": "p",
                                                "forkedFromStepId": "p:3"}))
    assert (cassette.parentId, cassette.forkedFromStepId) == ("p", "p:3")


def test_the_rescue_sets_a_damaged_journal_aside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = write_journal(tmp_path, {"id": "run", "createdAt": "x"})
    data = journal.read_bytes()
    assert rescue_journal(tmp_path / "run.json") is None
    assert not journal.exists()
    aside = tmp_path / "run.json.blackbox-journal.unrecoverable"
    assert aside.read_bytes() == data, "nothing is deleted"
    assert "cannot be recovered" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.json"))
    # The next recording to that path is not blocked, and a second damaged journal gets its own name.
    write_journal(tmp_path, {"id": "run", "parentId": 1})
    assert rescue_journal(tmp_path / "run.json") is None
    assert (tmp_path / "run.json.blackbox-journal.unrecoverable-2").exists()


def test_the_rescue_writes_only_what_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def leak(rows: list[dict[str, Any]]) -> None:  # provider data in the frame of a step, re-hashed
        from blackbox.format.canonical import step_hash

        rows[1]["payload"]["usage"] = {"input_tokens": 3}
        prev = rows[0]["hash"]
        for row in rows[1:]:
            row["prevHash"] = prev
            row["hash"] = prev = step_hash(row["index"], row["type"], row["timestamp"], row["payload"], prev)

    write_journal(tmp_path, {"id": "run", "createdAt": 0}, tamper=leak)
    assert rescue_journal(tmp_path / "run.json") is None
    assert not list(tmp_path.glob("*.json")), "a cassette that fails verify is never written"
    assert (tmp_path / "run.json.blackbox-journal.unrecoverable").exists()
    assert "provider_neutrality" in capsys.readouterr().err


def test_the_rescue_keeps_the_journal_when_the_write_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = write_journal(tmp_path, {"id": "run", "createdAt": 0})
    data = journal.read_bytes()

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(WriteError, match="No space left on device"):
        rescue_journal(tmp_path / "run.json")
    assert journal.read_bytes() == data
    assert not list(tmp_path.glob("*.json")) and not list(tmp_path.glob(".*.tmp"))


def test_the_rescue_writes_a_verified_cassette_then_drops_the_journal(tmp_path: Path) -> None:
    journal = write_journal(tmp_path, {"id": "run", "createdAt": 0})
    target = rescue_journal(tmp_path / "run.json")
    assert target == tmp_path / "run.recovered.json"
    assert verify(load(target)).ok
    assert not journal.exists()


def test_the_rescue_never_writes_through_a_dangling_link(tmp_path: Path) -> None:
    write_journal(tmp_path, {"id": "run", "createdAt": 0})
    (tmp_path / "run.recovered.json").symlink_to(tmp_path / "elsewhere.json")
    target = rescue_journal(tmp_path / "run.json")
    assert target == tmp_path / "run.recovered-2.json"
    assert not (tmp_path / "elsewhere.json").exists()


def test_a_surrogate_step_type_cuts_the_journal_there(tmp_path: Path) -> None:
    def bad_type(rows: list[dict[str, Any]]) -> None:
        rows[3]["type"] = "tool_\ud800"

    cassette = recover(write_journal(tmp_path, {"id": "run", "createdAt": 0}, tamper=bad_type))
    assert len(cassette.steps) == 3


def test_not_a_journal_is_a_cassette_error(tmp_path: Path) -> None:
    path = tmp_path / "x.blackbox-journal"
    path.write_bytes(b"hello\n")
    with pytest.raises(CassetteError, match="not a Blackbox journal"):
        recover(path)


@pytest.mark.parametrize("content", [b"", b"\n", b"  \n\n"])
def test_an_empty_journal_says_it_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           content: bytes) -> None:
    """A recording killed before its first model request leaves its journal empty (nothing is written before
    the keys are known): that is what the one line says, not "not a Blackbox journal"."""
    journal = tmp_path / "run.json.blackbox-journal"
    journal.write_bytes(content)
    with pytest.raises(CassetteError, match="the journal is empty: its recording was stopped before its first"):
        recover(journal)
    code, _, err = run_cli(capsys, "recover", journal)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "the journal is empty" in lines[0], err
    assert "not a Blackbox journal" not in err and journal.read_bytes() == content
