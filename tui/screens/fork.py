"""Fork the run at a tool result: edit the value, choose who continues and how the model answers, run it.

Three ways to continue after the fork point:
- Blackbox itself (no agent): `blackbox.fork.whatif` sends the model the recorded history with the new value, live
  to the provider or answered from scripted replies, serving recorded results for repeated tool calls;
- the agent command: the CLI's `python -m blackbox fork … -- <agent>`, run as a subprocess in its own process
  group so its output streams into the log and Cancel stops the agent and everything it started;
- the demo agent (for `tui --demo`): the built-in offline demo fork.
Each writes a fork cassette and opens the diff of parent and fork at the fork point.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Input, Label, Log, RadioButton, RadioSet, Static

from blackbox.errors import BlackboxError, CassetteError, UsageError
from blackbox.fork.plan import load_script, same_file
from blackbox.format.canonical import decode_json
from blackbox.format.cassette import Cassette, save
from blackbox.format.inert import inert

from ..fork_files import default_out, fork_argv, write_inputs
from ..live_keys import key_problem, provider_of
from ..notice import say
from ..run import Run, pretty_json
from ..state import ForkSettings, recall_fork, remember_fork
from ..widgets.fit_footer import FitFooter
from ..widgets.json_editor import JsonEditor
from .tool_answer import ask_tool_result

__all__ = ["ForkScreen", "default_out", "fork_argv", "key_problem"]  # the two from fork_files, as before

CONTINUATIONS = ("script", "inline", "live")
RUNNERS = ("whatif", "agent", "demo")
KILL_GRACE = 3.0
NARROW = 76  # below this many columns the editor and the settings are stacked, not side by side


def initial_value(payload: object) -> str:
    """The recorded result as editable JSON (an error result starts from its message, as a JSON string)."""
    if isinstance(payload, dict):
        return str(pretty_json(payload["result"] if "result" in payload else payload.get("error")))
    return str(pretty_json(payload))


def _next_model_input(run: Run, index: int) -> int | None:
    return next((i for i in range(index + 1, len(run)) if run.steps.type(i) == "model_input"), None)


class ForkScreen(Screen[None]):
    """Fork `run` at tool_result step `index`; `demo` offers the built-in demo agent."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run_fork", "Run fork", priority=True, id="fork.run"),
        Binding("ctrl+g", "cancel_fork", "Cancel run", priority=True, id="fork.cancel"),
        Binding("escape", "back", "Back", id="fork.back"),
    ]

    DEFAULT_CSS = """
    ForkScreen {
        #fork-title { height: auto; padding: 0 1; background: $panel; }
        #fork-body { height: 1fr; layout: horizontal; }
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
        #out-part { height: auto; padding: 0 1; & Label { color: $text-muted; } }
        #settings Input, #out-part Input { border: none; height: 1; padding: 0 1; background: $boost; }
        #settings Input:focus, #out-part Input:focus { background: $accent 25%; }
        #out-part Input { width: 1fr; }
        #value-box Label { width: 100%; }
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

    def __init__(self, run: Run, index: int, *, demo: bool = False) -> None:
        super().__init__()
        if run.path is None:
            raise ValueError("a fork needs the parent cassette's file")
        self.run = run
        self.index = index
        self.demo = demo
        self.parent_path: Path = run.path
        self.step = run.steps[index]
        self.process: asyncio.subprocess.Process | None = None
        self.busy = False
        self.cancelled = False
        self.recorded_model = self._recorded_model()
        self.recorded_provider = provider_of(self.recorded_model)

    def _recorded_model(self) -> str | None:
        for i in range(len(self.run) - 1, -1, -1):
            if self.run.steps.type(i) == "model_input":
                payload = self.run.steps[i].payload
                if isinstance(payload, dict) and isinstance(payload.get("model"), str):
                    return str(payload["model"])
        return None

    def _remembered(self) -> ForkSettings:
        remembered = recall_fork(self.parent_path) or ForkSettings()
        if self.demo and not remembered.runner:
            remembered.runner = "demo"
        if remembered.runner not in RUNNERS or (remembered.runner == "demo" and not self.demo):
            remembered.runner = "agent" if remembered.command else "whatif"
        return remembered

    def compose(self) -> ComposeResult:
        payload = self.step.payload if isinstance(self.step.payload, dict) else {}
        remembered = self._remembered()
        title = Content.assemble(
            ("Fork ", "bold"), (self.run.label, "bold $text-accent"), (f" at step {self.index}", "bold"),
            (f" · result of {inert(str(payload.get('toolName', '?')))} "
             f"({inert(str(payload.get('toolCallId', '?')))})", "$text-muted"),
            (f"\nsteps 0…{self.index - 1} kept · edit the value · ctrl+r runs it", "$text-muted"),
        )
        yield Static(title, id="fork-title")
        with VerticalScroll(id="fork-body"):
            with Vertical(id="value-box"):
                yield Label("New tool result (JSON) · ctrl+a selects all · tab moves on")
                yield JsonEditor(initial_value(self.step.payload), id="value")
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
                        yield RadioButton("replies written here", id="inline",
                                          value=remembered.continuation == "inline")
                        yield RadioButton("live: the provider's API", id="live",
                                          value=remembered.continuation == "live")
                    yield Input(remembered.script, placeholder="replies.json: a JSON array",
                                id="script-path")
                    with Vertical(id="model-name-part"):
                        yield Label("model (its name picks the API: claude-… or gpt-…)")
                        yield Input(self.recorded_model or "", placeholder="claude-sonnet-4-5", id="model-name")
                    yield JsonEditor(remembered.replies or "[\n  {\"type\": \"final_answer\", \"text\": \"\"}\n]",
                                     want_list=True, id="replies")
                with Vertical(id="command-part"):
                    yield Label("Agent command (run after --)")
                    yield Input(remembered.command, placeholder="python agent.py", id="command")
        with Vertical(id="out-part"):  # the whole width: a path is long
            yield Label("Write the fork to")
            yield Input(str(default_out(self.parent_path, self.index)), id="out")
        with Horizontal(id="buttons"):
            yield Button("Run fork", variant="primary", id="run", disabled=True)
            yield Button("Cancel", variant="error", id="cancel", disabled=True)
            yield Static(id="fork-problem")
        yield Static(id="fork-status")
        yield Log(id="fork-log", highlight=False)
        yield FitFooter()

    def on_mount(self) -> None:
        self.query_one("#value", JsonEditor).query_one("TextArea").focus()
        self._layout(self.size.width)
        self.validate()

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size.width)

    def _layout(self, width: int) -> None:
        self.set_class(0 < width < NARROW, "-narrow")

    # -- validation ----------------------------------------------------------------------------------------

    @property
    def continuation(self) -> str:
        pressed = self.query_one("#continuation", RadioSet).pressed_button
        return pressed.id if pressed is not None and pressed.id in CONTINUATIONS else "script"

    @property
    def runner(self) -> str:
        pressed = self.query_one("#runner", RadioSet).pressed_button
        return pressed.id if pressed is not None and pressed.id in RUNNERS else "whatif"

    def problem(self) -> str | None:
        """The first reason the fork cannot run yet, or None."""
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
        if runner == "demo" and _next_model_input(self.run, self.index) is None:
            return "the demo continues from the next model request, and this run has none after this step"
        out = self.query_one("#out", Input).value.strip()
        if not out:
            return "give the path of the fork"
        if same_file(Path(out).expanduser(), self.parent_path):
            return "the fork must be written to another file than its parent"
        return None

    def _continuation_problem(self) -> str | None:
        continuation = self.continuation
        if continuation == "script":
            script = self.query_one("#script-path", Input).value.strip()
            if not script:
                return "give the replies file (or write the replies here, or choose live)"
            if not Path(script).expanduser().is_file():
                return f"no replies file at {script}"
        if continuation == "inline" and self.query_one("#replies", JsonEditor).problem:
            return f"the replies are {self.query_one('#replies', JsonEditor).problem}"
        if continuation == "live":
            if self.runner == "whatif":
                if self.live_provider is None:
                    return "name a Claude or GPT model for the live run (the cassette records no model it knows)"
                return key_problem(self.live_provider)
            return key_problem(self.recorded_provider)
        return None

    @property
    def model_name(self) -> str:
        return self.query_one("#model-name", Input).value.strip()

    @property
    def live_provider(self) -> str | None:
        """The API a live what-if run asks: the one the model's name belongs to."""
        return provider_of(self.model_name or self.recorded_model)

    def validate(self) -> None:
        problem = self.problem()
        self.query_one("#run", Button).disabled = problem is not None or self.busy
        self.query_one("#fork-problem", Static).update(Content(f"⚠ {problem}") if problem else Content(""))

    @on(JsonEditor.Validated)
    @on(Input.Changed)
    def _edited(self) -> None:
        self.validate()

    @on(RadioSet.Changed)
    def _choice_changed(self) -> None:
        settings = self.query_one("#settings")
        for name in CONTINUATIONS:
            settings.set_class(self.continuation == name, f"-{name}")
        for name in RUNNERS:
            settings.set_class(self.runner == name, f"-{name}")
        self.validate()

    # -- running -------------------------------------------------------------------------------------------

    @on(Button.Pressed, "#run")
    def action_run_fork(self) -> None:
        if self.busy or self.problem() is not None:
            self.validate()
            return
        settings = self._settings()
        remember_fork(self.parent_path, settings)
        out = Path(self.query_one("#out", Input).value.strip()).expanduser()
        log = self.query_one("#fork-log", Log)
        log.clear()
        log.add_class("-shown")
        self.busy = True
        self.validate()
        if settings.runner == "agent":
            self._launch(settings, out)
        else:
            self.set_status("running… (the model is being asked)" if settings.runner == "whatif"
                            else "running the demo agent…", "")
            self._continue_here(settings, out, self.query_one("#value", JsonEditor).text)

    @on(Button.Pressed, "#cancel")
    def action_cancel_fork(self) -> None:
        if self.process is None:
            return
        self.cancelled = True
        pid = self.process.pid
        self._signal(signal.SIGTERM)
        self.set_timer(KILL_GRACE, lambda: self._signal(signal.SIGKILL, only=pid))
        self.set_status("cancelling… (SIGTERM sent to the fork and its agent)", "")

    def action_back(self) -> None:
        if self.busy:
            say(self.app, "A fork is running: cancel it first (ctrl+g).", severity="warning")
            return
        self.app.pop_screen()

    def set_status(self, text: str, kind: str) -> None:
        status = self.query_one("#fork-status", Static)
        status.set_class(kind == "error", "-error")
        status.set_class(kind == "ok", "-ok")
        status.update(Content(inert(text, keep_newlines=True)))

    def _settings(self) -> ForkSettings:
        return ForkSettings(
            runner=self.runner,
            command=self.query_one("#command", Input).value.strip(),
            continuation=self.continuation,
            script=self.query_one("#script-path", Input).value.strip(),
            replies=self.query_one("#replies", JsonEditor).text if self.continuation == "inline" else "",
        )

    # -- Blackbox continues (no agent), or the demo agent: in a thread, no subprocess ----------------------

    @work(thread=True, exclusive=True, group="fork")
    def _continue_here(self, settings: ForkSettings, out: Path, value_text: str) -> None:
        log = self.query_one("#fork-log", Log)

        def note(line: str) -> None:
            self.app.call_from_thread(log.write_line, inert(line))

        try:
            value = decode_json(value_text)
            if settings.runner == "demo":
                fork, reason = self._demo(out, value), "the demo agent finished"
            else:
                fork, reason = self._what_if(settings, value, note)
            save(fork, out)
        except (BlackboxError, ValueError) as exc:
            self.app.call_from_thread(self._failed, f"error: {exc}")
            return
        except OSError as exc:
            self.app.call_from_thread(self._failed, f"error: cannot write {out}: {exc.strerror or exc}")
            return
        note(f"{reason}; wrote {out} ({len(fork.steps)} steps)")
        self.app.call_from_thread(self._open_fork, out)

    def _demo(self, out: Path, value: Any) -> Cassette:
        from blackbox.demo.fork import demo_fork

        at = _next_model_input(self.run, self.index)
        return demo_fork(self.parent_path, out, fork_index=at, mutation_step=self.index, payload=value)

    def _what_if(self, settings: ForkSettings, value: Any, note: Any) -> tuple[Cassette, str]:
        from blackbox.fork.whatif import LiveModel, ModelSource, ScriptedModel, what_if
        from blackbox.format.cassette import load
        from blackbox.live.settings import default_trace_id

        model: ModelSource
        model_name = None  # a scripted run keeps the recorded model: the name typed is for a live one
        if settings.continuation == "live":
            provider = self.live_provider
            if provider is None:
                raise UsageError("name a Claude or GPT model for the live run")
            model, model_name = LiveModel(provider), self.model_name or None
        elif settings.continuation == "inline":
            with tempfile.TemporaryDirectory(prefix="blackbox-fork-") as tmp:
                replies = Path(tmp) / "replies.json"
                replies.write_text(settings.replies, encoding="utf-8")
                model = ScriptedModel(load_script(replies))
        else:
            model = ScriptedModel(load_script(Path(settings.script).expanduser()))
        parent = load(self.parent_path)
        out = self.query_one("#out", Input).value.strip()
        return what_if(parent, self.index, value, model, trace_id=default_trace_id(out), progress=note,
                       model_name=model_name, tool_results=self._ask_result)

    def _ask_result(self, call: dict[str, Any]) -> Any:
        """From the worker thread: the result of a call the parent never made (see `ask_tool_result`)."""
        return ask_tool_result(self.app, call, lambda: self.is_attached and self.app.is_running)

    def _failed(self, message: str) -> None:
        self.busy = False
        self.validate()
        self.set_status(message, "error")

    # -- the agent command, as a subprocess ----------------------------------------------------------------

    def _signal(self, signum: int, only: int | None = None) -> None:
        """Signal the fork's whole process group (the CLI and the agent it started)."""
        if self.process is None or (only is not None and self.process.pid != only):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)

    @work(exclusive=True, group="fork")
    async def _launch(self, settings: ForkSettings, out: Path) -> None:
        """Run `blackbox fork … -- <agent>`; the value and the inline replies are written beside the fork, so the
        command the log shows can be run again."""
        log = self.query_one("#fork-log", Log)
        inline = settings.replies if settings.continuation == "inline" else None
        try:
            value_file, replies = write_inputs(out, self.query_one("#value", JsonEditor).text, inline)
        except BlackboxError as exc:
            self._failed(f"error: {exc}")
            return
        continuation = ["--live"] if settings.continuation == "live" else \
            ["--script", str(replies or Path(settings.script).expanduser())]
        argv = fork_argv(self.parent_path, self.index, value_file, out, continuation, shlex.split(settings.command))
        log.write_line(inert("$ " + shlex.join(["blackbox", *argv[3:]])))
        code, last = await self._run(argv, log)
        self._finished(code, out, last)

    async def _run(self, argv: list[str], log: Log) -> tuple[int, str]:
        self.cancelled = False
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True,
            )
        except OSError as exc:
            log.write_line(f"cannot start the fork: {exc}")
            return 127, str(exc)
        self.query_one("#cancel", Button).disabled = False
        self.set_status("running… (ctrl+g cancels)", "")
        process = self.process
        errors: list[str] = []
        try:
            await asyncio.gather(self._pump(process.stdout, log, []), self._pump(process.stderr, log, errors))
            return await process.wait(), next((line for line in reversed(errors) if line.strip()), "")
        except asyncio.CancelledError:  # the screen or the app is closing: do not leave the agent running
            self._signal(signal.SIGKILL)
            raise
        finally:
            self.process = None

    async def _pump(self, stream: asyncio.StreamReader | None, log: Log, keep: list[str]) -> None:
        if stream is None:
            return
        while line := await stream.readline():
            text = inert(line.decode("utf-8", "replace").rstrip("\n"))
            keep.append(text)
            log.write_line(text)

    def _finished(self, code: int, out: Path, last_error: str) -> None:
        self.busy = False
        self.query_one("#cancel", Button).disabled = True
        self.validate()
        if self.cancelled:
            self.set_status(f"cancelled (exit status {code}); nothing else was changed", "error")
            return
        if code != 0:
            why = last_error.removeprefix("error: ") if last_error else "see the log below"
            self.set_status(f"error: the fork exited with status {code}: {why}", "error")
            return
        self._open_fork(out)

    def _open_fork(self, out: Path) -> None:
        self.busy = False
        try:
            fork = Run.open(out)
        except CassetteError as exc:
            self.validate()
            self.set_status(f"error: the fork ran but its cassette cannot be read: {exc}", "error")
            return
        self.set_status(f"forked {out}", "ok")
        from .diff import DiffScreen

        self.app.switch_screen(DiffScreen(self.run, fork, at=self.index))
