"""Who continues a fork from the UI after its fork point, behind one interface (no Textual here: the fork screen
drives a `ForkRunner` and shows what it reports; tests/test_fork_runners.py runs each without a UI).

- `WhatIfRunner`, Blackbox itself (no agent): `blackbox.fork.whatif` sends the model the recorded history with the new
  value, live to the provider or answered from scripted replies, serving recorded results for repeated calls;
- `AgentRunner`, the agent command: the CLI's `python -m blackbox fork … -- <agent>`, run as a subprocess in its
  own process group, so its output streams into the log and `cancel` stops the agent and everything it started;
- `DemoRunner`, the demo agent (for `tui --demo`): the built-in offline demo fork.
Each writes a fork cassette at `ForkJob.out` and says how it went in a `ForkResult`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from blackbox.errors import BlackboxError, UsageError
from blackbox.format.inert import inert
from blackbox.format.typed import ModelInputView

from .fork_files import fork_argv, write_inputs
from .run import Run
from .state import ForkSettings

if TYPE_CHECKING:
    from blackbox.format.cassette import Cassette

__all__ = ["RUNNERS", "AgentRunner", "DemoRunner", "ForkEvents", "ForkJob", "ForkResult", "ForkRunner",
           "WhatIfRunner", "next_model_input", "provider_of", "recorded_api", "recorded_model", "runner_for"]

KILL_GRACE = 3.0  # seconds between SIGTERM and SIGKILL when a running agent is cancelled


def provider_of(model: str | None, used: str | None = None) -> str | None:
    """The provider a live what-if asks for `model`, or None: `used` (the API the run used, `recorded_api`) when
    the model is of its family (a Responses run stays on Responses), else the one the model's name belongs to —
    the rule of `blackbox what-if`'s own default."""
    from blackbox.providers import by_name, for_model  # (here: every provider's codecs, once a fork is set up)

    named, recorded = for_model(model), by_name(used or "")
    if recorded is not None and (named is None or named.api is recorded.api or not recorded.api.model_prefixes):
        return recorded.name
    return named.name if named is not None else None


def recorded_api(run: Run) -> str | None:
    """The API the run's last model call went to (its output's unhashed `origin`), or None: a run recorded
    before Blackbox kept it, or an import."""
    for i in range(len(run) - 1, -1, -1):
        if run.steps.type(i) == "model_output":
            origin = run.steps[i].origin
            if origin is not None and origin.api is not None:
                return origin.api
    return None


def next_model_input(run: Run, index: int) -> int | None:
    """The first model request after step `index` (where the demo agent resumes), or None."""
    return next((i for i in range(index + 1, len(run)) if run.steps.type(i) == "model_input"), None)


def recorded_model(run: Run) -> str | None:
    """The model the run's last request named, or None."""
    for i in range(len(run) - 1, -1, -1):
        if run.steps.type(i) == "model_input":
            found = run.steps[i].view()
            if isinstance(found, ModelInputView) and isinstance(found.model, str):
                return found.model
    return None


@dataclass(frozen=True)
class ForkJob:
    """One fork to make: the parent file, the fork point, the new value (JSON text), where to write the fork, the
    settings chosen, the model named for a live what-if and the next model request (where the demo resumes)."""

    parent: Path
    index: int
    value_text: str
    out: Path
    settings: ForkSettings
    model_name: str = ""
    recorded_model: str | None = None
    next_model_input: int | None = None
    recorded_api: str | None = None

    @property
    def live_provider(self) -> str | None:
        """The API a live what-if run asks (`provider_of`)."""
        return provider_of(self.model_name or self.recorded_model, self.recorded_api)


class ForkEvents(Protocol):
    """What a runner reports while it runs; `line` and `started` on the event loop's thread, `ask_result` from
    the runner's own thread (it blocks until the user answers)."""

    def line(self, text: str) -> None:
        """A line for the log (already inert)."""

    def started(self, status: str) -> None:
        """The run is under way (`status` says how; the agent can be cancelled from now on)."""

    def ask_result(self, call: dict[str, Any]) -> Any:
        """The result of a tool call the parent never made (`blackbox.fork.whatif.NO_RESULT` stops the run)."""


@dataclass(frozen=True)
class ForkResult:
    """How a run ended: `ok` (the fork is written at `out`), else `message`, the one line for the status."""

    ok: bool
    out: Path
    message: str = ""


class ForkRunner(ABC):
    """Makes one fork per `run`; `cancel` asks a running one to stop (False: this runner cannot be stopped)."""

    name: ClassVar[str]

    @abstractmethod
    async def run(self, job: ForkJob, events: ForkEvents) -> ForkResult: ...

    def cancel(self) -> bool:
        return False


class _InThread(ForkRunner):
    """A runner whose work is a blocking call (no subprocess), run on a thread so the event loop stays free."""

    status: ClassVar[str]

    async def run(self, job: ForkJob, events: ForkEvents) -> ForkResult:
        from blackbox.format.canonical import decode_json
        from blackbox.format.cassette import save

        loop = asyncio.get_running_loop()

        def note(line: str) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the UI is gone
                loop.call_soon_threadsafe(events.line, inert(line))

        def work() -> tuple[Cassette, str]:
            fork, reason = self.make(job, decode_json(job.value_text), note, events.ask_result)
            save(fork, job.out)
            return fork, reason

        events.started(self.status)
        try:
            fork, reason = await asyncio.to_thread(work)
        except (BlackboxError, ValueError) as exc:
            return ForkResult(False, job.out, f"error: {exc}")
        except OSError as exc:
            return ForkResult(False, job.out, f"error: cannot write {job.out}: {exc.strerror or exc}")
        events.line(inert(f"{reason}; wrote {job.out} ({len(fork.steps)} steps)"))
        return ForkResult(True, job.out)

    @abstractmethod
    def make(self, job: ForkJob, value: Any, note: Callable[[str], None],
             ask: Callable[[dict[str, Any]], Any]) -> tuple[Cassette, str]:
        """The fork cassette and why it ended (on the runner's thread)."""


