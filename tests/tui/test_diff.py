"""Diff screen: opens at the first divergence, moves between differences, toggles hash/semantic."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from blackbox.format.cassette import save
from blackbox_tui.screens.both_values import BothValues
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.screens.diff import DiffScreen
from blackbox_tui.screens.prompts import PathPrompt
from tests.tui.conftest import CHILD, FIXED, HYPOTHESIS, INCIDENT, PARENT, SIZE, make_app, settle
from tests.tui.synthetic import synthetic_cassette

pytestmark = pytest.mark.anyio


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_two_files_open_the_diff_at_the_first_divergence() -> None:
    app = make_app(PARENT, CHILD, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        assert screen.table.cursor == 3
        verdict = text_of(screen, "#verdict")
        assert "first divergence at step 3" in verdict
        assert "same status, but the final answer changed" in verdict
        assert "compared by hash" in verdict
        changes = text_of(screen, "#changes")
        assert "step 3: the changed value itself (the fork point) · 4 changed fields" in changes
        assert 'result.message: (absent) → "No hotels available for that date."' in changes
        assert screen.comparison is not None
        assert screen.comparison.rows[:3] == ("same", "same", "same")
        assert screen.comparison.rows[7:] == ("only_a",) * 8


async def test_next_and_previous_difference(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    save(synthetic_cassette(60, trace_id="a"), a)
    save(synthetic_cassette(60, trace_id="a", change_at=11), b)
    app = make_app(a, b, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.comparison.first_divergence == 11
        assert screen.table.cursor == 11
        assert "result.temp: 22 → 35" in text_of(screen, "#changes")
        await pilot.press("right_square_bracket")
        assert screen.table.cursor == 12  # the chain differs from here on: every later hash changes
        await pilot.press("left_square_bracket")
        assert screen.table.cursor == 11
        await pilot.press("N")
        assert screen.table.cursor == 11  # nothing before the first divergence
        await pilot.press("n", "n")
        assert screen.table.cursor == 13


async def test_s_toggles_hash_and_semantic_comparison() -> None:
    app = make_app(INCIDENT, FIXED, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        # two separate recordings: every hash differs (timestamps), so by hash they part at step 0
        assert screen.comparison.first_divergence == 0
        assert screen.table.cursor == 0
        await pilot.press("s")
        await settle(pilot)
        assert screen.comparison.semantic
        assert screen.comparison.first_divergence == 5
        assert "compared by semantic" in text_of(screen, "#verdict")
        assert "first divergence at step 5" in text_of(screen, "#verdict")
        await pilot.press("g")
        await settle(pilot)
        assert "same on both sides" in text_of(screen, "#changes")
        await pilot.press("s")
        await settle(pilot)
        assert not screen.comparison.semantic


async def test_both_values_in_full() -> None:
    app = make_app(INCIDENT, HYPOTHESIS, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.table.cursor == 5
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, BothValues)
        left = str(app.screen.query_one("#value-a").query_one(Static).render()).split("\n")
        right = str(app.screen.query_one("#value-b").query_one(Static).render()).split("\n")
        assert len(left) == len(right)  # aligned line for line
        row = next(i for i, line in enumerate(left) if '"value": "91"' in line)
        assert '"value": "124"' in right[row]  # the changed value faces its counterpart
        await pilot.press("escape")
        await pilot.press("G", "v")  # past B's end: A's step faces a note, not `null`
        await settle(pilot)
        right = str(app.screen.query_one("#value-b").query_one(Static).render())
        assert right == "(no such step in B)" or "null" not in right
        await pilot.press("escape")
        assert isinstance(app.screen, DiffScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


async def test_only_on_one_side_rows() -> None:
    app = make_app(PARENT, CHILD, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("G")
        await settle(pilot)
        assert "only in A" in text_of(app.screen, "#changes")


async def test_d_in_browse_asks_for_a_second_cassette_and_loads_it_in_a_worker() -> None:
    app = make_app(PARENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("d")
        assert isinstance(app.screen, PathPrompt)
        await pilot.press(*str(CHILD), "enter")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        assert app.screen.table.cursor == 3


async def test_d_with_a_bad_second_file_reports_and_stays(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 2, "id": "x", "createdAt": 0, "steps": [', encoding="utf-8")
    app = make_app(PARENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("d", *str(bad), "enter")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        (message,) = [n.message for n in app._notifications]
        assert "bad.json" in message, message  # one toast naming the file that could not be read


async def test_companion_run_opens_directly_with_d() -> None:
    app = make_app(PARENT, CHILD)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)


async def test_large_diff_opens(large_cassette: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    save(synthetic_cassette(10_000, trace_id="large", change_at=5_001), other)
    app = make_app(large_cassette, other, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.comparison.first_divergence == 5_001
        assert screen.table.cursor == 5_001
        assert screen.table.scroll_y > 4_900


@pytest.mark.parametrize(("a", "b"), [(PARENT, CHILD), (INCIDENT, HYPOTHESIS), (INCIDENT, FIXED), (CHILD, PARENT)])
@pytest.mark.parametrize("semantic", [False, True])
def test_the_screens_comparison_is_blackbox_diff(a: Path, b: Path, semantic: bool) -> None:
    """By hash the screen compares stored hashes without decoding payloads: it must agree with the core's diff."""
    from blackbox.format.cassette import load
    from blackbox.format.diff import diff
    from blackbox_tui.diffing import compare
    from blackbox_tui.run import Run

    shown = compare(Run.open(a), Run.open(b), semantic=semantic)
    report = diff(load(a), load(b), semantic=semantic)
    assert shown.rows == tuple(report.rows)
    assert shown.first_divergence == report.first_divergence
    assert shown.verdict == report.verdict.text


