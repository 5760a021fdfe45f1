"""diff by stored hash on lazily loaded files: the same report as the full diff, and both hash chains checked
together exactly as `chain_break` checks each (a shared prefix hashed once when both files hold the same
bytes there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import chain_break, load, loads
from blackbox.format.diff import diff, diff_lazy, lazy_chain_breaks, lazy_outcome
from blackbox.format.lazy import load_lazy, loads_lazy
from blackbox.format.outcome import outcome
from tests.conftest import FIXTURES

TRACES, FLEET = FIXTURES / "traces", FIXTURES / "fleet-triage" / "cassettes"
PAIRS = [
    (TRACES / "fork-parent.v2.json", TRACES / "fork-child.v2.json", False),
    (TRACES / "fork-child.v2.json", TRACES / "fork-parent.v2.json", False),
    (FLEET / "triage-incident.json", FLEET / "triage-hypothesis.json", False),
    (FLEET / "triage-incident.json", FLEET / "triage-fixed.json", True),
    (TRACES / "success-tool-use.v2.json", TRACES / "success-tool-use.v2.json", True),
    (TRACES / "success-final-answer.v2.json", TRACES / "error-unknown-tool.v2.json", False),
]


@pytest.mark.parametrize(("a", "b", "semantic"), PAIRS, ids=lambda v: getattr(v, "stem", str(v)))
def test_the_lazy_diff_reports_what_the_full_diff_reports(a: Path, b: Path, semantic: bool) -> None:
    lazy = diff_lazy(load_lazy(a), load_lazy(b), semantic=semantic)
    full = diff(load(a), load(b), semantic=semantic)
    assert lazy.to_dict() == full.to_dict()
    assert lazy_outcome(load_lazy(a)) == outcome(load(a))
    assert lazy_chain_breaks(load_lazy(a), load_lazy(b)) == (None, None)


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _breaks(a: dict[str, Any], b: dict[str, Any]) -> None:
    da, db = json.dumps(a).encode(), json.dumps(b).encode()
    assert lazy_chain_breaks(loads_lazy(da), loads_lazy(db)) == (chain_break(loads(da)), chain_break(loads(db)))


def test_a_payload_changed_in_the_shared_prefix_of_one_file_breaks_that_file_only() -> None:
    a, b = _doc(TRACES / "fork-parent.v2.json"), _doc(TRACES / "fork-child.v2.json")
    a["steps"][1]["payload"]["toolInput"]["query"] = "edited"  # hash kept: a tampered file
    _breaks(a, b)
    _breaks(b, a)


def test_twins_tampered_alike_are_both_broken() -> None:
    """The same bytes hashed once still count for both files."""
    a, b = _doc(TRACES / "fork-parent.v2.json"), _doc(TRACES / "fork-child.v2.json")
    for doc in (a, b):
        doc["steps"][2]["payload"]["toolName"] = "edited"
    _breaks(a, b)
    assert chain_break(loads(json.dumps(a).encode())) is not None


@pytest.mark.parametrize("edit", ["index", "prevHash", "first_prev", "hash", "timestamp_type", "length"])
def test_every_link_check_agrees_with_chain_break(edit: str) -> None:
    a, b = _doc(TRACES / "fork-parent.v2.json"), _doc(TRACES / "fork-parent.v2.json")
    if edit == "index":
        a["steps"][4]["index"] = 5
    elif edit == "prevHash":
        b["steps"][6]["prevHash"] = "0" * 64
    elif edit == "first_prev":
        a["steps"][0]["prevHash"] = "0" * 64
    elif edit == "hash":
        b["steps"][9]["hash"] = "f" * 64
    elif edit == "timestamp_type":
        a["steps"][3]["timestamp"] = float(a["steps"][3]["timestamp"]) + 0.5  # not twins any more: rehashed
    else:
        del b["steps"][10:]
    _breaks(a, b)


def test_the_cli_refuses_a_tampered_file_in_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from blackbox.cli import app

    a = _doc(TRACES / "fork-parent.v2.json")
    a["steps"][1]["payload"]["toolInput"]["query"] = "edited"
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(a))
    result = CliRunner().invoke(app, ["diff", str(path), str(TRACES / "fork-child.v2.json")])
    assert result.exit_code == 2 and result.stdout == ""  # bad input, never mistaken for a divergence
    assert result.stderr.startswith("error: ") and "hash chain broken at step 1" in result.stderr
