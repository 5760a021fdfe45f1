"""Fork the run at a tool result: edit the value, choose the continuation, run `blackbox fork` in the background.

The fork itself is the CLI's (`python -m blackbox fork … -- <agent>`), run as a subprocess in its own process
group so that its output streams into the log and Cancel can stop the agent and everything it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, Log, RadioButton, RadioSet, Static

from blackbox.errors import CassetteError
from blackbox.fork import same_file
from blackbox_tui.run import Run, pretty_json
from blackbox_tui.state import ForkSettings, recall_fork, remember_fork
from blackbox_tui.widgets.json_editor import JsonEditor

__all__ = ["ForkScreen", "default_out", "fork_argv"]

CONTINUATIONS = ("script", "inline", "live")
KILL_GRACE = 3.0


def default_out(parent: Path, index: int) -> Path:
    """`<parent>-fork-at-<N>.json` beside the parent (never the parent itself), relative to here if inside."""
    out = parent.with_name(f"{parent.stem}-fork-at-{index}.json")
    try:
        return out.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return out


def fork_argv(parent: Path, index: int, value_file: Path, out: Path, continuation: list[str],
              command: list[str]) -> list[str]:
    """The CLI call that makes the fork; `continuation` is `["--live"]` or `["--script", path]`."""
    return [sys.executable, "-m", "blackbox", "fork", str(parent), "--at", str(index), "--set",
            f"@{value_file}", "--out", str(out), *continuation, "--", *command]


def initial_value(payload: object) -> str:
    """The recorded result as editable JSON (an error result starts from its message, as a JSON string)."""
    if isinstance(payload, dict):
        return pretty_json(payload["result"] if "result" in payload else payload.get("error"))
    return pretty_json(payload)


class ForkScreen(Screen[None]):
    """Fork `run` at tool_result step `index`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run_fork", "Run fork", priority=True, id="fork.run"),
        Binding("ctrl+g", "cancel_fork", "Cancel run", priority=True, id="fork.cancel"),
        Binding("escape", "back", "Back", id="fork.back"),
    ]

    DEFAULT_CSS = """
    ForkScreen {
        #fork-title { height: auto; padding: 0 1; background: $panel; }
        #fork-top { height: 1fr; }
        #value-box { width: 1fr; padding: 0 1; }
        #value-box TextArea { border: round $panel-lighten-2; }
        #value-box TextArea:focus { border: round $accent; }
        #settings { width: 1fr; padding: 0 1; }
        #settings Label { color: $text-muted; }
        #settings RadioSet { width: 100%; }
        #replies { height: 8; display: none; }
        #script-path { display: none; }
        #settings.-inline #replies { display: block; }
        #settings.-script #script-path { display: block; }
        #buttons { height: auto; padding: 0 1; }
        #buttons Button { margin-right: 2; }
        #fork-problem { width: 1fr; height: auto; color: $text-warning; padding: 1 0 0 0; }
        #fork-status { height: auto; padding: 0 1; }
        #fork-status.-error { color: $text-error; text-style: bold; }
        #fork-status.-ok { color: $text-success; }
        #fork-log { height: 8; border-top: hkey $panel-lighten-2; }
    }
    """

    def __init__(self, run: Run, index: int) -> None:
        super().__init__()
        if run.path is None:
            raise ValueError("a fork needs the parent cassette's file")
        self.run = run
        self.index = index
        self.parent_path: Path = run.path
        self.step = run.steps[index]
        self.process: asyncio.subprocess.Process | None = None
        self.cancelled = False

    def compose(self) -> ComposeResult:
        payload = self.step.payload if isinstance(self.step.payload, dict) else {}
        remembered = recall_fork(self.parent_path) or ForkSettings()
        title = Content.assemble(
            ("Fork ", "bold"), (self.run.cassette.id, "bold $text-accent"),
            (f" at step {self.index}", "bold"),
            (f"  ·  tool_result of {payload.get('toolName', '?')} ({payload.get('toolCallId', '?')})", "$text-muted"),
            (f"  ·  steps 0…{self.index - 1} are kept; the agent continues from the new value",
             "$text-muted"),
        )
        yield Static(title, id="fork-title")
        with Horizontal(id="fork-top"):
            with Vertical(id="value-box"):
                yield Label("New tool result (JSON)")
                yield JsonEditor(initial_value(self.step.payload), id="value")
            with VerticalScroll(id="settings", classes=f"-{remembered.continuation}"):
                yield Label("After the fork point, the model is…")
                with RadioSet(id="continuation"):
                    yield RadioButton("scripted: replies from a file", id="script",
                                      value=remembered.continuation == "script")
                    yield RadioButton("scripted: replies written here", id="inline",
                                      value=remembered.continuation == "inline")
                    yield RadioButton("live: the real API (needs a key)", id="live",
                                      value=remembered.continuation == "live")
                yield Input(remembered.script, placeholder="replies.json (a JSON array of model outputs)",
                            id="script-path")
                yield JsonEditor(remembered.replies or "[\n  {\"type\": \"final_answer\", \"text\": \"\"}\n]",
                                 want_list=True, id="replies")
                yield Label("Agent command (run after --)")
                yield Input(remembered.command, placeholder="python agent.py", id="command")
                yield Label("Write the fork to")
                yield Input(str(default_out(self.parent_path, self.index)), id="out")
        with Horizontal(id="buttons"):
            yield Button("Run fork", variant="primary", id="run", disabled=True)
            yield Button("Cancel run", variant="error", id="cancel", disabled=True)
            yield Static(id="fork-problem")
        yield Static(id="fork-status")
        yield Log(id="fork-log", highlight=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#value", JsonEditor).query_one("TextArea").focus()
        self.validate()

    # -- validation ----------------------------------------------------------------------------------------

    @property
    def continuation(self) -> str:
        pressed = self.query_one("#continuation", RadioSet).pressed_button
        return pressed.id if pressed is not None and pressed.id in CONTINUATIONS else "script"

    def problem(self) -> str | None:
        """The first reason the fork cannot run yet, or None."""
        value_problem = self.query_one("#value", JsonEditor).problem
        if value_problem:
            return f"the new result is {value_problem}"
        continuation = self.continuation
        if continuation == "script":
            script = self.query_one("#script-path", Input).value.strip()
            if not script:
                return "give the replies file (or write the replies here, or choose live)"
            if not Path(script).expanduser().is_file():
                return f"no replies file at {script}"
        if continuation == "inline" and self.query_one("#replies", JsonEditor).problem:
            return f"the replies are {self.query_one('#replies', JsonEditor).problem}"
        command = self.query_one("#command", Input).value.strip()
        if not command:
            return "give the agent command, e.g. python agent.py"
        try:
            shlex.split(command)
        except ValueError as exc:
            return f"the agent command does not parse: {exc}"
        out = self.query_one("#out", Input).value.strip()
        if not out:
            return "give the path of the fork"
        if same_file(Path(out).expanduser(), self.parent_path):
            return "the fork must be written to another file than its parent"
        return None

    def validate(self) -> None:
        problem = self.problem()
        running = self.process is not None
        self.query_one("#run", Button).disabled = problem is not None or running
        self.query_one("#fork-problem", Static).update(f"⚠ {problem}" if problem else "")

    @on(JsonEditor.Validated)
    @on(Input.Changed)
    def _edited(self) -> None:
        self.validate()

    @on(RadioSet.Changed, "#continuation")
    def _continuation_changed(self) -> None:
        settings = self.query_one("#settings")
        for name in CONTINUATIONS:
            settings.set_class(self.continuation == name, f"-{name}")
        self.validate()

    # -- running -------------------------------------------------------------------------------------------

    @on(Button.Pressed, "#run")
    def action_run_fork(self) -> None:
        if self.process is not None or self.problem() is not None:
            self.validate()
            return
        self._launch()

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
        if self.process is not None:
            self.notify("A fork is running: cancel it first (ctrl+g).", severity="warning")
            return
        self.app.pop_screen()

    def set_status(self, text: str, kind: str) -> None:
        status = self.query_one("#fork-status", Static)
        status.set_class(kind == "error", "-error")
        status.set_class(kind == "ok", "-ok")
        status.update(text)

    def _settings(self) -> ForkSettings:
        return ForkSettings(
            command=self.query_one("#command", Input).value.strip(),
            continuation=self.continuation,
            script=self.query_one("#script-path", Input).value.strip(),
            replies=self.query_one("#replies", JsonEditor).text if self.continuation == "inline" else "",
        )

    def _signal(self, signum: int, only: int | None = None) -> None:
        """Signal the fork's whole process group (the CLI and the agent it started)."""
        if self.process is None or (only is not None and self.process.pid != only):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)

    @work(exclusive=True, group="fork")
    async def _launch(self) -> None:
        settings = self._settings()
        remember_fork(self.parent_path, settings)
        out = Path(self.query_one("#out", Input).value.strip()).expanduser()
        log = self.query_one("#fork-log", Log)
        log.clear()
        with tempfile.TemporaryDirectory(prefix="blackbox-fork-") as tmp:
            value_file = Path(tmp) / "value.json"
            value_file.write_text(self.query_one("#value", JsonEditor).text, encoding="utf-8")
            if settings.continuation == "live":
                continuation = ["--live"]
            elif settings.continuation == "inline":
                replies = Path(tmp) / "replies.json"
                replies.write_text(settings.replies, encoding="utf-8")
                continuation = ["--script", str(replies)]
            else:
                continuation = ["--script", str(Path(settings.script).expanduser())]
            argv = fork_argv(self.parent_path, self.index, value_file, out, continuation,
                             shlex.split(settings.command))
            log.write_line("$ " + shlex.join(["blackbox", *argv[3:]]))
            code = await self._run(argv, log)
        self._finished(code, out)

    async def _run(self, argv: list[str], log: Log) -> int:
        self.cancelled = False
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True,
            )
        except OSError as exc:
            log.write_line(f"cannot start the fork: {exc}")
            return 127
        self.query_one("#cancel", Button).disabled = False
        self.validate()
        self.set_status("running… (ctrl+g cancels)", "")
        process = self.process
        try:
            await asyncio.gather(self._pump(process.stdout, log), self._pump(process.stderr, log))
            return await process.wait()
        except asyncio.CancelledError:  # the screen or the app is closing: do not leave the agent running
            self._signal(signal.SIGKILL)
            raise
        finally:
            self.process = None

    async def _pump(self, stream: asyncio.StreamReader | None, log: Log) -> None:
        if stream is None:
            return
        while line := await stream.readline():
            log.write_line(line.decode("utf-8", "replace").rstrip("\n"))

    def _finished(self, code: int, out: Path) -> None:
        self.query_one("#cancel", Button).disabled = True
        self.validate()
        if self.cancelled:
            self.set_status(f"cancelled (exit status {code}); nothing else was changed", "error")
            return
        if code != 0:
            self.set_status(f"error: the fork exited with status {code}; the log above says why", "error")
            return
        try:
            fork = Run.open(out)
        except CassetteError as exc:
            self.set_status(f"error: the fork ran but its cassette cannot be read: {exc}", "error")
            return
        self.set_status(f"forked {out}", "ok")
        from blackbox_tui.screens.diff import DiffScreen

        self.app.switch_screen(DiffScreen(self.run, fork, at=self.index))
