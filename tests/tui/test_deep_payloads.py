"""A payload nested deeper than Blackbox reads (the original's hash check fails there too) shows in the UI as a
broken chain at its step, read whole or progressively, and the step itself says why: never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

import blackbox_tui.run as run_module
from blackbox.format.canonical import MAX_NESTING
from blackbox_tui.run import Run
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.widgets.run_header import RunHeader
from tests.tui.conftest import INCIDENT, SIZE, make_app, settle

pytestmark = pytest.mark.anyio
DEPTH = 3 * MAX_NESTING


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    """triage-incident with step 5's payload nested DEPTH levels (its hash left as recorded)."""
    doc = json.loads(INCIDENT.read_text(encoding="utf-8"))
    doc["steps"][5]["payload"] = "@DEEP@"
    text = json.dumps(doc, indent=2).replace('"@DEEP@"', "[" * DEPTH + "]" * DEPTH)
    path = tmp_path / "deep.json"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("progressive", [False, True], ids=["whole", "progressive"])
async def test_a_payload_too_deep_to_hash_shows_as_the_chain_broken_at_its_step(
        deep: Path, progressive: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if progressive:  # the indexer leaves the file to the whole-file loader, whose verdict is the same
        monkeypatch.setattr(run_module, "PROGRESSIVE_FROM", 1)
    app = make_app(deep)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        banner = str(screen.query_one("#chain-banner", Static).render())
        assert screen.has_class("-broken") and "Chain broken at step 5" in banner, banner
        assert "chain BROKEN at step 5" in str(screen.query_one(RunHeader).render())
        assert screen.table.row_count == len(json.loads(INCIDENT.read_text(encoding="utf-8"))["steps"])
        screen.table.go_to_step(5)
        await pilot.press("v")  # the step's JSON
        await settle(pilot)
        shown = " ".join(" ".join(str(w.render()).split()) for w in app.screen.query(Static))
        assert "too deep to hash" in shown and "too deep to read or hash" in shown, shown
        run = screen.run
        assert isinstance(run, Run)
        assert "too deep to read or hash" in run_module.pretty_json(run.decoded().steps[5].payload)
