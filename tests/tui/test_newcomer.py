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


# -- 80×24 ------------------------------------------------------------------------------------------------

SMALL = (80, 24)


def footer_fits(screen, last: str = "Help") -> None:
    """Every key of the footer is on screen, the last one (`last`) too."""
    keys = list(screen.query("FooterKey"))
    assert keys and all(key.region.right <= SMALL[0] and key.region.width > 0 for key in keys)
    assert last in str(keys[-1].render()) or last in str(keys[-2].render())


def lines_fit(static: Static) -> None:
    """No line is wider than the widget: none is wrapped again by the widget, back to column 0."""
    width = static.size.width
    assert width > 0
    assert max(len(line) for line in str(static.render()).split("\n")) <= width


async def test_the_diff_at_80x24_keeps_its_outcome_lines_and_its_whole_footer() -> None:
    from tests.tui.conftest import HYPOTHESIS

    app = make_app(INCIDENT, HYPOTHESIS, diff=True)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        diff = app.screen
        verdict = text(diff, "#verdict").split("\n")
        assert verdict[3].startswith("A success") and verdict[4].startswith("B success")
        assert diff.query_one("#verdict").region.height == 5
        assert diff.table.region.height >= 8  # still room for the rows
        footer_fits(diff)
        await pilot.press("v")
        await settle(pilot)
        left, right = (app.screen.query_one(f"#value-{side}").query_one(Static) for side in "ab")
        lines_fit(left)
        lines_fit(right)
        assert str(left.render()).count("\n") == str(right.render()).count("\n")  # still row for row


async def test_browse_and_help_at_80x24_wrap_json_and_keys_under_themselves() -> None:
    app = make_app(INCIDENT)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"jjjjj")
        await settle(pilot)
        screen = app.screen
        footer_fits(screen)
        payload = screen.query_one("#payload-text", Static)
        lines_fit(payload)
        assert any(line.startswith(" " * 10) and "Temperatu" in line for line in str(payload.render()).split("\n"))
        await pilot.press("question_mark")
        await settle(pilot)
        lines_fit(app.screen.query_one("#help-text", Static))


async def test_the_fork_screen_at_80x24_shows_the_whole_output_path(incident_copy: Path, monkeypatch) -> None:
    from textual.widgets import Input

    from tests.tui.test_fork import open_fork

    monkeypatch.chdir(incident_copy.parent.parent)
    app = make_app(incident_copy)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_fork(pilot)
        out = screen.query_one("#out", Input)
        assert out.content_region.width >= len(out.value) + 1
        assert out.region.bottom <= SMALL[1] - 1  # on screen, above the footer
        footer_fits(screen, "Back")


async def test_a_change_of_a_large_file_arriving_as_the_app_quits_is_ignored(large_cassette: Path) -> None:
    """The background reader's last message can arrive once the screen's widgets are gone (the screenshot script
    met it): it is dropped, not raised."""
    app = make_app(large_cassette)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.screen
        shown = (screen.total, list(screen.rows), screen._seen, screen._generation, screen.header)
    assert not screen.query("#steps")  # the screen's widgets were removed with the app
    assert screen.run_changed(screen.run) is None  # no NoMatches raised from a widget that is gone
    assert (screen.total, list(screen.rows), screen._seen, screen._generation, screen.header) == shown  # ignored
