"""Tests that each check of the hash chain, and of semantic diff, does its own job.

A tamper test that edits a field without recomputing the hash is caught by the hash check alone; these
tamper *and re-hash*, the way a careful forger would, so only the link (prevHash), the index or the first
step's null prevHash can catch them.  Disable any one of those checks and a test here fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from blackbox.format.canonical import step_hash
from blackbox.format.cassette import Cassette, Step, StepChain, chain_break, load, save
from blackbox.format.diff import diff
from blackbox.format.verify import verify
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES

TRACE = FIXTURES / "traces/success-tool-use.v2.json"


def rehash(step: Step, prev: str | None) -> Step:
    return msgspec.structs.replace(step, prevHash=prev,
                                   hash=step_hash(step.index, step.type, step.timestamp, step.payload, prev))


def edited_and_rehashed(at: int) -> Cassette:
    """Step `at`'s result changed and its own hash recomputed; the next step still links to the old hash."""
    c = load(TRACE)
    assert c.steps[at].type == "tool_result"
    step = c.steps[at]
    payload = {**step.payload, "result": "forged"}
    c.steps[at] = rehash(msgspec.structs.replace(step, payload=payload), step.prevHash)
    return c


def test_an_edited_and_rehashed_step_breaks_the_next_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c = edited_and_rehashed(3)
    broken = chain_break(c)
    assert broken is not None
    assert broken.index == 4
    assert "step 4 prevHash does not match the hash of step 3" in broken.reason
    path = tmp_path / "forged.json"
    save(c, path)
    report = verify(path)
    assert not report.ok and report.failure is not None
    assert (report.failure.name, report.failure.step) == ("hash_chain", 4)
    code, out, _ = run_cli(capsys, "verify", path)
    assert code == 1 and "prevHash does not match" in out


def test_a_rehashed_last_step_is_only_caught_by_its_link() -> None:
    """Re-hashing every later step too makes a valid chain: verify cannot see that (see SECURITY.md) —
    but the final hash changes, which is what `verify --expect-hash` pins."""
    original = load(TRACE)
    c = edited_and_rehashed(3)
    prev = c.steps[3].hash
    for i in range(4, len(c.steps)):
        c.steps[i] = rehash(c.steps[i], prev)
        prev = c.steps[i].hash
    assert chain_break(c) is None
    assert c.steps[-1].hash != original.steps[-1].hash


def test_a_wrong_index_is_caught_even_when_the_chain_is_rehashed() -> None:
    c = load(TRACE)
    prev = c.steps[1].hash
    c.steps[2] = rehash(msgspec.structs.replace(c.steps[2], index=7), prev)
    prev = c.steps[2].hash
    for i in range(3, len(c.steps)):
        c.steps[i] = rehash(c.steps[i], prev)
        prev = c.steps[i].hash
    broken = chain_break(c)
    assert broken is not None and broken.index == 2
    assert broken.reason == "step 2 has index 7; expected 2"


def test_a_first_step_with_a_rehashed_prev_hash_is_caught() -> None:
    c = load(TRACE)
    prev = "0" * 64
    for i in range(len(c.steps)):
        c.steps[i] = rehash(c.steps[i], prev)
        prev = c.steps[i].hash
    broken = chain_break(c)
    assert broken is not None and broken.index == 0
    assert "first step's must be null" in broken.reason


def _with_type(c: Cassette, at: int, type_: Any) -> Cassette:
    chain = StepChain(c.id)
    for s in c.steps:
        chain.append(type_ if s.index == at else s.type, s.timestamp, s.payload)
    return chain.cassette(c.createdAt)


def test_semantic_diff_compares_the_step_type(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a = load(TRACE)
    b = _with_type(a, 5, "tool_call" if a.steps[5].type != "tool_call" else "tool_result")
    assert a.steps[5].payload == b.steps[5].payload and a.steps[5].type != b.steps[5].type
    report = diff(a, b, semantic=True)
    assert report.first_divergence == 5
    path = tmp_path / "b.json"
    save(b, path)
    code, out, _ = run_cli(capsys, "diff", TRACE, path, "--semantic", "--json")
    assert code == 0 and json.loads(out)["firstDivergence"] == 5


def test_semantic_diff_ignores_timestamps_and_ids(tmp_path: Path) -> None:
    a = load(TRACE)
    chain = StepChain("other-id")
    for s in a.steps:
        chain.append(s.type, s.timestamp + 1000, s.payload)
    report = diff(a, chain.cassette(0), semantic=True)
    assert report.first_divergence is None
    assert diff(a, chain.cassette(0)).first_divergence == 0
