"""Screens open from the app, each through its door (`blackbox_tui.doors`, `app.SCREENS`): every door's key opens
its screen from every screen it names, is listed there (footer, help, palette) and never hides a key of that
screen; the diff opens at the step it is given; a door refuses in one toast where its screen cannot open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen

from blackbox_tui.app import SCREENS
from blackbox_tui.commands import screen_actions
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.screens.diff import DiffScreen
from blackbox_tui.screens.fork import ForkScreen
from blackbox_tui.screens.help import help_content
from tests.tui.conftest import CHILD, HYPOTHESIS, PARENT, SIZE, make_app, settle

pytestmark = pytest.mark.anyio

AT = 5  # a tool result of triage-incident (a fork point), present in both fleet runs


def footer_keys(screen: Screen[Any]) -> list[str]:
    return [str(key.render()).strip() for key in screen.query("FooterKey")]


async def through_door(pilot: Pilot[Any], cls: type, origin: str, at: int = AT) -> Screen[Any]:
    """Open `cls` through its door from the screen whose prefix is `origin` (the diff of the app's runs is opened
    first when that is the origin), its cursor on step `at`."""
    app = pilot.app
    if origin == "diff" and not isinstance(app.screen, DiffScreen):
        app.open_diff(app.runs[0], app.runs[-1])
        await settle(pilot)
    here = app.screen.here()
    assert origin == app.screen.BINDING_PREFIX and here is not None and here.go_to is not None
    here.go_to(at)
    await settle(pilot)
    await pilot.press(cls.DOOR.key.split(",")[0])
    await settle(pilot)
    return app.screen


DOORS = [(cls, origin) for cls in SCREENS for origin in cls.DOOR.on]


@pytest.mark.parametrize(("cls", "origin"), DOORS, ids=lambda x: x if isinstance(x, str) else x.__name__)
async def test_each_door_opens_its_screen_from_each_screen_it_names(cls: type, origin: str,
                                                                   incident_copy: Path) -> None:
    app = make_app(incident_copy, HYPOTHESIS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        if origin == "diff":
            app.open_diff(*app.runs)
            await settle(pilot)
        here = app.screen
        door = cls.DOOR
        listed = {description for description, *_ in screen_actions(here)}
        assert door.description in listed  # the palette's list
        assert f"{door.description} — {door.tooltip}" in str(help_content(here))
        assert (door.description in " ".join(footer_keys(here))) == door.on[origin]
        own = {key for binding in vars(type(here))["BINDINGS"] for key in binding.key.split(",")}
        assert not own & set(door.key.split(",")), f"{door.key} is a key of {origin} already: it would never open"
        opened = await through_door(pilot, cls, origin)
        assert type(opened) is cls and opened is not here


async def test_the_diff_opens_at_the_step_it_is_given() -> None:
    """Not at the first divergence (3) when it is asked for another step (the fork screen asks for its fork
    point): the cursor and the changes pane are on that step."""
    app = make_app(PARENT, CHILD)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_diff(*app.runs, at=8)
        await settle(pilot)
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.comparison is not None
        assert diff.comparison.first_divergence == 3
        assert diff.table.cursor == 8
        assert str(diff.query_one("#changes").render()).startswith("step 8: only in A")
        await pilot.press("escape")
        await settle(pilot)
        app.open_diff(*app.runs)  # and without one, at the first divergence
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen) and app.screen.table.cursor == 3


async def test_the_fork_door_says_where_a_fork_can_start(incident_copy: Path) -> None:
    from tests.tui.test_browse import toasts

    app = make_app(incident_copy, HYPOTHESIS, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        diff = app.screen
        diff.table.move_to(0)
        await settle(pilot)
        await pilot.press("f")
        await pilot.pause()
        assert app.screen is diff
        assert toasts(app) == ["A fork starts at a tool_result step of A (tool results here: 3, 5, 9, 13); "
                               "] jumps between differences."]
        await pilot.press("enter")  # browse A at step 0, then its fork door at step 5
        await settle(pilot)
        browse = app.screen
        assert isinstance(browse, BrowseScreen) and browse.back and browse.table.step_index == 0
        browse.table.go_to_step(AT)
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, ForkScreen) and app.screen.index == AT
