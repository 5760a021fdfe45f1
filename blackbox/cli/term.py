"""Writing to the terminal without rich: the one-line error, colour only on a TTY, plain text otherwise.

The commands CI runs on many small cassettes (verify, assert) print through this module, so their start-up
imports neither typer nor rich; colour follows the same rule as rich output (a TTY, and neither NO_COLOR
nor CI set).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "colour", "error_line", "paint", "plain"]

EXIT_FAILURE = 1
EXIT_USAGE = 2

_STYLES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def plain() -> bool:
    """NO_COLOR or CI is set: no colour even on a terminal."""
    return bool(os.environ.get("NO_COLOR") or os.environ.get("CI"))


def colour(stream: TextIO | None = None) -> bool:
    """Whether to colour what goes to `stream` (stdout by default)."""
    stream = sys.stdout if stream is None else stream
    try:
        return not plain() and stream.isatty()
    except ValueError:  # a closed stream
        return False


def paint(text: str, style: str, on: bool) -> str:
    """`text` in `style` ("bold red", "green"...) as ANSI codes when `on`; else `text` unchanged."""
    if not on or not style:
        return text
    codes = ";".join(_STYLES[word] for word in style.split())
    return f"\x1b[{codes}m{text}\x1b[0m"


def error_line(message: str) -> None:
    """`error: <message>` on stderr, one line (`message` is already inert)."""
    sys.stderr.write(f"{paint('error:', 'bold red', colour(sys.stderr))} {message}\n")
    sys.stderr.flush()