async def test_why_it_diverged_edit_carry_and_behaviour(tmp_path: Path) -> None:
    """A what-if fork of the demo: ✎ at the fork point, ≈ for the request that only carries the value, ≠ where
    the model answered differently; the header names the first behavioural divergence."""
    from blackbox.demo import demo_pair
    from blackbox.fork.whatif import ScriptedModel, what_if
    from blackbox.format.cassette import load

    parent, _ = demo_pair(tmp_path)
    replies = [{"type": "final_answer", "text": "No hotels that weekend, so nothing was booked for Alice."}]
    fork, _ = what_if(load(parent), 3, {"results": []}, ScriptedModel(replies), trace_id="wi")
    save(fork, tmp_path / "wi.json")
    app = make_app(parent, tmp_path / "wi.json", diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert [screen.table.kind(i) for i in (2, 3, 4, 5)] == ["same", "edited", "carry", "changed"]
        assert screen.first_behavioural == 5
        verdict = text_of(screen, "#verdict")
        assert "first divergence at step 3 · first behavioural divergence at step 5" in verdict
        assert "A success" in verdict and "B success" in verdict and "nothing was booked" in verdict
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert "carries the change" in text_of(screen, "#changes")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert "behaviour changed here" in text_of(screen, "#changes")
        row = screen.table.render_line(5 - int(screen.table.scroll_y)).text
        assert " ≠ " in row


async def test_same_payload_different_hash_is_not_a_change_of_nothing(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    save(synthetic_cassette(60, trace_id="a"), a)
    save(synthetic_cassette(60, trace_id="a", change_at=11), b)
    app = make_app(a, b, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.table.kind(12) == "carry"  # the next request: only the new value in its history
        row = next(i for i in screen.comparison.differing if screen.table.kind(i) == "hash_only")
        screen.table.move_to(row)
        await settle(pilot)
        changes = text_of(screen, "#changes")
        assert "same payload, different hash: an earlier step differs" in changes
        assert "0 changed field" not in changes


def test_long_strings_are_compared_word_by_word() -> None:
    from blackbox_tui.diffing import word_changes
    from blackbox_tui.screens.diff import _words

    left, right = word_changes("Hotel booked for Alice on Friday at 14:00.", "Hotel booked for Bob on Friday at 16:00.")
    assert [text for text, changed in left if changed] == ["Alice", "14:00."]
    assert [text for text, changed in right if changed] == ["Bob", "16:00."]
    shown = _words("Hotel booked for Alice on Friday at 14:00.", "Hotel booked for Bob on Friday at 16:00.")
    assert shown.plain == ("\n  A: Hotel booked for Alice on Friday at 14:00."
                           "\n  B: Hotel booked for Bob on Friday at 16:00.")
    styled = {shown.plain[span.start:span.end] for span in shown.spans if "underline" in str(span.style)}
    assert styled == {"Alice", "14:00.", "Bob", "16:00."}


async def test_enter_browses_f_forks_and_slash_finds_in_the_diff(tmp_path: Path) -> None:
    from blackbox_tui.screens.fork import ForkScreen

    parent = tmp_path / "parent.json"
    parent.write_bytes(PARENT.read_bytes())
    app = make_app(parent, CHILD, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.table.cursor == 3
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen) and app.screen.table.step_index == 3
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, ForkScreen) and app.screen.index == 3
        await pilot.press("escape")
        await pilot.press("slash")
        assert isinstance(app.screen, PathPrompt)
        await pilot.press(*"final_answer", "enter")
        await settle(pilot)
        row = app.screen.table.cursor
        assert "final_answer" in app.screen.a.summary(row) or "final_answer" in app.screen.b.summary(row)


def test_the_search_for_behaviour_stops_at_its_time_budget(tmp_path: Path) -> None:
    from blackbox_tui.diffing import Classifier, compare
    from blackbox_tui.run import Run

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    save(synthetic_cassette(300, trace_id="a"), a)
    save(synthetic_cassette(300, trace_id="a", change_at=11), b)
    ra, rb = Run.open(a), Run.open(b)
    comparison = compare(ra, rb, semantic=False)
    unhurried = Classifier(ra, rb, comparison)
    assert unhurried.first_behavioural() is None and unhurried.complete  # the change is only ever carried
    assert {unhurried.kind(i) for i in comparison.differing} == {"edited", "carry", "hash_only"}
    hurried = Classifier(ra, rb, comparison)
    assert hurried.first_behavioural(budget=0) is None and not hurried.complete
    assert hurried.scanned_to == comparison.first_divergence
