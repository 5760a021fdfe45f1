"""A step's payload as highlighted JSON (colours from the theme), capped so a huge payload stays quick."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Static

from blackbox_tui.run import pretty_json

__all__ = ["PayloadView"]

HIGHLIGHT_LIMIT = 64_000  # characters highlighted; beyond this the text is shown plain
SHOW_LIMIT = 256_000  # characters shown at all; the rest is one `o`/`p` away (editor / pager)


def json_content(value: Any) -> Content:
    """Highlighted JSON text, plain past HIGHLIGHT_LIMIT and cut at SHOW_LIMIT with a note saying so."""
    text = pretty_json(value)
    note = ""
    if len(text) > SHOW_LIMIT:
        note = f"\n… {len(text) - SHOW_LIMIT:,} more characters: press o or p to open the whole step"
        text = text[:SHOW_LIMIT]
    body = highlight(text, language="json") if len(text) <= HIGHLIGHT_LIMIT else Content(text)
    return body + Content.styled(note, "$text-warning") if note else body


class PayloadView(VerticalScroll):
    """Scrollable, highlighted JSON of one value."""

    DEFAULT_CSS = """
    PayloadView {
        background: $surface;
        padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="payload-text")

    def show(self, value: Any) -> None:
        self.query_one("#payload-text", Static).update(json_content(value))
        self.scroll_home(animate=False)
