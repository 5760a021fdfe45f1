"""Output for people (rich, colour only on a terminal) and the one-line error convention."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from blackbox.cli.term import EXIT_FAILURE, EXIT_USAGE, json_error, plain
from blackbox.format.inert import inert

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "console", "err_console", "fail", "plain"]

# Output to a pipe or a CI log is not cut to 80 columns: tables keep one row per line, payloads stay whole.
_PIPE_WIDTH = 240


def _console(stderr: bool) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    colour = not plain() and stream.isatty()
    return Console(
        file=stream,
        stderr=stderr,
        width=None if stream.isatty() else _PIPE_WIDTH,
        no_color=not colour,
        color_system="auto" if colour else None,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )


def console() -> Console:
    return _console(stderr=False)


def err_console() -> Console:
    return _console(stderr=True)


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print `error: <message>` on stderr, one line, and exit with `code` (1 failure, 2 usage).

    The message is made inert: it may quote a path or a value from a cassette.  A call that asked for JSON
    gets the error document on stdout too (unless it printed its own)."""
    json_error(inert(message), code)
    err_console().print(f"[bold red]error:[/] {escape(inert(message))}", markup=True, highlight=False)
    raise typer.Exit(code)
