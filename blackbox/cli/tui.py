"""`blackbox tui`: the terminal UI (Textual), imported only when the command runs."""

from __future__ import annotations

import contextlib
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from blackbox.cli._app import app
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, fail
from blackbox.format.inert import inert

_PANEL = "Explore"


@app.command(rich_help_panel=_PANEL)
def tui(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="One cassette to browse, or two to compare.", metavar="CASSETTE...",
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
    ctrl+p opens the command palette, q quits.

    [b]Examples[/b]:

      blackbox tui --demo

      blackbox tui traces/example-trace.json

      blackbox tui parent.json fork.json

      blackbox tui run.json --theme textual-light

      blackbox tui --follow run.json     (while `blackbox record --out run.json -- …` runs)
    """
    paths = list(files or [])
    if demo and paths:
        fail("--demo opens the built-in demo; give either --demo or cassette files, not both", EXIT_USAGE)
    if not demo and not paths:
        fail("give a cassette to browse (or two to compare), or --demo to try it", EXIT_USAGE)
    if len(paths) > 2:
        fail(f"got {len(paths)} cassettes; give one to browse or two to compare", EXIT_USAGE)
    if follow:
        if demo or len(paths) != 1:
            fail("--follow shows one recording: give the --out path of the run (or its journal)", EXIT_USAGE)
        _follow(paths[0], theme)
        return
    for path in paths:
        if path.is_dir():  # a failure to open, as `verify` says it, not a usage error
            fail(f"{path}: is a directory, not a cassette file; `blackbox list {path}` shows the cassettes in it")

    from blackbox.errors import CassetteError

    with contextlib.ExitStack() as stack:
        if demo:
            from blackbox.demo import demo_pair

            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="blackbox-demo-"))
            stack.enter_context(_exit_on_hangup())  # a closed terminal or a kill still removes the folder
            paths = list(demo_pair(Path(scratch)))  # the demo run and its fork; removed when the UI closes
        from blackbox_tui.app import BlackboxApp, load_runs

        try:
            runs = load_runs(paths)
        except CassetteError as exc:
            fail(str(exc), EXIT_FAILURE)  # the loader's message already says what to do
        ui = BlackboxApp(runs, diff=len(paths) == 2, demo=demo, remember_theme=True)
        if theme is not None:
            if theme not in ui.available_themes:
                names = ", ".join(sorted(ui.available_themes))
                fail(f"unknown theme {theme!r}; choose one of: {names}", EXIT_USAGE)
            ui.theme = theme
        ui.run()


@contextlib.contextmanager
def _exit_on_hangup() -> Iterator[None]:
    """SIGHUP and SIGTERM end the UI as an exit (128 + the signal), so the demo's scratch folder is removed
    on the way out instead of left in the temp dir."""
    def leave(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, leave) for sig in (signal.SIGHUP, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _follow(path: Path, theme: str | None) -> None:
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
    ui = BlackboxApp([run], follow=follower, remember_theme=True)
    if theme is not None:
        ui.theme = theme
    ui.run()


FOLLOW_WAIT = 30.0