class WhatIfRunner(_InThread):
    name = "whatif"
    status = "running… (the model is being asked)"

    def make(self, job: ForkJob, value: Any, note: Callable[[str], None],
             ask: Callable[[dict[str, Any]], Any]) -> tuple[Cassette, str]:
        from blackbox.fork.plan import load_script
        from blackbox.fork.whatif import LiveModel, ModelSource, ScriptedModel, what_if
        from blackbox.format.cassette import load
        from blackbox.live.settings import default_trace_id

        settings = job.settings
        model: ModelSource
        model_name = None  # a scripted run keeps the recorded model: the name typed is for a live one
        if settings.continuation == "live":
            provider = job.live_provider
            if provider is None:
                raise UsageError("name a model for the live run (claude-…, gpt-…, gemini-…)")
            model, model_name = LiveModel(provider), job.model_name or None
        elif settings.continuation == "inline":
            with tempfile.TemporaryDirectory(prefix="blackbox-fork-") as tmp:
                replies = Path(tmp) / "replies.json"
                replies.write_text(settings.replies, encoding="utf-8")
                model = ScriptedModel(load_script(replies))
        else:
            model = ScriptedModel(load_script(Path(settings.script).expanduser()))
        return what_if(load(job.parent), job.index, value, model, trace_id=default_trace_id(str(job.out)),
                       progress=note, model_name=model_name, tool_results=ask)


class DemoRunner(_InThread):
    name = "demo"
    status = "running the demo agent…"

    def make(self, job: ForkJob, value: Any, note: Callable[[str], None],
             ask: Callable[[dict[str, Any]], Any]) -> tuple[Cassette, str]:
        from blackbox.demo.fork import demo_fork

        fork = demo_fork(job.parent, job.out, fork_index=job.next_model_input, mutation_step=job.index,
                         payload=value)
        return fork, "the demo agent finished"


class AgentRunner(ForkRunner):
    """`blackbox fork … -- <agent>` as a subprocess; the value and the inline replies are written beside the fork,
    so the command the log shows can be run again."""

    name = "agent"

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.cancelled = False

    async def run(self, job: ForkJob, events: ForkEvents) -> ForkResult:
        settings = job.settings
        inline = settings.replies if settings.continuation == "inline" else None
        try:
            value_file, replies = write_inputs(job.out, job.value_text, inline)
        except BlackboxError as exc:
            return ForkResult(False, job.out, f"error: {exc}")
        continuation = ["--live"] if settings.continuation == "live" else \
            ["--script", str(replies or Path(settings.script).expanduser())]
        argv = fork_argv(job.parent, job.index, value_file, job.out, continuation, shlex.split(settings.command))
        events.line(inert("$ " + shlex.join(["blackbox", *argv[3:]])))
        code, last = await self._run(argv, events)
        if self.cancelled:
            return ForkResult(False, job.out, f"cancelled (exit status {code}); nothing else was changed")
        if code != 0:
            why = last.removeprefix("error: ") if last else "see the log below"
            return ForkResult(False, job.out, f"error: the fork exited with status {code}: {why}")
        return ForkResult(True, job.out)

    async def _run(self, argv: list[str], events: ForkEvents) -> tuple[int, str]:
        self.cancelled = False
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True,
            )
        except OSError as exc:
            events.line(f"cannot start the fork: {exc}")
            return 127, str(exc)
        events.started("running… (ctrl+g cancels)")
        process = self.process
        errors: list[str] = []
        try:
            await asyncio.gather(self._pump(process.stdout, events, []), self._pump(process.stderr, events, errors))
            return await process.wait(), next((line for line in reversed(errors) if line.strip()), "")
        except asyncio.CancelledError:  # the screen or the app is closing: do not leave the agent running
            self._signal(signal.SIGKILL)
            raise
        finally:
            self.process = None

    @staticmethod
    async def _pump(stream: asyncio.StreamReader | None, events: ForkEvents, keep: list[str]) -> None:
        if stream is None:
            return
        while line := await stream.readline():
            text = inert(line.decode("utf-8", "replace").rstrip("\n"))
            keep.append(text)
            events.line(text)

    def cancel(self) -> bool:
        """SIGTERM to the fork's process group now, SIGKILL `KILL_GRACE` seconds later if it is still the one."""
        if self.process is None:
            return False
        self.cancelled = True
        pid = self.process.pid
        self._signal(signal.SIGTERM)
        asyncio.get_running_loop().call_later(KILL_GRACE, self._signal, signal.SIGKILL, pid)
        return True

    def _signal(self, signum: int, only: int | None = None) -> None:
        """Signal the fork's whole process group (the CLI and the agent it started)."""
        if self.process is None or (only is not None and self.process.pid != only):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)


RUNNERS: dict[str, type[ForkRunner]] = {runner.name: runner for runner in (WhatIfRunner, AgentRunner, DemoRunner)}


def runner_for(name: str) -> ForkRunner:
    """A new runner of that name (`whatif`, `agent`, `demo`)."""
    return RUNNERS[name]()
