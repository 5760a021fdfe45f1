"""Fork the run at a tool result: edit the value, choose who continues and how the model answers, run it.

The form (`ForkForm`) says what is chosen and what is missing; who continues is a `ForkRunner`
(`..fork_runners`: Blackbox itself, the agent command, the demo agent), run here in one worker, its lines going
to the log (`ForkLog`).  Each writes a fork cassette and opens the diff of parent and fork at the fork point.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import var
from textual.widgets import Button, Input, Label, Static

from blackbox.errors import BlackboxError, CassetteError
from blackbox.fork.agent_checks import broken_chain, check_agent_fork
from blackbox.fork.plan import same_file
from blackbox.format.canonical import decode_json, json_value
from blackbox.format.cassette import Cassette, ChainBreak
from blackbox.format.inert import inert
from blackbox.format.typed import ToolResultView

from ..doors import Door, Here
from ..fork_files import default_out, fork_argv, input_paths
from ..fork_runners import AgentRunner, ForkJob, ForkResult, ForkRunner, next_model_input, runner_for
from ..notice import say
from ..run import Run
from ..state import ForkSettings, recall_fork, remember_fork
from ..widgets.fit_footer import FitFooter
from ..widgets.fork_form import RUNNERS, ForkForm
from ..widgets.fork_log import ForkLog, ForkStatus
from .base import BlackboxScreen
from .tool_answer import ask_tool_result

if TYPE_CHECKING:
    from ..app import BlackboxApp

__all__ = ["ForkScreen", "default_out", "fork_argv"]  # the two from fork_files, as before

NARROW = 76  # below this many columns the editor and the settings are stacked, not side by side


class ForkScreen(BlackboxScreen[None]):
    """Fork `run` at tool_result step `index`; `demo` offers the built-in demo agent.

    `problem` (what is still missing, the form's `problem` or the output path's) and `busy` (a fork is running)
    are reactive: the problem line and the Run button follow them, so nothing has to ask for a redraw."""

    problem: var[str | None] = var("…", init=False)  # "…" until the first check, on mount: Run starts disabled
    busy: var[bool] = var(False, init=False)

    HELP = ("Fork the run at this tool result: edit the result, choose how the agent continues, run it. "
            "The fork is a new cassette; the parent is never touched.")
    BINDING_PREFIX = "fork"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run_fork", "Run fork", priority=True, id="fork.run"),
        Binding("ctrl+g", "cancel_fork", "Cancel run", priority=True, id="fork.cancel"),
        Binding("escape", "back", "Back", id="fork.back"),
        Binding("ctrl+t", "text_or_json", "Text/JSON", priority=True, id="fork.text_or_json",
                tooltip="An MCP result with one text block: edit the text itself, or the whole result as JSON"),
    ]
    DOOR = Door("f", "Fork", "Fork the run at this tool result with another value (in a diff: run A)",
                on={"browse": True, "diff": True})

    DEFAULT_CSS = """
    ForkScreen {  /* the form's own rules are ForkForm's; these place it and narrow it */
        #fork-title { height: auto; padding: 0 1; background: $panel; }
        #fork-body { height: 1fr; layout: horizontal; }
        #out-part { height: auto; padding: 0 1; & Label { color: $text-muted; } }
        #out-part Input { border: none; height: 1; padding: 0 1; background: $boost; }
        #out-part Input:focus { background: $accent 25%; }
        #out-part Input { width: 1fr; }
        #buttons { height: auto; padding: 0 1; }
        #buttons Button { height: 1; min-width: 10; border: none; margin-right: 1; }
        #fork-problem { width: 1fr; height: auto; color: $text-warning; }
        #fork-status { height: auto; padding: 0 1; }
        #fork-status.-error { color: $text-error; text-style: bold; }
        #fork-status.-ok { color: $text-success; }
        #fork-log { height: 6; display: none; border-top: hkey $panel-lighten-2; }
        #fork-log.-shown { display: block; }
        &.-narrow #fork-body { layout: vertical; }
        &.-narrow #value-box { height: auto; }
        &.-narrow #value-box JsonEditor { height: 9; }
    }
    """

    def __init__(self, run: Run, index: int, *, demo: bool = False, command: Sequence[str] = ()) -> None:
        """`command`: the agent the UI was opened with, offered to continue the fork (before any remembered)."""
        super().__init__()
        if run.path is None:
            raise ValueError("a fork needs the parent cassette's file")
        self.run = run
        self.index = index
        self.demo = demo
        self.command = tuple(command)
        self.parent_path: Path = run.path
        self.step = run.steps[index]
        self.running: ForkRunner | None = None
        self.parent_read: _Parent | None = None  # the parent, once read (`_read_parent`)

    @classmethod
    def open_from(cls, app: BlackboxApp, here: Here) -> None:
        """The fork at the tool result under the cursor (of run A in a diff)."""
        run, step = here.run, here.step
        if step is None or step >= len(run) or run.steps.type(step) != "tool_result":
            points = run.indices("type", "tool_result")[:12]
            found = f"tool results here: {', '.join(map(str, points))}" if points else "this run has none"
            of = f" of {here.side}" if here.side else ""
            say(app, f"A fork starts at a tool_result step{of} ({found}); {here.moves or 'move to one'}.",
                severity="warning")
            return
        if run.path is None:
            say(app, "This run has no file to fork (a recording followed as it is made): fork the cassette once "
                     "it is written.", severity="warning")
            return
        app.push_screen(cls(run, step, demo=app.demo, command=app.agent_command))

    def _remembered(self) -> ForkSettings:
        remembered = recall_fork(self.parent_path) or ForkSettings()
        if self.command:  # the agent the UI was opened with: what the user asked for now
            remembered.command, remembered.runner = shlex.join(self.command), "agent"
        if self.demo and not remembered.runner:
            remembered.runner = "demo"
        if remembered.runner not in RUNNERS or (remembered.runner == "demo" and not self.demo):
            remembered.runner = "agent" if remembered.command else "whatif"
        return remembered

    def compose(self) -> ComposeResult:
        found = self.step.view()  # a result whose payload does not fit its shape names no tool: "?"
        name, call_id = (found.toolName, found.toolCallId or "?") if isinstance(found, ToolResultView) else ("?", "?")
        title = Content.assemble(
            ("Fork ", "bold"), (self.run.label, "bold $text-accent"), (f" at step {self.index}", "bold"),
            (f" · result of {inert(name)} ({inert(call_id)})", "$text-muted"),
            (f"\nsteps 0…{self.index - 1} kept · edit the value · ctrl+r runs it", "$text-muted"),
        )
        yield Static(title, id="fork-title")
        yield ForkForm(self.run, self.index, self._remembered(), demo=self.demo, id="fork-body")
        with Vertical(id="out-part"):  # the whole width: a path is long
            yield Label("Write the fork to")
            yield Input(str(default_out(self.parent_path, self.index)), id="out")
        with Horizontal(id="buttons"):
            yield Button("Run fork", variant="primary", id="run", disabled=True)
            yield Button("Cancel", variant="error", id="cancel", disabled=True)
            yield Static(id="fork-problem")
        yield ForkStatus(id="fork-status")
        yield ForkLog(id="fork-log")
        yield FitFooter()

    def on_mount(self) -> None:
        self.form.focus_value()
        self._layout(self.size.width)
        self.watch(self.form, "problem", self._recheck)  # every edit inside the form
        self._read_parent()

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size.width)

    def _layout(self, width: int) -> None:
        self.set_class(0 < width < NARROW, "-narrow")

    @property
    def form(self) -> ForkForm:
        return self.query_one(ForkForm)

    @property
    def runner(self) -> str:
        return self.form.runner

    @property
    def continuation(self) -> str:
        return self.form.continuation

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The agent's process while the agent command runs."""
        return self.running.process if isinstance(self.running, AgentRunner) else None

    # -- validation: reactive ------------------------------------------------------------------------------

    def _find_problem(self) -> str | None:
        """The first reason the fork cannot run yet (the form's, the output path's, then what `blackbox fork`
        would refuse, in its words), or None."""
        found = self.form.problem
        if found:
            return found
        out = self.query_one("#out", Input).value.strip()
        if not out:
            return "give the path of the fork"
        if same_file(Path(out).expanduser(), self.parent_path):
            return "the fork must be written to another file than its parent"
        parent = self.parent_read
        if parent is None:
            return "checking the run…"
        if parent.broken is not None:  # every fork refuses it, the CLI's what-if and fork alike
            return str(broken_chain(self.parent_path, parent.broken, "fork"))
        if self.runner == "agent":
            return agent_refusal(parent.cassette, self.parent_path, self.index, Path(out).expanduser(), self.form)
        return None

    @work(thread=True, exclusive=True, group="fork-parent")
    def _read_parent(self) -> None:
        """The parent decoded and its chain checked, off the UI thread (a large one takes a moment)."""
        parent = _Parent(self.run.decoded(), self.run.chain)
        self.app.call_from_thread(self._got_parent, parent)

    def _got_parent(self, parent: _Parent) -> None:
        self.parent_read = parent
        self._recheck()

    def _recheck(self) -> None:
        self.problem = self._find_problem()

    @on(Input.Changed, "#out")
    def _out_edited(self) -> None:
        self._recheck()

    def validate(self) -> None:
        """Check again what no edit changes (a file, the environment: an API key set meanwhile)."""
        self.form.check()
        self._recheck()

    def watch_problem(self, problem: str | None) -> None:
        self.query_one("#fork-problem", Static).update(Content(f"⚠ {problem}") if problem else Content(""))
        self._run_button()

    def watch_busy(self) -> None:
        self._run_button()

    def _run_button(self) -> None:
        self.query_one("#run", Button).disabled = self.problem is not None or self.busy

    # -- running -------------------------------------------------------------------------------------------

    @on(Button.Pressed, "#run")
    def action_run_fork(self) -> None:
        self.validate()  # what no edit changes (the replies file, a key) may have changed since
        if self.busy or self.problem is not None:
            return
        form = self.form
        settings = form.settings()
        remember_fork(self.parent_path, settings)
        out = Path(self.query_one("#out", Input).value.strip()).expanduser()
        self.query_one(ForkLog).start()
        self.busy = True
        job = ForkJob(self.parent_path, self.index, form.value_text, out, settings, model_name=form.model_name,
                      recorded_model=form.recorded_model, next_model_input=next_model_input(self.run, self.index),
                      recorded_api=form.recorded_api)
        self._run(runner_for(settings.runner), job)

    @work(exclusive=True, group="fork")
    async def _run(self, runner: ForkRunner, job: ForkJob) -> None:
        self.running = runner
        try:
            result = await runner.run(job, _Events(self))
        finally:
            self.running = None
        self._finished(result)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """ctrl+t only where there is a text block to edit."""
        if action == "text_or_json":
            return bool(self.query(ForkForm)) and self.form.block is not None
        return True

    def action_text_or_json(self) -> None:
        problem = self.form.text_or_json()
        if problem is not None:
            say(self.app, problem, severity="warning")

    @on(Button.Pressed, "#cancel")
    def action_cancel_fork(self) -> None:
        if self.running is not None and self.running.cancel():
            self.query_one(ForkStatus).show("cancelling… (SIGTERM sent to the fork and its agent)")

    def action_back(self) -> None:
        if self.busy:
            say(self.app, "A fork is running: cancel it first (ctrl+g).", severity="warning")
            return
        self.app.pop_screen()

    def _finished(self, result: ForkResult) -> None:
        self.busy = False
        self.query_one("#cancel", Button).disabled = True
        if not result.ok:
            self.query_one(ForkStatus).show(result.message, "error")
            return
        try:
            fork = Run.open(result.out)
        except CassetteError as exc:
            self.query_one(ForkStatus).show(f"error: the fork ran but its cassette cannot be read: {exc}", "error")
            return
        self.query_one(ForkStatus).show(f"forked {result.out}", "ok")
        self.blackbox.open_diff(self.run, fork, at=self.index, replace=True)


