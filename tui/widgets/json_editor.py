"""A JSON text editor that validates as you type and says where the text stops being JSON."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static, TextArea

from blackbox.format.canonical import decode_json
from blackbox.format.inert import inert

from ..keys import Keyed
from ..messages import JsonValidated

__all__ = ["JsonArea", "JsonEditor", "editable_json", "json_problem"]

_BYTE = re.compile(r"\(byte (\d+)\)")


def json_problem(text: str, *, want_list: bool = False) -> str | None:
    """None if `text` is JSON (an array when `want_list`), else one line saying what and where."""
    if not text.strip():
        return "empty: write a JSON value (strings in double quotes)"
    try:
        value = decode_json(text)
    except ValueError as exc:
        message = str(exc)
        match = _BYTE.search(message)
        if match:
            offset = len(text.encode("utf-8")[: int(match.group(1))].decode("utf-8", "ignore"))
            line = text.count("\n", 0, offset) + 1
            column = offset - (text.rfind("\n", 0, offset) + 1) + 1
            reason = message.split(" (byte")[0].removeprefix("JSON is malformed: ")
            return f"not JSON at line {line}, column {column}: {reason}"
        if "truncated" in message:
            return "not JSON: the text ends early (an unclosed bracket, brace or string?)"
        return f"not JSON: {message}"
    if want_list and not isinstance(value, list):
        return "must be a JSON array of model replies"
    return None


def editable_json(text: str) -> str:
    """JSON text with every character a terminal would obey written as a JSON escape, so the value is the same.

    Such characters can only sit inside JSON strings, where `\\uXXXX` means the same character."""
    return "".join(f"\\u{ord(c):04x}" if c not in "\n\t" and inert(c) != c else c for c in text)


class JsonArea(Keyed, TextArea):
    """A TextArea where Tab moves on (indentation is two spaces on Enter), Ctrl+A selects everything and a
    paste over a selection replaces it."""

    BINDING_PREFIX = "json"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+a", "select_all", "Select all", id="json.select_all"),
    ]


class JsonEditor(Vertical):
    """TextArea + an inline error line; `problem` (reactive) follows the text, and each new one is drawn and
    posted (`JsonValidated`).  `plain`: the text is any text, not JSON (an MCP result's text block)."""

    problem: reactive[str | None] = reactive(None, init=False, repaint=False)

    DEFAULT_CSS = """
    JsonEditor {
        height: 1fr;
        & TextArea { height: 1fr; }
        & .json-error { height: auto; color: $text-error; padding: 0 1; }
        & .json-error.-ok { color: $text-success; }
    }
    """

    def __init__(self, text: str = "", *, want_list: bool = False, plain: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self._initial = text
        self.want_list = want_list
        self.plain = plain
        self.set_reactive(JsonEditor.problem, self._problem(text))

    def compose(self) -> ComposeResult:
        shown = self._initial if self.plain else editable_json(self._initial)
        yield JsonArea(shown, soft_wrap=True, show_line_numbers=True, tab_behavior="focus")
        yield Static(classes="json-error")

    def _problem(self, text: str) -> str | None:
        return None if self.plain else json_problem(text, want_list=self.want_list)

    def show_text(self, text: str, *, plain: bool) -> None:
        """Edit `text` from now on, as plain text or as JSON."""
        self.plain = plain
        self.query_one(TextArea).load_text(text if plain else editable_json(text))
        self.problem = self._problem(self.text)
        self._show()

    def on_mount(self) -> None:
        self._show()

    @property
    def text(self) -> str:
        return self.query_one(TextArea).text

    @text.setter
    def text(self, value: str) -> None:
        self.query_one(TextArea).load_text(value)

    @property
    def value(self) -> Any:
        return decode_json(self.text)

    @on(TextArea.Changed)
    def _changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self.problem = self._problem(self.text)

    def watch_problem(self, problem: str | None) -> None:
        self._show()
        self.post_message(JsonValidated(self, problem))

    def _show(self) -> None:
        line = self.query_one(".json-error", Static)
        line.set_class(self.problem is None, "-ok")
        line.update(f"✗ {self.problem}" if self.problem else "✓ text" if self.plain else "✓ valid JSON")
