"""`blackbox tui`: the terminal UI (Textual), imported only when the command runs."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from blackbox.cli.app import app
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, fail

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
    """
    paths = list(files or [])
    if demo and paths:
        fail("--demo opens the built-in demo; give either --demo or cassette files, not both", EXIT_USAGE)
    if not demo and not paths:
        fail("give a cassette to browse (or two to compare), or --demo to try it", EXIT_USAGE)
    if len(paths) > 2:
        fail(f"got {len(paths)} cassettes; give one to browse or two to compare", EXIT_USAGE)
    for path in paths:
        if path.is_dir():  # a failure to open, as `verify` says it, not a usage error
            fail(f"{path}: is a directory, not a cassette file; `blackbox list {path}` shows the cassettes in it")

    from blackbox.errors import CassetteError

    with tempfile.TemporaryDirectory(prefix="blackbox-demo-") as scratch:
        if demo:
            from blackbox.demo import demo_pair

            paths = list(demo_pair(Path(scratch)))  # the demo run and its fork; removed when the UI closes
        from blackbox_tui.app import BlackboxApp, load_runs

        try:
            runs = load_runs(paths)
        except CassetteError as exc:
            fail(f"{exc}; check the file or open another one", EXIT_FAILURE)
        ui = BlackboxApp(runs, diff=len(paths) == 2, demo=demo, remember_theme=True)
        if theme is not None:
            if theme not in ui.available_themes:
                names = ", ".join(sorted(ui.available_themes))
                fail(f"unknown theme {theme!r}; choose one of: {names}", EXIT_USAGE)
            ui.theme = theme
        ui.run()
