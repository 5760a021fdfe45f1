"""Every screen's keys reach the help and the command palette: each screen carries its help text and binding
prefix (`blackbox_tui.keys`), so a new screen cannot be forgotten by a list kept elsewhere.  A screen with a door
(`app.SCREENS`) is opened here through it; a dialog opened by code needs a factory line below."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.actions import parse
from textual.binding import Binding, BindingType
from textual.screen import Screen

import blackbox_tui
from blackbox_tui.app import SCREENS as DOORS
from blackbox_tui.app import BlackboxApp
from blackbox_tui.commands import ScreenActions, screen_actions
from blackbox_tui.keys import Keyed
from blackbox_tui.screens.base import BlackboxModal, BlackboxScreen
from blackbox_tui.screens.help import HelpScreen, help_content
from blackbox_tui.screens.prompts import PathPrompt, PickOne
from blackbox_tui.screens.sweep import SweepScreen
from blackbox_tui.screens.tool_answer import ToolResultPrompt
from tests.tui.conftest import HYPOTHESIS, SIZE, make_app, settle
from tests.tui.test_doors import through_door

pytestmark = pytest.mark.anyio

for module in pkgutil.walk_packages(blackbox_tui.__path__, "blackbox_tui."):
    importlib.import_module(module.name)  # every class the UI declares, found below by its base


def subclasses(base: type) -> set[type]:
    found = set(base.__subclasses__())
    for sub in list(found):
        found |= subclasses(sub)
    return {cls for cls in found if cls.__module__.startswith("blackbox_tui")} - {BlackboxScreen, BlackboxModal}


class LaterScreen(BlackboxScreen[None]):
    """A screen added later, with a prefix no list names: its keys must still be listed."""

    HELP = "A screen the help and the palette have never heard of."
    BINDING_PREFIX = "later"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "zoom", "Zoom", tooltip="Zoom the view", id="later.zoom"),
        Binding("escape", "app.pop_screen", "Back", id="later.back"),
    ]

    def action_zoom(self) -> None:
        """(nothing to zoom in a test)"""


# How to open each dialog that code opens (not a key: it has no door) over the app's browse screen (a new one needs a
# line here: the test below says so).  A screen with a door is opened through it (`through_door`).
FACTORIES: dict[type, Callable[[BlackboxApp], Screen[Any]]] = {
    HelpScreen: lambda app: HelpScreen(app.screen),
    PickOne: lambda app: PickOne("Show only…", [("all", "All steps")]),
    PathPrompt: lambda app: PathPrompt("Write to:", "x.json"),
    ToolResultPrompt: lambda app: ToolResultPrompt("lookup", {"id": 1}),
    LaterScreen: lambda app: LaterScreen(),
    SweepScreen: lambda app: SweepScreen("no-sweep-here"),  # the app opens it on a sweep's folder (no door)
}
SCREENS = [*FACTORIES, *DOORS]


def test_every_screen_is_a_blackbox_screen_with_help_and_a_prefix() -> None:
    screens = subclasses(Screen)
    assert screens, "no screens found"
    assert not {cls for cls in screens if not issubclass(cls, BlackboxScreen | BlackboxModal)}
    for cls in screens:
        assert cls.HELP, f"{cls.__name__} has no HELP"
        assert cls.BINDING_PREFIX, f"{cls.__name__} has no BINDING_PREFIX"
    prefixes = [cls.BINDING_PREFIX for cls in subclasses(Keyed) if "BINDING_PREFIX" in vars(cls)]
    assert len(prefixes) == len(set(prefixes)), prefixes
    missing = sorted(c.__name__ for c in screens - set(SCREENS))
    assert not missing, f"give {missing} a DOOR and a line in app.SCREENS, or (a dialog code opens) a factory here"


def test_every_binding_of_ours_has_an_id_with_its_prefix_and_a_description() -> None:
    for cls in [*subclasses(Keyed), LaterScreen]:
        for binding in vars(cls).get("BINDINGS", []):
            assert isinstance(binding, Binding), f"{cls.__name__}: declare a Binding (with an id), not a tuple"
            assert (binding.id or "").startswith(cls.BINDING_PREFIX + "."), f"{cls.__name__}: {binding}"
            assert binding.description, f"{cls.__name__}: {binding.id} has no description"


async def palette_texts(screen: Screen[Any]) -> set[str]:
    """What the command palette's provider offers on `screen`."""
    provider = ScreenActions(screen)
    return {str(hit.display) async for hit in provider.discover()}


@pytest.mark.parametrize("cls", list(SCREENS), ids=lambda cls: cls.__name__)
async def test_every_screen_s_bindings_appear_in_help_and_the_palette(cls: type, incident_copy: Path) -> None:
    app = make_app(incident_copy, HYPOTHESIS)  # browse's companion: its diff door opens the diff at once
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        if cls in FACTORIES:
            await app.push_screen(FACTORIES[cls](app))
        else:
            await through_door(pilot, cls, next(iter(cls.DOOR.on)))
        await settle(pilot)
        screen = app.screen
        assert type(screen) is cls
        bindings = [b for b in vars(cls)["BINDINGS"] if isinstance(b, Binding)]
        assert bindings, f"{cls.__name__} declares no bindings"
        # a key the screen turns off where it means nothing (check_action False: the fork's ctrl+t on a result
        # with no text block) is listed nowhere there
        declared = {b.description for b in bindings if screen.check_action(*parse(b.action)[1:]) is not False}
        assert declared, f"{cls.__name__} declares no bindings"
        listed = {description for description, *_ in screen_actions(screen)}
        assert declared <= listed, f"{cls.__name__}: not listed: {declared - listed}"
        assert declared <= await palette_texts(screen)
        if cls is not HelpScreen:  # the help shows the help of the screen under it, never its own
            text = str(help_content(screen))
            assert str(screen.HELP) in text
            for description in declared:
                assert description in text, f"{cls.__name__}: {description} missing from its help"
