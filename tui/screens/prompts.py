"""Small modal dialogs: pick one of a list (filters) and ask for a path (write, second cassette)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from .base import BlackboxModal

__all__ = ["PathPrompt", "PickOne"]

MODAL_CSS = """
{name} {{
    align: center middle;
    & > Vertical {{
        width: 70%;
        max-width: 100;
        height: auto;
        max-height: 80%;
        border: round $accent;
        background: $panel;
        padding: 0 1;
    }}
    & Label {{ color: $text-muted; margin-bottom: 1; }}
    & OptionList {{ height: auto; max-height: 20; }}
}}
"""


class PickOne(BlackboxModal[str | None]):
    """Choose one option; returns its id, or None on escape."""

    HELP = "Choose one of the options (enter), or escape to cancel."
    BINDING_PREFIX = "pick"

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel", id="pick.cancel")]
    DEFAULT_CSS = MODAL_CSS.format(name="PickOne")

    def __init__(self, title: str, options: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.options = options

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield OptionList(*(Option(label, id=key) for key, label in self.options))

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class PathPrompt(BlackboxModal[str | None]):
    """Ask for a file path; returns it (stripped), or None on escape or an empty answer."""

    HELP = "Type a file path and press enter, or escape to cancel."
    BINDING_PREFIX = "path"

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel", id="path.cancel")]
    DEFAULT_CSS = MODAL_CSS.format(name="PathPrompt")

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(value=self.value, id="path-input")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