@dataclass(frozen=True)
class _Parent:
    """The parent as `blackbox fork` reads it: every step decoded, and where its chain breaks (None: intact)."""

    cassette: Cassette
    broken: ChainBreak | None


def agent_refusal(parent: Cassette, parent_path: Path, index: int, out: Path, form: ForkForm) -> str | None:
    """What `blackbox fork` would refuse, in its words, before it starts the agent this form runs (the value and
    the inline replies checked as the files the runner writes for it), or None."""
    value_file, replies_file = input_paths(out)
    inline = form.continuation == "inline"
    script = None if form.continuation == "live" else replies_file if inline else Path(form.script_path).expanduser()
    try:
        json_value(decode_json(form.value_text), where=lambda: f"--set @{value_file}")
        check_agent_fork(parent, parent_path, index, out, script, replies=form.replies_text if inline else None)
    except (BlackboxError, ValueError) as exc:  # (a CanonicalError is a ValueError)
        return str(exc)
    return None


class _Events:
    """What the running fork reports, shown on the screen (`ForkEvents`)."""

    def __init__(self, screen: ForkScreen) -> None:
        self.screen = screen
        self.log = screen.query_one(ForkLog)  # held: a line may arrive as the screen closes
        self.status = screen.query_one(ForkStatus)
        self.cancel = screen.query_one("#cancel", Button)

    def line(self, text: str) -> None:
        self.log.write_line(text)

    def started(self, status: str) -> None:
        self.cancel.disabled = not isinstance(self.screen.running, AgentRunner)
        self.status.show(status)

    def ask_result(self, call: dict[str, Any]) -> Any:
        """From the runner's thread: the result of a call the parent never made (see `ask_tool_result`)."""
        screen = self.screen
        return ask_tool_result(screen.app, call, lambda: screen.is_attached and screen.app.is_running)
