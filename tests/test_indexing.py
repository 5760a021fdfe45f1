"""The progressive index (blackbox.format.indexing) reads a file exactly as `load_lazy` does, or says `Unusual`.

The property that matters: whenever the index reads a file by itself, `load_lazy` reads the same cassette
from it (fields, steps, payloads); whenever `load_lazy` refuses a file, the index does not read it.  Checked
on the original's files, on every layout and chunking of generated cassettes, and on damaged bytes.
"""

from __future__ import annotations

import gc
import json
import os
import random
import warnings
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackbox.errors import CassetteError
from blackbox.format.cassette import StepChain, save
from blackbox.format.indexing import FileStep, Indexer, Unusual
from blackbox.format.lazy import LazyCassette, load_lazy

FIXTURES = Path(__file__).parent / "fixtures"
CASSETTES = sorted(p for p in FIXTURES.rglob("*.json") if '"version"' in p.read_text(errors="replace")[:200])


def index(path: Path, *, chunk: int = 1 << 20, window: int | None = None) -> tuple[Any, list[FileStep]]:
    indexer = Indexer(path, chunk=chunk)
    if window is not None:
        indexer.window = window
    indexer.start()
    steps = [step for batch in indexer.batches() for step in batch.steps]
    assert indexer.done
    return indexer.header, steps


def assert_same(header: Any, steps: list[FileStep], lazy: LazyCassette) -> None:
    assert (header.version, header.id, header.createdAt, header.parentId, header.forkedFromStepId) == (
        lazy.version, lazy.id, lazy.createdAt, lazy.parentId, lazy.forkedFromStepId)
    assert len(steps) == len(lazy.steps)
    for mine, theirs in zip(steps, lazy.steps, strict=True):
        assert (mine.id, mine.index, mine.type, mine.timestamp, mine.prevHash, mine.hash) == (
            theirs.id, theirs.index, theirs.type, theirs.timestamp, theirs.prevHash, theirs.hash)
        assert mine.decoded() == theirs.decoded()


def judged_alike(path: Path, **options: Any) -> bool:
    """Index and load the file; True if the index read it by itself (and then it read the same)."""
    try:
        header, steps = index(path, **options)
    except Unusual:
        return False
    assert_same(header, steps, load_lazy(path))  # never a file load_lazy refuses
    return True


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.name)
def test_the_originals_files_are_read_by_the_index_itself(path: Path) -> None:
    assert judged_alike(path)
    assert judged_alike(path, chunk=97, window=64)  # chunk and window edges everywhere


def chain_of(payloads: list[Any], *, trace: str = "t") -> Any:
    chain = StepChain(trace)
    types = ["model_input", "model_output", "tool_call", "tool_result", "metadata"]
    for i, payload in enumerate(payloads):
        chain.append(types[i % len(types)], 1_700_000_000_000 + i, payload)
    return chain.cassette(1_700_000_000_000)


def test_a_minified_file_is_read_where_msgspec_finds_each_step_end(tmp_path: Path) -> None:
    cassette = chain_of([{"text": "x" * 300_000}, {"a": [1, 2, {"b": "}\n    }"}]}, "]", {}])
    path = tmp_path / "min.json"
    path.write_bytes(msgspec.json.encode(cassette))
    assert judged_alike(path, chunk=1000, window=16)


def test_a_step_end_look_alike_inside_a_string_is_not_taken_for_the_end(tmp_path: Path) -> None:
    cassette = chain_of([{"text": "a\n    },\n    {"}, {"k": "\n    }"}])
    path = tmp_path / "trick.json"
    save(cassette, path)
    assert judged_alike(path, chunk=13)


