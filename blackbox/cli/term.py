"""Writing to the terminal without rich: the one-line error, colour only on a TTY, plain text otherwise.

The commands CI runs on many small cassettes (verify, assert) print through this module, so their start-up
imports neither typer nor rich; colour follows the same rule as rich output (a TTY, and neither NO_COLOR
nor CI set).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from blackbox.cli.json_call import JSON_OUTPUT

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "JSON_OUTPUT", "colour", "error_line", "json_error", "paint", "plain"]

# The exit codes every command shares (README, "Exit codes"), so a CI job can tell a negative answer from a
# question that could not be asked:
#   0  the answer is yes: verified, every expectation holds, replayed, written (diff: compared; with
#      --exit-code, compared and identical)
#   1  the answer is no: a verify check failed (verify and assert judge the file itself, so a file that is not
#      a cassette fails schema_version), an expectation failed, the runs diverge (diff --exit-code), a replay
#      diverged, an import was refused, a write failed
#   2  the question could not be asked: wrong usage, a path that is not there (or a folder), a file that is
#      not a cassette (or whose chain is broken) where the command needs one to work on (diff, inspect,
#      replay with a command, fork, what-if, demo fork, export, redact, tui; inspect and tui show a broken
#      chain as it is), a journal recover cannot read.  tests/test_exit_codes.py holds the table.
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


def json_error(message: str, code: int) -> None:
    """The error document `{"ok": false, "error": …, "exitCode": …}` on stdout, when this call asked for JSON
    and printed no document yet (docs/schemas/error.schema.json)."""
    if JSON_OUTPUT.wanted and not JSON_OUTPUT.printed:
        from blackbox.cli.jsonout import print_json  # msgspec, only when there is a document to print

        print_json({"ok": False, "error": message, "exitCode": code})


def error_line(message: str, code: int = EXIT_FAILURE) -> None:
    """`error: <message>` on stderr, one line (`message` is already inert); the error document on stdout
    when the call asked for JSON."""
    json_error(message, code)
    sys.stderr.write(f"{paint('error:', 'bold red', colour(sys.stderr))} {message}\n")
    sys.stderr.flush()
