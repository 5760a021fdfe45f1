"""`blackbox tui`: the terminal UI (Textual), imported only when the command runs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from blackbox.cli._app import FlagCommand, app
from blackbox.cli.render import EXIT_USAGE, fail
from blackbox.format.inert import inert

_PANEL = "Explore"
_AGENT = "blackbox.agent"  # where the command line after `--` is kept (the context's meta)


class _AgentAfterDashes(FlagCommand):
    """`blackbox tui CASSETTE -- python agent.py`: what follows `--` is the agent the fork screen continues with,
    not more cassettes (click would hand both to the one CASSETTE... argument)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta[_AGENT] = args[at + 1:]
            args = args[:at]
        return super().parse_args(ctx, args)


@app.command(rich_help_panel=_PANEL, cls=_AgentAfterDashes)
def tui(
    ctx: typer.Context,
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="One cassette to browse, two to compare, or a sweep's folder.", metavar="CASSETTE...",
                       show_default=False),
    ] = None,
    demo: Annotated[
        bool, typer.Option("--demo", metavar=" ",
                           help="Open the built-in demo run with its fork beside it (offline).")
    ] = False,
    follow: Annotated[
        bool, typer.Option("--follow", metavar=" ", help="Show a recording in progress (its journal), steps "
                           "appearing as the agent makes them.")
    ] = False,
    theme: Annotated[
        str | None, typer.Option("--theme", metavar="NAME", help="A Textual theme, e.g. textual-dark or "
                                 "textual-light (the last one chosen is remembered).")
    ] = None,
) -> None:
    """Browse a cassette, diff two, and fork a run at a tool result — in the terminal.

    Keys: arrows or j/k move, / searches, t filters, d diffs, f forks at a tool result, ? shows every key,
    ctrl+p opens the command palette, q quits.  After `--`: the agent command a fork continues with.

    [b]Examples[/b]:

      blackbox tui --demo

      blackbox tui traces/example-trace.json

      blackbox tui parent.json fork.json

      blackbox tui run.json -- python agent.py     (the fork screen continues with this agent)

      blackbox tui run.json --theme textual-light

      blackbox tui --follow run.json     (while `blackbox record --out run.json -- …` runs)

      blackbox tui sweeps/coolant/     (a sweep: pass rates, branches by verdict, each beside the parent)
    """
    paths = list(files or [])
    agent: list[str] | None = ctx.meta.get(_AGENT)
    if agent is not None and not agent:
        fail("give the agent command after `--` (blackbox tui run.json -- python agent.py), or leave out `--`",
             EXIT_USAGE)
    if agent and demo:
        fail("--demo forks with the built-in demo agent; give an agent command with a cassette, not with --demo",
             EXIT_USAGE)
    if demo and paths:
        fail("--demo opens the built-in demo; give either --demo or cassette files, not both", EXIT_USAGE)
    if not demo and not paths:
        fail("give a cassette to browse (or two to compare), or --demo to try it", EXIT_USAGE)
    if len(paths) > 2:
        fail(f"got {len(paths)} cassettes; give one to browse or two to compare", EXIT_USAGE)
    if follow:
        if demo or len(paths) != 1:
            fail("--follow shows one recording: give the --out path of the run (or its journal)", EXIT_USAGE)
        _follow(paths[0], theme, agent or [])
        return
    from blackbox.many.folder import MANIFEST, is_sweep_folder

    sweep = paths[0] if len(paths) == 1 and is_sweep_folder(paths[0]) else None
    for path in paths:
        if path.is_dir() and path is not sweep:  # no cassette to show: the question cannot be asked (README)
            if is_sweep_folder(path):
                fail(f"{inert(str(path))}: is a sweep's folder; open it alone (blackbox tui {inert(str(path))})",
                     EXIT_USAGE)
            fail(f"{inert(str(path))}: is a directory, not a cassette file nor a sweep's folder (no {MANIFEST}); "
                 f"`blackbox list {inert(str(path))}` shows the cassettes in it", EXIT_USAGE)
    if sweep is not None:
        _sweep(sweep, theme, agent or [])
        return

    from blackbox.errors import CassetteError

    running: list[Any] = []  # the app, once it runs (what SIGTERM asks to exit)
    with contextlib.ExitStack() as stack:
        if demo:
            from blackbox.demo import demo_pair

            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="blackbox-demo-"))
            running = stack.enter_context(_exit_on_hangup(Path(scratch)))  # a closed terminal or a kill too
            paths = list(demo_pair(Path(scratch)))  # the demo run and its fork; removed when the UI closes
        from blackbox_tui.app import BlackboxApp, load_runs

        try:
            runs = load_runs(paths)
        except CassetteError as exc:
            fail(str(exc), EXIT_USAGE)  # the loader's message already says what to do
        ui = BlackboxApp(runs, diff=len(paths) == 2, demo=demo, remember_theme=True, agent_command=agent or ())
        if theme is not None:
            if theme not in ui.available_themes:
                names = ", ".join(sorted(ui.available_themes))
                fail(f"unknown theme {theme!r}; choose one of: {names}", EXIT_USAGE)
            ui.theme = theme
        running.append(ui)
        ui.run()
    if ui.return_code:
        raise typer.Exit(ui.return_code)