def test_an_empty_step_list_and_fields_after_the_steps(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text('{"version": 2, "id": "e", "createdAt": 1, "steps": [ ], "parentId": "p", '
                    '"forkedFromStepId": "p:0", "extra": [1, {"x": 2}]}\n\n')
    assert judged_alike(path)


@pytest.mark.parametrize("text", [
    "",  # empty
    "\ufeff{}",  # a byte-order mark
    "[]",
    '{"steps": [], "version": 2, "id": "x", "createdAt": 1}',  # the steps before the fields: left to load_lazy
    '{"version": 2, "version": 2, "id": "x", "createdAt": 1, "steps": []}',  # a repeated key
    '{"version": 2, "id": "x", "createdAt": 1, "steps": [], "steps": []}',
    '{"version": 3, "id": "x", "createdAt": 1, "steps": []}',
    '{"version": 2.0, "id": "x", "createdAt": 1, "steps": []}',  # load converts it: not the index's business
    '{"version": 2, "id": "x", "createdAt": 1, "steps": {}}',
    '{"version": 2, "id": "x", "createdAt": 1, "steps": [1]}',
    '{"version": 2, "id": "x", "createdAt": 1, "steps": []} x',
    '{"version": 2, "id": "x", "createdAt": 1, "steps": [], "a": NaN}',
    '{"version": 2, "id": "x", "createdAt": 1, "steps": [',
])
def test_what_the_index_does_not_read_itself(tmp_path: Path, text: str) -> None:
    path = tmp_path / "odd.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(Unusual):
        index(path)


def test_bytes_that_are_not_utf8_are_left_to_load_lazy(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    save(chain_of([{"text": "café"}]), path)
    path.write_bytes(path.read_bytes().replace("é".encode(), b"\xe9"))
    with pytest.raises(Unusual):
        index(path)
    with pytest.raises(CassetteError):
        load_lazy(path)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such file"):
        Indexer(tmp_path / "nope.json")
    with pytest.raises(CassetteError, match="is a directory"):
        Indexer(tmp_path)


def open_descriptors_of(path: Path) -> int:
    """How many of this process's file descriptors are open on `path`."""
    return sum(1 for fd in os.listdir("/proc/self/fd") if os.path.realpath(f"/proc/self/fd/{fd}") == str(path))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_the_file_stays_open_while_a_step_holds_it_and_closes_after_without_a_warning(tmp_path: Path) -> None:
    """Each step reads its payload from the open file: the file lives as long as the steps, then is closed
    (never left for the collector to find unclosed, which warns)."""
    path = (tmp_path / "run.json").resolve()
    save(chain_of([{"n": i} for i in range(3)]), path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        _, steps = index(path)  # the indexer is gone; its steps are not
        gc.collect()
        assert open_descriptors_of(path) == 1 and steps[2].decoded().payload == {"n": 2}
        del steps
        gc.collect()
        assert open_descriptors_of(path) == 0
        indexer = Indexer(path)
        indexer.file.close()
        indexer.file.close()  # twice: once closed, closed
        del indexer
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning) and str(path) in str(w.message)
            ] == []


def test_steps_read_back_survive_an_atomic_rewrite_and_say_so_when_the_file_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    save(chain_of([{"n": i} for i in range(5)]), path)
    _, steps = index(path)
    other = tmp_path / "other.json"
    save(chain_of([{"m": 0}]), other)
    os.replace(other, path)  # a rewrite by rename: the open file is the old one
    assert steps[4].decoded().payload == {"n": 4}
    _, steps = index(path)
    with open(path, "r+b") as handle:
        handle.truncate(10)
    with pytest.raises(CassetteError, match="cut short while open"):
        steps[0].decoded()


# -- any layout, any chunking, any damage ------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def layout(cassette: Any, rng: random.Random) -> bytes:
    """The cassette as some other writer might lay it out: any indent, key order, extra fields."""
    top = msgspec.to_builtins(cassette)
    if rng.random() < 0.3:
        top["extra"] = {"k": [1, "}"]}
    steps = []
    for step in top["steps"]:
        items = list(step.items())
        rng.shuffle(items)
        if rng.random() < 0.2:
            items.append(("unknown", "x"))
        steps.append(dict(items))
    top["steps"] = steps
    if rng.random() < 0.5:  # the fields after the steps
        order = ["version", "id", "createdAt", "steps", *[k for k in top if k not in
                                                           ("version", "id", "createdAt", "steps")]]
    else:
        order = [k for k in top if k != "steps"] + ["steps"]
    top = {k: top[k] for k in order if k in top}
    indent = rng.choice([None, 0, 1, 2, 4, "\t"])
    separators = rng.choice([(",", ":"), (", ", ": "), (" ,", " : ")])
    return json.dumps(top, indent=indent, separators=separators if indent is None else None,
                      ensure_ascii=rng.random() < 0.5).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payloads=st.lists(json_values, max_size=6), seed=st.integers(0, 2**32), chunk=st.integers(1, 300),
       window=st.integers(1, 64))
def test_any_layout_is_read_the_same_or_left_to_load_lazy(tmp_path: Path, payloads: list[Any], seed: int,
                                                          chunk: int, window: int) -> None:
    rng = random.Random(seed)
    data = layout(chain_of(payloads), rng)
    path = tmp_path / "any.json"
    path.write_bytes(data)
    judged_alike(path, chunk=chunk, window=window)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payloads=st.lists(json_values, min_size=1, max_size=4), seed=st.integers(0, 2**32),
       chunk=st.integers(1, 200), cut=st.floats(0, 1), junk=st.binary(min_size=1, max_size=4))
def test_damaged_bytes_are_never_read_where_load_lazy_refuses(tmp_path: Path, payloads: list[Any], seed: int,
                                                              chunk: int, cut: float, junk: bytes) -> None:
    rng = random.Random(seed)
    data = bytearray(layout(chain_of(payloads), rng))
    at = int(cut * (len(data) - 1))
    action = rng.choice(["truncate", "replace", "insert"])
    if action == "truncate":
        del data[at:]
    elif action == "replace":
        data[at:at + len(junk)] = junk
    else:
        data[at:at] = junk
    path = tmp_path / "damaged.json"
    path.write_bytes(bytes(data))
    try:
        lazy = load_lazy(path)
    except CassetteError:
        with pytest.raises(Unusual):
            index(path, chunk=chunk)
        return
    try:
        header, steps = index(path, chunk=chunk)
    except Unusual:
        return
    assert_same(header, steps, lazy)


def test_the_usual_layout_is_read_without_asking_msgspec_for_each_end(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The two-space layout's step ends are found by a byte search (each still checked by decoding)."""
    path = tmp_path / "usual.json"
    save(chain_of([{"n": i, "text": "x" * 50} for i in range(200)]), path)
    calls = 0
    original = Indexer._value_end

    def counted(self: Indexer, start: int) -> int:
        nonlocal calls
        calls += 1
        return original(self, start)

    monkeypatch.setattr(Indexer, "_value_end", counted)
    _, steps = index(path)
    assert len(steps) == 200
    assert calls < 10  # the keys and fields of the top level only


@pytest.mark.parametrize("seed", range(40))
def test_every_layout_of_a_valid_cassette_is_read_by_the_index_itself(tmp_path: Path, seed: int) -> None:
    """Any indent, key order, unknown fields, fields after the steps, numbers cut by the chunk or the
    window at any byte: never a reason to fall back."""
    rng = random.Random(seed)
    payloads = [{"a": [1, 2.5e-7, "x", -0.0, 12345678901234567890], "b": {"c": None, "d": True, "e": "é"}}
                for _ in range(rng.randint(0, 5))]
    path = tmp_path / "layout.json"
    path.write_bytes(layout(chain_of(payloads), rng))
    assert judged_alike(path, chunk=rng.randint(1, 300), window=rng.randint(1, 64))
