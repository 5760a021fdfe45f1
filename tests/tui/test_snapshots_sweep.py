"""SVG snapshots of the sweep screen (`blackbox tui SWEEP-FOLDER/`) at 80×24, 100×30 and 120×36: the pass-rate
table and the branches by verdict, a filter, a branch opened beside the parent in the diff, a broken manifest and
a missing branch file said in one line.  Update with `--snapshot-update`, then look at them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from blackbox.many.folder import MANIFEST
from blackbox_tui.app import BlackboxApp
from tests.tui.test_snapshots import steady
from tests.waiting import pilot_until

SMALL, MIDDLE, LARGE = (80, 24), (100, 30), (120, 36)


@pytest.fixture
def sweep(sweep_made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sweep as `coolant`, the working directory its parent: the screen shows the name as given."""
    shutil.copytree(sweep_made, tmp_path / "coolant")
    monkeypatch.chdir(tmp_path)
    return Path("coolant")


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x36"])
def test_sweep(snap_compare, sweep: Path, size: tuple[int, int]) -> None:
    assert snap_compare(BlackboxApp([], sweep=sweep), terminal_size=size, run_before=steady())


def test_sweep_filtered_100x30(snap_compare, sweep: Path) -> None:
    """Failed a check only (the filter's second choice), tokens and time per branch from 96 columns."""
    assert snap_compare(BlackboxApp([], sweep=sweep), terminal_size=MIDDLE,
                        run_before=steady("t", "down", "enter"))


def test_sweep_branch_in_the_diff_80x24(snap_compare, sweep: Path) -> None:
    app = BlackboxApp([], sweep=sweep)

    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("enter")
        await pilot_until(pilot, lambda: type(pilot.app.screen).__name__ == "DiffScreen", "the diff")
        await steady()(pilot)

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_sweep_broken_manifest_80x24(snap_compare, sweep: Path) -> None:
    (sweep / MANIFEST).write_text('{"settings": ', encoding="utf-8")
    assert snap_compare(BlackboxApp([], sweep=sweep), terminal_size=SMALL, run_before=steady())


def test_sweep_missing_branch_file_80x24(snap_compare, sweep: Path) -> None:
    (sweep / "branches" / "baseline-2.json").unlink()
    assert snap_compare(BlackboxApp([], sweep=sweep), terminal_size=SMALL, run_before=steady("enter"))
