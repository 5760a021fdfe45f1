"""One rule for lone surrogates: JavaScript's JSON.parse accepts `"\\ud800"`, so Blackbox does too.

They are loaded where they are (a payload, a key, the trace id), hashed as the original hashes them, written
back as the `\\udxxx` escape (never as bytes that are not UTF-8) and shown inert; where a string cannot be
(the step type, a number) the file is refused in one line.  Every reader, writer and printer is run here.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from blackbox.cli.jsonout import json_document
from blackbox.errors import CassetteError
from blackbox.format.cassette import Cassette, StepChain, load, loads
from blackbox.format.lazy import load_lazy
from blackbox.format.verify import verify
from blackbox.format.writing import dumps, pretty_json
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES

TRACE = FIXTURES / "traces/success-tool-use.v2.json"
LONE = "x\ud800y"


def _rebuild(trace_id: str = "run", step3: object = None, parent: str | None = None) -> Cassette:
    base = load(TRACE)
    chain = StepChain(trace_id)
    for s in base.steps:
        chain.append(s.type, s.timestamp, step3 if step3 is not None and s.index == 3 else s.payload)
    return chain.cassette(0, parent_id=parent, forked_from_step_id=None if parent is None else f"{parent}:3")


def _as_js_writes_it(cassette: Cassette) -> bytes:
    """The file the original would write: lone surrogates as `\\udxxx` escapes, the rest raw."""
    return json.dumps(json.loads(dumps(cassette)), ensure_ascii=True, indent=2).encode()


CASES = {
    "payload string": {"step3": {"toolCallId": "call-0", "toolName": "search", "result": LONE}},
    "payload key": {"step3": {"toolCallId": "call-0", "toolName": "search", "result": {"k\udc00": 1}}},
    "trace id": {"trace_id": "run\ud800"},
    "parent id": {"parent": "parent\udfff"},
}


@pytest.fixture(params=sorted(CASES))
def surrogate_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / "s.json"
    path.write_bytes(_as_js_writes_it(_rebuild(**CASES[request.param])))
    return path


def test_dumps_writes_escapes_that_load_back_the_same(surrogate_file: Path) -> None:
    cassette = load(surrogate_file)
    data = dumps(cassette)
    data.decode("utf-8")  # strict: no surrogate bytes in the file
    again = loads(data)
    assert msgspec.structs.asdict(again) == msgspec.structs.asdict(cassette)
    assert verify(again).ok


def test_the_escape_form_hashes_as_the_original(tmp_path: Path) -> None:
    """The step hash of a payload holding a lone surrogate is computed on `\\ud800` as JSON.stringify prints it."""
    cassette = _rebuild(step3={"toolCallId": "call-0", "toolName": "search", "result": LONE})
    from blackbox.format.canonical import canonical_text

    expected = '{"result":"x\\ud800y","toolCallId":"call-0","toolName":"search"}'
    assert canonical_text(cassette.steps[3].payload) == expected


def test_lazy_loading_keeps_them(surrogate_file: Path) -> None:
    lazy = load_lazy(surrogate_file)
    assert msgspec.structs.asdict(lazy.decoded()) == msgspec.structs.asdict(load(surrogate_file))


def test_pretty_json_shows_the_escape() -> None:
    assert pretty_json({"k\udc00": LONE}, indent=0) == '{"k\\udc00":"x\\ud800y"}'
    assert "\\ud800" in pretty_json([LONE, 1.5])


def test_json_output_puts_back_only_its_own_placeholders() -> None:
    """A string of the document that looks like the placeholder a lone surrogate is swapped for stays itself."""
    value = {"a": "\ud800", "b": "\x00blackbox-surrogate-0\x00", "c": ["x\udc00y", "é"]}
    assert json.loads(json_document(value)) == value


@pytest.mark.parametrize("args", [
    ["verify"], ["verify", "--json"], ["inspect"], ["inspect", "--json"], ["inspect", "--step", "3"],
    ["inspect", "--step", "3", "--json"], ["assert", "--expect-status", "success"], ["replay"],
])
def test_every_reader_prints_them(surrogate_file: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, out, _ = run_cli(capsys, args[0], surrogate_file, *args[1:])
    assert code == 0
    out.encode("utf-8")  # printable: nothing a terminal encoding cannot take
    if "--json" in args:
        json.loads(out)


@pytest.mark.parametrize("json_out", [False, True])
def test_diff_prints_them(surrogate_file: Path, capsys: pytest.CaptureFixture[str], json_out: bool) -> None:
    code, out, _ = run_cli(capsys, "diff", TRACE, surrogate_file, *(["--json"] if json_out else []))
    assert code == 0
    out.encode("utf-8")
    if json_out:
        json.loads(out)


def test_list_of_a_folder_with_one_such_file(surrogate_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (surrogate_file.parent / "good.json").write_bytes(TRACE.read_bytes())
    code, out, _ = run_cli(capsys, "list", surrogate_file.parent)
    assert code == 0
    assert "2 file(s): 2 valid, 0 invalid" in out
    out.encode("utf-8")


def test_a_demo_fork_writes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent = tmp_path / "parent.json"
    parent.write_bytes(_as_js_writes_it(_rebuild(trace_id="run\ud800")))
    child = tmp_path / "child.json"
    code, out, _ = run_cli(capsys, "fork", "--trace", parent, "--out", child)
    assert code == 0, out
    forked = load(child)
    assert forked.id == "run\ud800-fork"
    assert forked.parentId == "run\ud800"
    assert verify(forked).ok


def test_an_import_writes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    transcript = json.loads((FIXTURES / "external/chat-tool-use.foreign.json").read_text())
    transcript["messages"][0]["content"] = "weather in Paris \ud83d please"
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(transcript, ensure_ascii=True))
    out = tmp_path / "out.json"
    code, _, err = run_cli(capsys, "import", "--from", "chat-json", "--in", src, "--out", out)
    assert code == 0, err
    assert "\ud83d" in json.dumps(load(out).steps[0].payload, ensure_ascii=False)
    assert verify(load(out)).ok


def test_recover_writes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassette = _rebuild(step3={"toolCallId": "call-0", "toolName": "search", "result": LONE})
    journal = tmp_path / "run.json.blackbox-journal"
    lines = [b'{"blackboxJournal":1,"id":"run","createdAt":0}'] + [
        json.dumps(msgspec.to_builtins(s), ensure_ascii=True).encode() for s in cassette.steps[:6]]
    journal.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "rec.json"
    code, _, err = run_cli(capsys, "recover", journal, "--out", out)
    assert code == 0, err
    assert load(out).steps[3].payload["result"] == LONE
    assert not journal.exists()


@pytest.mark.parametrize(("where", "message"), [
    ('"type": "metadata",', "unknown type"),
    ('"timestamp": 0', "field `timestamp` must be a number"),
    ('"index": 2', "field `index` must be an integer"),
    ('"version": 2', "no numeric `version`"),
])
def test_where_no_string_belongs_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str,
                                          message: str) -> None:
    text = _as_js_writes_it(_rebuild()).decode()
    key = where.split(":")[0]
    assert where in text
    bad = tmp_path / "bad.json"
    bad.write_text(text.replace(where, f'{key}: "\\ud800"' + ("," if where.endswith(",") else ""), 1))
    with pytest.raises(CassetteError, match=message):
        load(bad)
    with pytest.raises(CassetteError, match=message):
        load_lazy(bad)
    for command in ("verify", "inspect", "diff"):
        args = [command, bad] + ([bad] if command == "diff" else [])
        code, out, err = run_cli(capsys, *args)
        assert code == (1 if command == "verify" else 2)  # verify judges the file; inspect, diff cannot read it
        assert message in out + err


def test_a_surrogate_key_in_the_frame_is_an_unknown_field(tmp_path: Path) -> None:
    text = _as_js_writes_it(_rebuild()).decode()
    bad = tmp_path / "extra.json"
    bad.write_text(text.replace('"version": 2', '"\\ud800": 1, "version": 2', 1)
                       .replace('"index": 1,', '"index": 1, "\\udc00x": true,', 1))
    assert verify(load(bad)).ok
    assert verify(load_lazy(bad).decoded()).ok
