"""The fork screen's form: the new tool result, who continues after the fork point and how the model answers;
it says what is still missing (`problem`, reactive: it follows every edit) and what was chosen (`settings`)."""

from __future__ import annotations

import shlex
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import Input, Label, RadioButton, RadioSet

from blackbox.format.canonical import decode_json

from ..fork_runners import next_model_input, provider_of, recorded_api, recorded_model
from ..fork_value import TextBlock, initial_value, text_block
from ..messages import JsonValidated
from ..run import Run, pretty_json
from ..state import ForkSettings
from .json_editor import JsonEditor

__all__ = ["CONTINUATIONS", "RUNNERS", "ForkForm", "initial_value"]  # initial_value from fork_value, as before

CONTINUATIONS = ("script", "inline", "live")
RUNNERS = ("whatif", "agent", "demo")


class ForkForm(VerticalScroll):
    """The value editor and the settings, prefilled from `remembered`; `demo` offers the demo agent.

    `problem` is the first reason the fork cannot run yet (None: it can), checked again on every edit inside
    the form; the screen watches it."""

    problem: reactive[str | None] = reactive(None, repaint=False)

    DEFAULT_CSS = """
    ForkForm {
        #value-box { width: 1fr; height: 100%; padding: 0 1; }
        #value-box JsonEditor { height: 1fr; min-height: 5; }
        #value-box TextArea { border: round $panel-lighten-2; }
        #value-box TextArea:focus { border: round $accent; }
        #settings { width: 1fr; height: auto; padding: 0 1; }
        #settings Label { color: $text-muted; }
        #settings RadioSet { width: 100%; border: none; padding: 0; background: $surface; }
        #settings RadioSet:focus-within { background: $boost; }
        #replies { height: 7; display: none; }
        #script-path { display: none; }
        #settings.-inline #replies { display: block; }
        #settings.-script #script-path { display: block; }
        #settings.-demo #model-part { display: none; }
        #model-name-part { height: auto; display: none; }
        #settings.-live.-whatif #model-name-part { display: block; }
        #command-part { display: none; }
        #settings.-agent #command-part { display: block; }
        #model-part, #command-part { height: auto; }
        #value-box Label { width: 100%; }
        #settings Input { border: none; height: 1; padding: 0 1; background: $boost; }
        #settings Input:focus { background: $accent 25%; }
    }
    """

    def __init__(self, run: Run, index: int, remembered: ForkSettings, *, demo: bool, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run = run
        self.index = index
        self.remembered = remembered
        self.demo = demo
        self.recorded_model = recorded_model(run)
        self.recorded_api = recorded_api(run)
        # an MCP result with one text block: its text is edited (`text_or_json` switches to the whole result)
        self.block: TextBlock | None = text_block(run.steps[index])

    def compose(self) -> ComposeResult:
        remembered = self.remembered
        with Vertical(id="value-box"):
            yield Label(self._value_label(text=self.block is not None), id="value-label")
            if self.block is not None:
                yield JsonEditor(self.block.text, plain=True, id="value")
            else:
                yield JsonEditor(initial_value(self.run.steps[self.index]), id="value")
        with Vertical(id="settings", classes=f"-{remembered.continuation} -{remembered.runner}"):
            yield Label("After the fork point, who continues")
            with RadioSet(id="runner"):
                yield RadioButton("Blackbox itself (no agent)", id="whatif", value=remembered.runner == "whatif")
                yield RadioButton("the agent command below", id="agent", value=remembered.runner == "agent")
                if self.demo:
                    yield RadioButton("the demo agent (offline)", id="demo", value=remembered.runner == "demo")
            with Vertical(id="model-part"):
                yield Label("and the model's replies come from")
                with RadioSet(id="continuation"):
                    yield RadioButton("a replies file", id="script", value=remembered.continuation == "script")
                    yield RadioButton("replies written here", id="inline", value=remembered.continuation == "inline")
                    yield RadioButton("live: the provider's API", id="live", value=remembered.continuation == "live")
                yield Input(remembered.script, placeholder="replies.json: a JSON array", id="script-path")
                with Vertical(id="model-name-part"):
                    yield Label("model (its name picks the API: claude-…, gpt-…, gemini-…)")
                    yield Input(self.recorded_model or "", placeholder="claude-sonnet-4-5", id="model-name")
                yield JsonEditor(remembered.replies or "[\n  {\"type\": \"final_answer\", \"text\": \"\"}\n]",
                                 want_list=True, id="replies")
            with Vertical(id="command-part"):
                yield Label("Agent command (run after --)")
                yield Input(remembered.command, placeholder="python agent.py", id="command")

    def focus_value(self) -> None:
        self.query_one("#value", JsonEditor).query_one("TextArea").focus()

    # -- what was chosen -----------------------------------------------------------------------------------

    @property
    def continuation(self) -> str:
        pressed = self.query_one("#continuation", RadioSet).pressed_button
        return pressed.id if pressed is not None and pressed.id in CONTINUATIONS else "script"

    @property
    def runner(self) -> str:
        pressed = self.query_one("#runner", RadioSet).pressed_button
        return pressed.id if pressed is not None and pressed.id in RUNNERS else "whatif"

    @property
    def model_name(self) -> str:
        return self.query_one("#model-name", Input).value.strip()

    @property
    def value_text(self) -> str:
        """The new result as JSON text (an edited text block written back into its MCP result)."""
        editor = self.query_one("#value", JsonEditor)
        if editor.plain and self.block is not None:
            return str(pretty_json(self.block.with_text(editor.text)))
        return editor.text

    @property
    def script_path(self) -> str:
        return self.query_one("#script-path", Input).value.strip()

    @property
    def replies_text(self) -> str:
        return self.query_one("#replies", JsonEditor).text

    @property
    def editing_text(self) -> bool:
        """The text of an MCP result's text block is edited (not the result's JSON)."""
        return self.query_one("#value", JsonEditor).plain

    def _value_label(self, *, text: bool) -> str:
        if text:
            return "New text of the MCP result's text block (the text itself) · ctrl+t: the result as JSON"
        switch = " · ctrl+t: its text" if self.block is not None else ""
        return f"New tool result (JSON) · ctrl+a selects all · tab moves on{switch}"

    def text_or_json(self) -> str | None:
        """Switch between the text of the MCP result's text block and the whole result as JSON, keeping what was
        typed; None, or why it cannot switch (the JSON does not parse, or holds no one text block any more)."""
        editor = self.query_one("#value", JsonEditor)
        if self.block is None:
            return "this result is no MCP result with one text block: it is edited as JSON"
        if editor.plain:
            editor.show_text(str(pretty_json(self.block.with_text(editor.text))), plain=False)
        else:
            if editor.problem:
                return f"the new result is {editor.problem}: correct it to edit its text again"
            found = text_block(decode_json(editor.text))
            if found is None:
                return "the new result holds no one text block any more: it stays JSON"
            self.block = found
            editor.show_text(found.text, plain=True)
        self.query_one("#value-label", Label).update(self._value_label(text=editor.plain))
        self.check()
        return None

    @property
    def live_provider(self) -> str | None:
        """The API a live what-if run asks (`fork_runners.provider_of`)."""
        return provider_of(self.model_name or self.recorded_model, self.recorded_api)

    def settings(self) -> ForkSettings:
        return ForkSettings(
            runner=self.runner,
            command=self.query_one("#command", Input).value.strip(),
            continuation=self.continuation,
            script=self.query_one("#script-path", Input).value.strip(),
            replies=self.query_one("#replies", JsonEditor).text if self.continuation == "inline" else "",
        )

    @on(RadioSet.Changed)
    def _choice_changed(self) -> None:
        """Show the parts the choice needs (and check again: `_edited` runs too)."""
        settings = self.query_one("#settings")
        for name in CONTINUATIONS:
            settings.set_class(self.continuation == name, f"-{name}")
        for name in RUNNERS:
            settings.set_class(self.runner == name, f"-{name}")

    # -- what is missing -----------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.check()

    @on(JsonValidated)
    @on(Input.Changed)
    @on(RadioSet.Changed)
    def _edited(self) -> None:
        self.check()

    def check(self) -> None:
        """Look again (an edit, or something outside the form that the check reads: a file, the environment)."""
        self.problem = self.find_problem()

    def find_problem(self) -> str | None:
        """The first reason the fork cannot run yet (the output path aside), or None."""
        value_problem = self.query_one("#value", JsonEditor).problem
        if value_problem:
            return f"the new result is {value_problem}"
        runner = self.runner
        if runner != "demo":
            found = self._continuation_problem()
            if found:
                return found
        if runner == "agent":
            command = self.query_one("#command", Input).value.strip()
            if not command:
                return "give the agent command, e.g. python agent.py (or let Blackbox continue)"
            try:
                shlex.split(command)
            except ValueError as exc:
                return f"the agent command does not parse: {exc}"
        if runner == "demo" and next_model_input(self.run, self.index) is None:
            return "the demo continues from the next model request, and this run has none after this step"
        return None

    def _continuation_problem(self) -> str | None:
        from blackbox.fork.whatif import key_problem  # (here: it brings every provider's codecs)

        continuation = self.continuation
        if continuation == "script":
            script = self.query_one("#script-path", Input).value.strip()
            if not script:
                return "give the replies file (or write the replies here, or choose live)"
            if not Path(script).expanduser().is_file():
                return f"no replies file at {script}"
        if continuation == "inline" and self.query_one("#replies", JsonEditor).problem:
            return f"the replies are {self.query_one('#replies', JsonEditor).problem}"
        if continuation == "live" and self.runner == "whatif":
            if self.live_provider is None:
                return "name a model for the live run (claude-…, gpt-…, gemini-…): the run records none it knows"
            return key_problem(self.live_provider)
        return None  # the agent's live key: `blackbox fork`'s own check, in its words (the fork screen runs it)