@contextlib.contextmanager
def _exit_on_hangup(scratch: Path) -> Iterator[list[Any]]:
    """SIGHUP and SIGTERM end the demo UI with 128 + the signal, and its scratch folder is removed on the way out
    instead of left in the temp dir.

    Nothing is raised from the handler while the UI runs: an exception raised between two bytecodes of
    Textual's output queue (inside `Condition.notify`) can leave its writer thread waiting forever, and the UI
    then hangs with no terminal.  A closed terminal (SIGHUP) has nothing left to restore, so the folder is removed
    and the process leaves at once; SIGTERM asks the app to exit (the terminal is restored), and leaves the same
    way if that has not happened within `_EXIT_GRACE` seconds."""
    def gone(signum: int) -> None:
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(128 + signum)

    def leave(signum: int, _frame: object) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the UI is not running yet (or any more): an exception is safe here
            raise SystemExit(128 + signum) from None
        if signum == signal.SIGHUP:
            gone(signum)
        timer = threading.Timer(_EXIT_GRACE, gone, args=(signum,))
        timer.daemon = True
        timer.start()
        for ui in running:
            loop.call_soon_threadsafe(ui.exit_when_ready, 128 + signum)

    running: list[Any] = []
    previous = {sig: signal.signal(sig, leave) for sig in (signal.SIGHUP, signal.SIGTERM)}
    try:
        yield running
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


_EXIT_GRACE = 10.0  # seconds a killed UI has to restore the terminal before it leaves without doing so


def _follow(path: Path, theme: str | None, agent: list[str]) -> None:
    """Wait for the recording's journal (up to FOLLOW_WAIT seconds), then open the UI on it."""
    import time

    from blackbox_tui.app import BlackboxApp
    from blackbox_tui.follow import Follower, journal_for
    from blackbox_tui.run import Run

    follower = Follower(journal_for(path))
    deadline = time.monotonic() + FOLLOW_WAIT
    told = False
    update = follower.poll()
    while follower.header is None:
        if time.monotonic() > deadline:
            fail(f"no recording to {inert(str(path))} started within {FOLLOW_WAIT:.0f} s (no {follower.journal}); "
                 "start the agent with `blackbox record --out` that path, then follow it")
        if not told:
            print(f"waiting for a recording to {inert(str(path))}…", flush=True)
            told = True
        time.sleep(0.2)
        update = follower.poll()
    cassette = follower.cassette()
    assert cassette is not None
    run = Run(cassette, follower.out)
    run.append(update.steps, drop=update.drop)
    ui = BlackboxApp([run], follow=follower, remember_theme=True, agent_command=agent)
    if theme is not None:
        ui.theme = theme
    ui.run()


FOLLOW_WAIT = 30.0


def _sweep(folder: Path, theme: str | None, agent: list[str]) -> None:
    """The sweep screen on `folder` (a manifest that cannot be read is said on it, and `r` reads it again)."""
    from blackbox_tui.app import BlackboxApp

    ui = BlackboxApp([], sweep=folder, remember_theme=True, agent_command=agent)
    if theme is not None:
        if theme not in ui.available_themes:
            fail(f"unknown theme {theme!r}; choose one of: {', '.join(sorted(ui.available_themes))}", EXIT_USAGE)
        ui.theme = theme
    ui.run()
    if ui.return_code:
        raise typer.Exit(ui.return_code)
