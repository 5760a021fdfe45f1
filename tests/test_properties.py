"""Property-based tests (hypothesis) of the format's promises, over values no one wrote by hand: any JSON
value (lone surrogates, astral keys, awkward numbers included), any cassette built from such payloads, any
bytes at the loader, any one-step forgery."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackbox.errors import CassetteError
from blackbox.format.canonical import canonical_bytes, decode_json, step_hash
from blackbox.format.cassette import Cassette, StepChain, chain_break, loads
from blackbox.format.lazy import loads_lazy
from blackbox.format.outcome import outcome, summarize_step
from blackbox.format.verify import verify
from blackbox.format.writing import atomic_write, dumps, pretty_json

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text as JavaScript sees it: any code point, lone surrogates too (JSON.parse accepts "\ud800").
text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12) | st.sampled_from(
    ["\ud800", "a\udfffb", "😀", "\ue000", "\u2028", "\x1b[31m", "sk-", ""])
numbers = st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    st.none() | st.booleans() | numbers | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)
STEP_TYPES = ["model_input", "model_output", "tool_call", "tool_result", "metadata"]


def _file_value(value: Any) -> Any:
    """The value as a file holds it (what `loads` gives back): floats as JavaScript numbers."""
    return decode_json(json.dumps(value, ensure_ascii=True))


@SETTINGS
@given(json_values)
def test_canonical_json_is_a_fixed_point(value: Any) -> None:
    data = canonical_bytes(value)
    data.decode("utf-8")  # strict UTF-8: lone surrogates are escaped
    assert canonical_bytes(decode_json(data)) == data


@SETTINGS
@given(json_values)
def test_canonical_json_means_the_same_value(value: Any) -> None:
    again = json.loads(canonical_bytes(value))
    assert canonical_bytes(again) == canonical_bytes(value)


cassettes = st.lists(st.tuples(st.sampled_from(STEP_TYPES), st.integers(0, 2**50), json_values),
                     min_size=0, max_size=6)


def _build(steps: list[tuple[str, int, Any]], trace_id: str = "prop") -> Cassette:
    chain = StepChain(trace_id)
    for type_, ts, payload in steps:
        chain.append(type_, ts, _file_value(payload))  # type: ignore[arg-type]
    return chain.cassette(0)


@SETTINGS
@given(cassettes, text.filter(bool))
def test_a_written_cassette_loads_back_the_same_and_its_chain_holds(steps: list[tuple[str, int, Any]],
                                                                    trace_id: str) -> None:
    cassette = _build(steps, trace_id)
    data = dumps(cassette)
    data.decode("utf-8")
    again = loads(data)
    assert [s.hash for s in again.steps] == [s.hash for s in cassette.steps]
    assert again.id == trace_id
    assert chain_break(again) is None
    lazy = loads_lazy(data)
    assert chain_break(lazy) is None
    assert msgspec.structs.asdict(lazy.decoded()) == msgspec.structs.asdict(again)
    assert dumps(again) == data


@SETTINGS
@given(cassettes.filter(lambda s: len(s) >= 2), st.data())
def test_any_step_edited_and_rehashed_breaks_the_next_link(steps: list[tuple[str, int, Any]],
                                                           data: st.DataObject) -> None:
    cassette = loads(dumps(_build(steps)))
    at = data.draw(st.integers(0, len(cassette.steps) - 2))
    new = data.draw(json_values.map(_file_value))
    step = cassette.steps[at]
    if canonical_bytes(new) == canonical_bytes(step.payload):
        return  # not an edit
    forged = msgspec.structs.replace(
        step, payload=new, hash=step_hash(step.index, step.type, step.timestamp, new, step.prevHash))
    cassette.steps[at] = forged
    broken = chain_break(cassette)
    assert broken is not None and broken.index == at + 1
    assert "prevHash does not match" in broken.reason


@SETTINGS
@given(cassettes)
def test_summaries_outcome_and_verify_never_crash(steps: list[tuple[str, int, Any]]) -> None:
    cassette = loads(dumps(_build(steps)))
    outcome(cassette).describe()
    for step in cassette.steps:
        summarize_step(step).encode("utf-8", "surrogatepass")
        pretty_json(step.payload).encode("utf-8")
    report = verify(cassette, env={})
    json.dumps(report.to_dict())


@SETTINGS
@given(st.binary(max_size=400))
def test_any_bytes_load_or_are_one_clear_error(data: bytes) -> None:
    try:
        loads(data, name="f.json")
    except CassetteError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("f.json")


frames = st.fixed_dictionaries({"version": st.just(2) | json_values, "id": json_values,
                                "createdAt": json_values, "steps": st.lists(
                                    st.dictionaries(st.sampled_from(["id", "index", "type", "timestamp", "payload",
                                                                     "prevHash", "hash", "\ud800"]) | text,
                                                    json_values, max_size=8) | json_values, max_size=3)})


@SETTINGS
@given(frames)
def test_any_json_frame_loads_or_is_one_clear_error(frame: dict[str, Any]) -> None:
    data = json.dumps(frame, ensure_ascii=True).encode()
    for read in (loads, loads_lazy):
        try:
            read(data, name="f.json")
        except CassetteError as exc:
            assert "\n" not in str(exc)


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=2000), st.binary(max_size=2000))
def test_atomic_write_puts_any_bytes_in_whole_and_leaves_nothing_else(tmp_path_factory: Any, old: bytes,
                                                                      new: bytes) -> None:
    """Whatever was there and whatever is written; the failed writes that keep the old file are in
    test_writes.py."""
    folder: Path = tmp_path_factory.mktemp("w")
    path = folder / "out.json"
    path.write_bytes(old)
    atomic_write(path, new)
    assert path.read_bytes() == new
    assert [p.name for p in folder.iterdir()] == ["out.json"]
