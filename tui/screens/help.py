"""`?`: what the current screen is for and every key it answers to."""

from __future__ import annotations

import textwrap
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from ..commands import screen_actions
from .base import BlackboxModal

__all__ = ["HelpScreen"]

COMMON = (
    ("↑ ↓ j k", "move"), ("g G home end", "first / last"), ("pgup pgdn", "page"),
    ("tab", "next pane"), ("ctrl+p", "command palette"),
)


KEY_WIDTH = 14


def help_content(screen: Screen[object], width: int = 0) -> Content:
    """The intro and one row per key; with `width`, a long description wraps under itself, not under the keys."""
    intro = screen.HELP or ""
    lines = [Content.styled(line, "$text-muted") for line in (textwrap.wrap(intro, width) if width >= 20 else [intro])]
    lines.append(Content(""))
    rows = [(key, f"{description} — {tooltip}" if tooltip else description)
            for description, key, _, _, tooltip in screen_actions(screen)]
    rows += list(COMMON)
    room = width - KEY_WIDTH - 2
    for key, description in rows:
        parts = textwrap.wrap(description, room) if room >= 20 else [description]
        lines.append(Content.assemble((f"{key:>{KEY_WIDTH}}  ", "bold $text-accent"), parts[0]))
        lines += [Content(" " * (KEY_WIDTH + 2) + part) for part in parts[1:]]
    return Content("\n").join(lines)


class HelpScreen(BlackboxModal[None]):
    """Keys of the screen underneath, read from its bindings (so it never goes stale)."""

    HELP = "What the screen underneath is for and every key it answers to."
    BINDING_PREFIX = "help"

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > Vertical { width: 100; max-width: 95%; height: auto; max-height: 90%; border: round $accent;
                       background: $panel; padding: 0 1; }
    }
    """

    def __init__(self, target: Screen[object]) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll():
                yield Static(help_content(self.target), id="help-text")
            yield Static(Content.styled("escape closes", "$text-muted"))

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "Help"

    def on_resize(self, event: events.Resize) -> None:
        """Wrap the rows to the room there is (the scrollbar's included, shown or not)."""
        scroll = self.query_one(VerticalScroll)
        width = scroll.scrollable_content_region.width - (0 if scroll.show_vertical_scrollbar
                                                          else scroll.styles.scrollbar_size_vertical)
        self.query_one("#help-text", Static).update(help_content(self.target, width))
