"""Saving and reloading keeps hashes; values JavaScript prints differently from Python still verify."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox.errors import CassetteError
from blackbox.format.canonical import decode_json, json_value
from blackbox.format.cassette import StepChain, chain_break, load, loads, save
from blackbox.format.lazy import LazyCassette, decode_payload, load_lazy, loads_lazy
from blackbox.format.verify import verify
from blackbox.format.writing import dumps
from tests.conftest import FIXTURES

CASSETTES = sorted(p for p in FIXTURES.rglob("*.json") if "inputs" not in p.parts and "foreign" not in p.name)


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.name)
def test_fixture_round_trips_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    assert dumps(loads(data)) == data


def _awkward_payloads() -> list[object]:
    return [
        {"floats": [0.1, 1.0, -0.0, 1e21, 1e-7, 5e-324, 123.456, 1e16]},
        {"big": [9007199254740993, -63774251678207848, 2**64, 706755286718275518464]},
        {"😀": 1, "\uff61": 2, "a": {"🚀b": [], "🚀a": None}, "\ue000": True},
        {"ctl": "\x00\x01\x1f\b\f\n\r\t\"\\ \x7f \u2028 é", "keys\n\t": "x"},
    ]


def test_saved_cassette_reloads_with_identical_hashes(tmp_path: Path) -> None:
    chain = StepChain("awkward")
    for i, payload in enumerate(_awkward_payloads()):
        chain.append("tool_result", 1_700_000_000_000 + i, {"toolCallId": f"call-{i}", "toolName": "t",
                                                            "result": json_value(payload)})
    chain.append("metadata", 1_700_000_000_009, {"event": "run_completed", "status": "success", "result": "ok"})
    original = chain.cassette(1_700_000_000_000)
    save(original, tmp_path / "a.json")
    again = load(tmp_path / "a.json")
    assert [s.hash for s in again.steps] == [s.hash for s in original.steps]
    assert chain_break(again) is None
    assert verify(tmp_path / "a.json").ok
    save(again, tmp_path / "b.json")
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "a.json").read_bytes()


def test_hashes_follow_javascript_not_python() -> None:
    """A file written by the original with these values: the hash is of JS's text, e.g. 1e21 → "1e+21"."""
    text = '{"floats":[1.0,1e21,1e-7,-0.0],"big":9007199254740993,"😀":1,"\uff61":2}'
    from blackbox.format.canonical import canonical_text

    assert canonical_text(decode_json(text)) == \
        '{"big":9007199254740992,"floats":[1,1e+21,1e-7,0],"😀":1,"\uff61":2}'


LOAD_ERRORS = [
    (b"not json", "not JSON"),
    (b'{"version": 2, "id": "x", "createdAt": 0, "steps": [', "ends early"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"version": 1, "id": "x", "createdAt": 0, "steps": []}', "version 1 is not supported"),
    (b'{"id": "x"}', "no numeric `version`"),
    (b'{"version": 2, "id": "x", "createdAt": 0}', "no `steps`"),
    (b'{"version": 2, "id": "x", "createdAt": 0, "steps": [{"id": "x:0"}]}', "step 0"),
    (b'{"version": 2, "id": "x", "createdAt": NaN, "steps": []}', "NaN/Infinity"),
    (b"[" * 100_000 + b"]" * 100_000, "nested more than 10,000 levels deep"),
    (b'{"version": 2, "id": "x", "createdAt": 0, "steps": [{"id": "x:0", "index": 0, "type": "metadata", '
     b'"timestamp": 0, "prevHash": null, "hash": "0", "payload": 0, "extra": ' + b"[" * 10_100 + b"]" * 10_100
     + b"}]}", "nested more than 10,000 levels deep"),  # deep outside a payload (a payload: its hash check)
    (b"\xef\xbb\xbf" + b'{"version": 2, "id": "x", "createdAt": 0, "steps": []}', "byte-order mark"),
    (b"\x89PNG\r\n\x1a\n\xff\xfe", "not UTF-8 text at line 1, column 1"),
]


@pytest.mark.parametrize(("data", "words"), LOAD_ERRORS)
def test_load_errors_are_one_clear_line(data: bytes, words: str) -> None:
    with pytest.raises(CassetteError) as info:
        loads(data, name="f.json")
    message = str(info.value)
    assert words in message and "\n" not in message and message.startswith("f.json")


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.name)
def test_fixture_hashes_hold_with_plain_floats(path: Path) -> None:
    """verify loads with plain floats (no float hook); the chain must hold exactly as with `JSFloat`s."""
    try:
        typed = load(path)
    except CassetteError as exc:  # a fixture that is broken on purpose: the plain-float load refuses it too
        with pytest.raises(CassetteError) as plain_error:
            load(path, js_floats=False)
        assert str(plain_error.value) == str(exc)
        return
    plain = load(path, js_floats=False)
    assert [s.payload for s in plain.steps] == [s.payload for s in typed.steps]
    assert chain_break(plain) == chain_break(typed)


def test_awkward_floats_in_a_file_verify_with_plain_floats(tmp_path: Path) -> None:
    chain = StepChain("awkward")
    chain.append("tool_result", 1, {"toolCallId": "c", "toolName": "t", "result": json_value(_awkward_payloads())})
    chain.append("metadata", 2, {"event": "run_completed", "status": "success", "result": "ok"})
    save(chain.cassette(0), tmp_path / "a.json")
    plain = load(tmp_path / "a.json", js_floats=False)
    assert chain_break(plain) is None
    assert any(type(x) is float for x in plain.steps[0].payload["result"][0]["floats"])


