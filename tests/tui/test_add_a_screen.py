"""docs/architecture.md's recipe "add a TUI screen", done as a contributor would: one module (written here into a
temporary package, outside the repository) and one line, its entry in `app.SCREENS` — no other file.  The screen
then opens from the screens its door names, and its key is in their footer, help and palette; its own keys are
in its help and palette.  And a screen whose keys no longer fit 80 columns keeps a whole footer."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import blackbox_tui.app
from blackbox_tui.commands import screen_actions
from blackbox_tui.screens.help import help_content
from blackbox_tui.widgets.fit_footer import FitFooter
from tests.tui.conftest import INCIDENT, SIZE, make_app, settle
from tests.tui.test_doors import footer_keys

pytestmark = pytest.mark.anyio

NOTES = '''
    """A throwaway screen: the notes on the step it was opened at."""

    from typing import ClassVar

    from textual.app import ComposeResult
    from textual.binding import Binding, BindingType
    from textual.widgets import Static

    from blackbox_tui.doors import Door, Here
    from blackbox_tui.screens.base import BlackboxScreen
    from blackbox_tui.widgets.fit_footer import FitFooter


    class {name}(BlackboxScreen[None]):
        HELP = "Notes on one step of the run."
        BINDING_PREFIX = "{prefix}"
        BINDINGS: ClassVar[list[BindingType]] = [
            Binding("escape", "app.pop_screen", "Back", id="{prefix}.back"),
            Binding("p", "pin", "Pin the note", tooltip="Keep this note on top", id="{prefix}.pin"),
        ]
        DOOR = Door("{key}", "{description}", "Write notes on the step under the cursor", on={{"browse": True}})

        def __init__(self, run, step) -> None:
            super().__init__()
            self.run, self.step = run, step

        @classmethod
        def open_from(cls, app, here: Here) -> None:
            app.push_screen(cls(here.run, here.step))

        def compose(self) -> ComposeResult:
            yield Static(f"notes on step {{self.step}} of {{self.run.name}}", id="notes")
            yield FitFooter()

        def action_pin(self) -> None:
            self.notify("pinned")
'''


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A temporary package `throwaway` to write screen modules into, importable for the test only."""
    root = tmp_path / "throwaway"
    root.mkdir()
    (root / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield root
    for name in [name for name in sys.modules if name == "throwaway" or name.startswith("throwaway.")]:
        del sys.modules[name]


def add_screen(package: Path, monkeypatch: pytest.MonkeyPatch, module: str, name: str, prefix: str, key: str,
               description: str) -> type:
    """The recipe: the screen's module (one file), then its line in `app.SCREENS` (for the test only)."""
    (package / f"{module}.py").write_text(textwrap.dedent(NOTES).format(
        name=name, prefix=prefix, key=key, description=description))
    cls = getattr(importlib.import_module(f"throwaway.{module}"), name)
    monkeypatch.setattr(blackbox_tui.app, "SCREENS", [*blackbox_tui.app.SCREENS, cls])  # the one line
    return cls


async def test_a_screen_added_as_one_module_and_one_line_opens_and_lists_its_keys(
        package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = add_screen(package, monkeypatch, "notes", "NotesScreen", "notes", "b", "Notes")
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        browse = app.screen
        assert "b Notes" in footer_keys(browse)
        assert "Notes — Write notes on the step under the cursor" in str(help_content(browse))
        assert "Notes" in {description for description, *_ in screen_actions(browse)}  # the palette's list
        await pilot.press("j", "j", "j", "b")
        await settle(pilot)
        screen = app.screen
        assert type(screen) is notes
        assert str(screen.query_one("#notes").render()) == "notes on step 3 of triage-incident.json"
        assert "Pin the note — Keep this note on top" in str(help_content(screen))
        assert {"Back", "Pin the note"} <= {description for description, *_ in screen_actions(screen)}
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is browse


async def test_a_footer_that_no_longer_fits_leaves_out_the_last_keys_not_help(
        package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two more doors on browse are more keys than 80 columns hold: the footer shows those that fit, whole, and
    keeps `q` and `?`; the keys left out are still in the help and the palette."""
    add_screen(package, monkeypatch, "notes", "NotesScreen", "notes", "b", "Notes")
    add_screen(package, monkeypatch, "marks", "MarksScreen", "marks", "m", "Bookmarks of this run")
    app = make_app(INCIDENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        browse = app.screen
        footer = browse.query_one(FitFooter)
        keys = list(browse.query("FooterKey"))
        assert keys and all(key.region.right <= 80 for key in keys)
        assert footer.virtual_size.width <= 80  # nothing past the edge to scroll to
        shown = footer_keys(browse)
        assert shown[-2:] == ["q Quit", "? Help"]
        assert "m Bookmarks of this run" not in shown and "/ Search" in shown
        assert "Bookmarks of this run" in {description for description, *_ in screen_actions(browse)}
        await pilot.resize_terminal(140, 36)  # room again: every key
        await settle(pilot)
        assert "m Bookmarks of this run" in footer_keys(browse)
