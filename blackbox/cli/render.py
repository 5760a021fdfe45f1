"""Output for people (rich, colour only on a terminal) and the one-line error convention of SPEC §12."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "console", "err_console", "fail", "plain"]

EXIT_FAILURE = 1
EXIT_USAGE = 2


# Output to a pipe or a CI log is not cut to 80 columns: tables keep one row per line, payloads stay whole.
_PIPE_WIDTH = 240


def plain() -> bool:
    """NO_COLOR or CI is set: no colour even on a terminal (`_console` also drops it when not on one)."""
    return bool(os.environ.get("NO_COLOR") or os.environ.get("CI"))


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
    """Print `error: <message>` on stderr, one line, and exit with `code` (1 failure, 2 usage)."""
    err_console().print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False)
    raise typer.Exit(code)