@pytest.mark.parametrize(("data", "words"), [
    (b"", "ends early"),
    (b"not json", "not JSON: invalid syntax at line 1, column 5"),
    (b'{"version": 2, "id": "x", "createdAt": 0, "steps": [', "ends early"),
    (b'{"version": 2, "id": "x", "createdAt": NaN, "steps": []}', "NaN/Infinity"),
])
def test_load_errors_from_a_file(tmp_path: Path, data: bytes, words: str) -> None:
    """`load`'s errors are those of `loads` on the file's bytes, with either float mode."""
    path = tmp_path / "f.json"
    path.write_bytes(data)
    for js_floats in (True, False):
        with pytest.raises(CassetteError) as info:
            load(path, js_floats=js_floats)
        assert str(info.value).startswith(str(path)) and words in str(info.value)


# ---------------------------------------------------------------------------------------------------------
# The lazy loader (the UI's): payloads stay undecoded until asked for, with the errors and hashes of `load`


def _error(read: object, *args: object) -> str | None:
    try:
        read(*args)  # type: ignore[operator]
    except CassetteError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.name)
def test_lazy_load_gives_the_payloads_errors_and_chain_of_load(path: Path) -> None:
    error = _error(load, path)
    assert _error(load_lazy, path) == error
    if error is None:
        full, lazy = load(path), load_lazy(path)
        assert lazy.decoded() == full
        assert [decode_payload(s.payload) for s in lazy.steps] == [s.payload for s in full.steps]
        assert chain_break(lazy) == chain_break(full)



def _step_file(payload: bytes, step_id: bytes = b"x:0") -> bytes:
    return (b'{"version": 2, "id": "x", "createdAt": 0, "steps": [{"id": "' + step_id + b'", "index": 0, '
            b'"type": "metadata", "timestamp": 0, "payload": ' + payload + b', "prevHash": null, "hash": "0"}]}')


@pytest.mark.parametrize("data", [
    *(data for data, _ in LOAD_ERRORS),
    _step_file(b'"not \xff UTF-8"'),  # msgspec skips an undecoded value's strings unchecked
    _step_file(b'"bad \\q escape"'),
    _step_file(b"[1, 2"),
])
def test_lazy_load_errors_are_those_of_load(data: bytes) -> None:
    error = _error(loads, data)
    assert error is not None
    with pytest.raises(CassetteError) as info:
        loads_lazy(data, name="cassette")
    assert str(info.value) == error


def test_lazy_load_reads_what_only_the_fallback_decoder_reads() -> None:
    """A lone surrogate in a step id (msgspec refuses it, JSON.parse does not), and in the payload."""
    data = _step_file(b'{"text": "half \\ud800 a pair", "n": 0.5}', step_id=b"x:\\udc00")
    lazy = loads_lazy(data)
    assert isinstance(lazy, LazyCassette) and lazy.decoded() == loads(data)
    assert decode_payload(lazy.steps[0].payload) == {"text": "half \ud800 a pair", "n": 0.5}


def test_the_fallback_decoder_keeps_a_number_too_large_for_a_double() -> None:
    """`1e400` reads as infinity; the payload handed on must read back the same (not as `Infinity`, which
    no JSON reader takes), whether or not a string mentions Infinity."""
    data = _step_file(b'{"big": 1e400, "small": -1e400, "text": "Infinity \\" -Infinity"}', step_id=b"x:\\udc00")
    lazy = loads_lazy(data)
    assert lazy.decoded() == loads(data)
    payload = decode_payload(lazy.steps[0].payload)
    assert payload == {"big": float("inf"), "small": float("-inf"), "text": 'Infinity " -Infinity'}


def test_lazy_load_finds_a_tampered_payload(tmp_path: Path) -> None:
    chain = StepChain("t")
    for n in range(5):
        chain.append("tool_result", n, {"toolCallId": f"c{n}", "toolName": "t", "result": n * 1.5})
    path = tmp_path / "t.json"
    save(chain.cassette(0), path)
    assert chain_break(load_lazy(path)) is None
    path.write_bytes(path.read_bytes().replace(b'"result": 4.5', b'"result": 4.25'))
    broken = chain_break(load_lazy(path))
    assert broken is not None and broken.index == 3 and "hash does not match" in broken.reason
    assert broken == chain_break(load(path))


def test_the_cassette_s_fields_are_declared_once() -> None:
    """Cassette, LazyCassette and the indexer's header are one declaration (`CassetteOf`), so a new field
    cannot reach one reader and not the others."""
    import ast
    from pathlib import Path

    import msgspec

    from blackbox.format.cassette import Cassette, CassetteOf
    from blackbox.format.indexing import CassetteHeader
    from blackbox.format.lazy import LazyCassette

    names = [f.name for f in msgspec.structs.fields(Cassette)]
    assert names == ["version", "id", "createdAt", "steps", "parentId", "forkedFromStepId", "redaction", "made"]
    for reader in (LazyCassette, CassetteHeader):
        assert issubclass(reader, CassetteOf) and [f.name for f in msgspec.structs.fields(reader)] == names
    root = Path(__file__).resolve().parent.parent
    # (tui/follow.py's `_Header` is the crash journal's header line, another record.)
    declaring = sorted(f"{path.relative_to(root)}:{node.name}" for path in (root / "blackbox").rglob("*.py")
                       for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                       if isinstance(node, ast.ClassDef) and any(
                           isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                           and item.target.id == "forkedFromStepId" for item in node.body))
    assert declaring == ["blackbox/format/cassette.py:CassetteOf"], declaring
