"""What a new user met in the UI: the step counter's convention, a tampered cassette in the diff and the
browse table."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from blackbox_tui.screens.diff import DiffScreen
from tests.tui.conftest import INCIDENT, SIZE, make_app, settle

pytestmark = pytest.mark.anyio


def text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def row_text(screen, row: int) -> str:
    return "".join(segment.text for segment in screen.table.render_row(row, 120))


async def test_the_step_counter_names_the_step_by_its_index_and_counts_from_one() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert text(screen, "#status").startswith("step 0 (1 of 17)")
        await pilot.press("G")
        await settle(pilot)
        assert text(screen, "#status").startswith("step 16 (17 of 17)")  # the last row: 17 of 17, not 16 of 17
        assert row_text(screen, 16).lstrip().startswith("16  metadata")  # the row shows the same index


async def test_the_diff_of_a_tampered_cassette_shows_the_broken_chain(tampered: Path) -> None:
    app = make_app(INCIDENT, tampered, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.comparison is not None
        assert diff.has_class("-broken")
        banner = text(diff, "#diff-chain")
        assert "B (tampered.json): chain broken at step 5" in banner and "refuses it" in banner
        assert diff.query_one("#diff-chain").region.height >= 1  # shown, not just set
        assert "B: chain BROKEN at step 5" in text(diff, "#verdict").split("\n")[0]
        assert "A: chain" not in text(diff, "#verdict")


async def test_an_intact_pair_has_no_chain_banner() -> None:
    from tests.tui.conftest import HYPOTHESIS

    app = make_app(INCIDENT, HYPOTHESIS, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        diff = app.screen
        assert not diff.has_class("-broken") and diff.query_one("#diff-chain").region.height == 0
        assert "BROKEN" not in text(diff, "#verdict")


async def test_browse_marks_the_row_whose_hash_breaks(tampered: Path) -> None:
    app = make_app(tampered)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert row_text(screen, 5).startswith("✗") and " 5  tool_result" in row_text(screen, 5)
        assert not any(row_text(screen, row).startswith("✗") for row in range(17) if row != 5)
