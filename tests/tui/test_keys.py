"""Every screen's keys reach the help and the command palette: each screen carries its help text and binding
prefix (`blackbox_tui.keys`), so a new screen cannot be forgotten by a list kept elsewhere."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.binding import Binding, BindingType
from textual.screen import Screen

import blackbox_tui
from blackbox_tui.app import BlackboxApp
from blackbox_tui.commands import ScreenActions, screen_actions
from blackbox_tui.keys import Keyed
from blackbox_tui.screens.base import BlackboxModal, BlackboxScreen
from blackbox_tui.screens.both_values import BothValues
from blackbox_tui.screens.browse import BrowseScreen
from blackbox_tui.screens.diff import DiffScreen
from blackbox_tui.screens.fork import ForkScreen
from blackbox_tui.screens.help import HelpScreen, help_content
from blackbox_tui.screens.prompts import PathPrompt, PickOne
from blackbox_tui.screens.timeline import TimelineScreen
from blackbox_tui.screens.tool_answer import ToolResultPrompt
from tests.tui.conftest import SIZE, make_app, settle

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


# How to open each screen over the app's browse screen (a new screen needs a line here: the test below says so).
SCREENS: dict[type, Callable[[BlackboxApp], Screen[Any]]] = {
    BrowseScreen: lambda app: BrowseScreen(app.runs[0]),
    DiffScreen: lambda app: DiffScreen(app.runs[0], app.runs[0]),
    ForkScreen: lambda app: ForkScreen(app.runs[0], 5),
    HelpScreen: lambda app: HelpScreen(app.screen),
    PickOne: lambda app: PickOne("Show only…", [("all", "All steps")]),
    PathPrompt: lambda app: PathPrompt("Write to:", "x.json"),
    BothValues: lambda app: BothValues(5, app.runs[0].steps[5], app.runs[0].steps[5]),
    ToolResultPrompt: lambda app: ToolResultPrompt("lookup", {"id": 1}),
    TimelineScreen: lambda app: TimelineScreen(app.runs[0]),
    LaterScreen: lambda app: LaterScreen(),
}


def test_every_screen_is_a_blackbox_screen_with_help_and_a_prefix() -> None:
    screens = subclasses(Screen)
    assert screens, "no screens found"
    assert not {cls for cls in screens if not issubclass(cls, BlackboxScreen | BlackboxModal)}
    for cls in screens:
        assert cls.HELP, f"{cls.__name__} has no HELP"
        assert cls.BINDING_PREFIX, f"{cls.__name__} has no BINDING_PREFIX"
    prefixes = [cls.BINDING_PREFIX for cls in subclasses(Keyed) if "BINDING_PREFIX" in vars(cls)]
    assert len(prefixes) == len(set(prefixes)), prefixes
    assert screens <= set(SCREENS), f"add a factory here for {sorted(c.__name__ for c in screens - set(SCREENS))}"


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
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = SCREENS[cls](app)
        await app.push_screen(screen)
        await settle(pilot)
        assert app.screen is screen
        declared = {b.description for b in vars(cls)["BINDINGS"] if isinstance(b, Binding)}
        assert declared, f"{cls.__name__} declares no bindings"
        listed = {description for description, *_ in screen_actions(screen)}
        assert declared <= listed, f"{cls.__name__}: not listed: {declared - listed}"
        assert declared <= await palette_texts(screen)
        if cls is not HelpScreen:  # the help shows the help of the screen under it, never its own
            text = str(help_content(screen))
            assert str(screen.HELP) in text
            for description in declared:
                assert description in text, f"{cls.__name__}: {description} missing from its help"
