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
    _composed_for = 0  # the width the keys shown were chosen for

    def compose(self) -> ComposeResult:
        self._composed_for = self.size.width or self.app.size.width
        yield from fitting(super().compose(), self._composed_for, self.compact)

    def on_mount(self) -> None:
        self._fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)
        if event.size.width != self._composed_for:
            self.call_after_refresh(self.recompose)  # other keys may fit (and the palette key may be due)

    def _fit(self, width: int) -> None:
        """Compact, without the palette key, below `WIDE` columns."""
        narrow = 0 < width < WIDE
        if self.compact != narrow:
            self.compact = narrow
        if self.show_command_palette == narrow:
            self.show_command_palette = not narrow
