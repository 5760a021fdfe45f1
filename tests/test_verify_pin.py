"""`blackbox verify` prints the final hash, and `--expect-hash` pins it: the one check a forger who re-hashes
the whole chain cannot pass."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from blackbox.format.canonical import step_hash
from blackbox.format.cassette import Cassette, load, save
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES

TRACE = FIXTURES / "traces/success-tool-use.v2.json"
FINAL = load(TRACE).steps[-1].hash


def forged(tmp_path: Path) -> Path:
    """Step 3's result changed and every hash from there on recomputed: the chain verifies."""
    c = load(TRACE)
    prev = c.steps[2].hash
    for i in range(3, len(c.steps)):
        s = c.steps[i]
        payload = {**s.payload, "result": "forged"} if i == 3 else s.payload
        c.steps[i] = msgspec.structs.replace(s, payload=payload, prevHash=prev,
                                             hash=step_hash(s.index, s.type, s.timestamp, payload, prev))
        prev = c.steps[i].hash
    path = tmp_path / "forged.json"
    save(c, path)
    return path


def test_verify_prints_the_final_hash(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "verify", TRACE)
    assert code == 0 and f"final hash: {FINAL}" in out
    code, out, _ = run_cli(capsys, "verify", TRACE, "--json")
    assert code == 0 and json.loads(out)["finalHash"] == FINAL


def test_the_pinned_hash_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "verify", TRACE, "--expect-hash", FINAL.upper())
    assert code == 0 and "expected_hash" in out and "verified: all checks pass" in out


def test_a_rehashed_forgery_verifies_but_fails_the_pin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = forged(tmp_path)
    code, _, _ = run_cli(capsys, "verify", path)
    assert code == 0, "a re-hashed chain is consistent: this is what the pin is for"
    code, out, _ = run_cli(capsys, "verify", path, "--expect-hash", FINAL, "--json")
    report = json.loads(out)
    assert code == 1 and not report["ok"]
    assert report["failure"]["name"] == "expected_hash"
    assert report["checks"][-1]["status"] == "fail"


def test_a_broken_chain_has_no_final_hash_and_skips_the_pin(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    c = load(TRACE)
    c.steps[3] = msgspec.structs.replace(c.steps[3], payload={"tampered": True})
    path = tmp_path / "broken.json"
    save(c, path)
    code, out, _ = run_cli(capsys, "verify", path, "--expect-hash", FINAL, "--json")
    report = json.loads(out)
    assert code == 1 and report["finalHash"] is None
    assert report["failure"]["name"] == "hash_chain"
    assert report["checks"][-1] == {"name": "expected_hash", "status": "skip", "step": None,
                                    "detail": "skipped after an earlier failure"}


def test_an_empty_cassette_verifies_but_cannot_match_a_pin(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.json"
    save(Cassette(version=2, id="empty", createdAt=0, steps=[]), path)
    code, out, _ = run_cli(capsys, "verify", path)
    assert code == 0 and "final hash: none (no steps)" in out
    code, _, _ = run_cli(capsys, "verify", path, "--expect-hash", FINAL)
    assert code == 1


@pytest.mark.parametrize("bad", ["abc", "g" * 64, FINAL[:-1], FINAL + "0"])
def test_a_malformed_pin_is_a_usage_error(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    code, _, err = run_cli(capsys, "verify", TRACE, "--expect-hash", bad)
    assert code == 2 and err.startswith("error: --expect-hash")


@pytest.mark.parametrize("where", [12, 40, 63])
def test_the_pin_compares_all_64_digits(capsys: pytest.CaptureFixture[str], where: int) -> None:
    """A pin that matches the final hash in its first 12 digits (all that the report shows) but differs later
    is not the pinned cassette."""
    other = "0" if FINAL[where] != "0" else "1"
    pin = FINAL[:where] + other + FINAL[where + 1:]
    code, out, _ = run_cli(capsys, "verify", TRACE, "--expect-hash", pin)
    assert code == 1, out
    assert "expected_hash" in out and "FAIL" in out.upper()
    code, out, _ = run_cli(capsys, "verify", TRACE, "--expect-hash", pin, "--json")
    assert code == 1 and json.loads(out)["ok"] is False
