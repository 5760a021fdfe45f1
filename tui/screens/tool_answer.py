"""The what-if question for a tool call the recorded run never made: which tool, with what input, and the form
of the answer (a JSON value is the result, `{"error": "…"}` an error result, empty stops the fork there)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from blackbox.format.canonical import decode_json
from blackbox.format.inert import inert

from ..run import pretty_json
from .base import BlackboxModal

__all__ = ["FORMAT_HINT", "ToolResultPrompt", "ask_tool_result"]

FORMAT_HINT = ('Its result as JSON: a value such as {"hits": []}, 42 or "text" (text that is not JSON is taken '
               'as a string), or {"error": "message"} for an error result. Enter gives it; empty or escape '
               "stops the fork here (incomplete).")


class ToolResultPrompt(BlackboxModal[str | None]):
    """Ask for the result of `name(tool_input)`; returns the text typed, or None on escape."""

    HELP = ("The model called a tool the recorded run never called: give the result it gets, "
            "or stop the fork here.")
    BINDING_PREFIX = "answer"

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Stop the fork", id="answer.cancel")]
    DEFAULT_CSS = """
    ToolResultPrompt {
        align: center middle;
        & > Vertical {
            width: 90%; max-width: 100; height: auto; max-height: 90%;
            border: round $accent; background: $panel; padding: 0 1;
        }
        & Static { width: 100%; }
        & #answer-title { text-style: bold; }
        & #answer-input { height: auto; max-height: 8; background: $surface; margin-bottom: 1; }
        & #answer-input Static { padding: 0 1; }
        & #answer-hint { color: $text-muted; margin-bottom: 1; }
    }
    """

    def __init__(self, name: str, tool_input: Any) -> None:
        super().__init__()
        self.tool_name = name
        self.tool_input = tool_input

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content(f"The model called {inert(self.tool_name)}, a call the recorded run never made, "
                                 "with this input:"), id="answer-title")
            with VerticalScroll(id="answer-input"):
                yield Static(Content(inert(str(pretty_json(self.tool_input)), keep_newlines=True)))
            yield Static(Content(FORMAT_HINT), id="answer-hint")
            yield Input(placeholder='{"hits": []}  or  {"error": "not found"}', id="answer")

    def on_mount(self) -> None:
        self.query_one("#answer", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


def ask_tool_result(app: App[Any], call: dict[str, Any], alive: Callable[[], bool]) -> Any:
    """From a worker thread: ask for the result of `call` and wait for the answer (`NO_RESULT` when the user
    stops the fork, or when `alive()` turns false: the UI closed meanwhile)."""
    from blackbox.fork.whatif import NO_RESULT

    answered = threading.Event()
    box: list[str | None] = [None]

    def done(text: str | None) -> None:
        box[0] = text
        answered.set()

    prompt = ToolResultPrompt(str(call.get("toolName")), call.get("toolInput"))
    app.call_from_thread(app.push_screen, prompt, done)
    while not answered.wait(0.25):
        if not alive():
            return NO_RESULT
    text = box[0]
    if not text:
        return NO_RESULT
    try:
        return decode_json(text)
    except ValueError:
        return text
