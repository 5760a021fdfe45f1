"""The key footer, fitted to the terminal: below `WIDE` columns it is compact and leaves out the palette key
(ctrl+p still opens the palette, and `?` lists it), so every key of a screen fits in 80 columns; and a screen
with more keys than its width holds shows the ones that fit, never a row cut at the edge: the last of the
screen's keys are left out first, `q` and `?` always stay (the help and the palette list every key)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["KEPT", "WIDE", "FitFooter", "fitting"]

WIDE = 100
PALETTE_ROOM = 12  # columns the palette key takes, docked right, when the footer is not compact
KEPT = ("quit", "help")  # the app's own keys: never left out


def _width(key: FooterKey, compact: bool) -> int:
    """Columns one key takes in the footer (the gap after it included, in the compact footer)."""
    text = cell_len(key.key_display) + (cell_len(key.description) + 1 if key.description else 0)
    return text + 1 if compact else text + 2


def fitting(widgets: Iterable[Widget], width: int, compact: bool) -> list[Widget]:
    """`widgets` less the screen's last keys while they do not fit in `width` columns (`KEPT` stay)."""
    shown = list(widgets)
    keys = [w for w in shown if isinstance(w, FooterKey) and not w.has_class("-command-palette")]
    room = width - (0 if compact or len(keys) == len(shown) else PALETTE_ROOM) + (1 if compact else 0)
    needed = sum(_width(key, compact) for key in keys)
    for key in reversed(keys):
        if needed <= room or width <= 0:
            break
        if key.action.removeprefix("app.") in KEPT:
            continue
        shown.remove(key)
        needed -= _width(key, compact)
    return shown


class FitFooter(Footer):
    def compose(self) -> ComposeResult:
        yield from fitting(super().compose(), self.size.width or self.app.size.width, self.compact)

    def on_mount(self) -> None:
        self._fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        if self._fit(event.size.width) is False:
            self.call_after_refresh(self.recompose)  # the same style, another width: other keys may fit

    def _fit(self, width: int) -> bool:
        """Compact below `WIDE` columns; True when that changed (the footer is composed again by Textual)."""
        narrow = 0 < width < WIDE
        changed = self.compact != narrow or self.show_command_palette == narrow
        if self.compact != narrow:
            self.compact = narrow
        if self.show_command_palette == narrow:
            self.show_command_palette = not narrow
        return changed
