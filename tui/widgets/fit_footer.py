"""The key footer, fitted to the terminal: below `WIDE` columns it is compact and leaves out the palette key
(ctrl+p still opens the palette, and `?` lists it), so every key of a screen fits in 80 columns."""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

__all__ = ["WIDE", "FitFooter"]

WIDE = 100


class FitFooter(Footer):
    def on_mount(self) -> None:
        self._fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        narrow = 0 < width < WIDE
        if self.compact != narrow:
            self.compact = narrow
        if self.show_command_palette == narrow:
            self.show_command_palette = not narrow
