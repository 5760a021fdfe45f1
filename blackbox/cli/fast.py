"""The light dispatcher: `blackbox --help`, `--version`, and simple verify, assert, diff, inspect and list
calls without typer.

CI runs verify and assert on many small cassettes, where start-up is nearly all of the time: typer, click and
rich cost ~0.15 s to import before a command runs.  `dispatch` handles the calls whose arguments it fully
understands with plain Python and returns None for everything else (other commands, `--help` of a command,
a mistake in the arguments), which then goes to the typer application with its complete checking and
messages.  The root help is written from `COMMANDS`; a test keeps it equal to the typer application's.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from blackbox import __version__
from blackbox.cli.term import EXIT_USAGE, colour, paint

if TYPE_CHECKING:
    from blackbox.cli.reports import Format

__all__ = ["COMMANDS", "OPTIONS", "dispatch", "root_help"]

VERSION = __version__  # the one version string is the package's

# (panel, ((command, first line of its help), ...)) in the order the help lists them.
COMMANDS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Try it offline", (  # `demo` is a group (`demo fork`): typer lists groups after commands
        ("check", "Run the whole loop offline in about a second: record → verify → fork → verify → diff."),
        ("demo", "Record the built-in demo agent (a scripted model and three fixture tools) — no API key, no "
                 "network."),
    )),
    ("Run an agent", (
        ("record", "Record an agent run into a cassette."),
        ("replay", "Replay an agent offline against a cassette, or show what it recorded when no command is "
                   "given."),
        ("fork", "Fork a run at a tool result with a different value, and continue live or from scripted "
                 "replies."),
        ("recover", "Turn the journal of a recording that was killed (even with kill -9) into a verified, "
                    "incomplete cassette."),
        ("what-if", "Fork a run at a tool result without the agent: Blackbox continues the conversation itself."),
        ("sweep", "Fork a run many times at one tool result: pass rates per variant, against the run's own flap "
                  "rate."),
    )),
    ("Cassettes", (
        ("verify", "Check a cassette: schema version, hash chain, provider neutrality, replayability; print its "
                   "final hash."),
        ("assert", "Verify a cassette, then check what the run did. For CI: exit 1 on any failure."),
        ("diff", "Show where two runs diverge, what changed there, and what it did to the outcome."),
        ("inspect", "Show a cassette: id, parent, created, outcome and one row per step; or one step in full."),
        ("list", "List the cassettes in a folder: id, steps, status, created, parent; invalid files with a "
                 "reason."),
        ("export", "Export a cassette or a folder of them as OpenTelemetry GenAI traces (OTLP, or its JSON file)."),
        ("import", "Import a transcript written by another tool (a coding agent's session) as a cassette."),
        ("scan", "Check cassettes, crash journals and leftover temporary files for values in the clear."),
        ("redact", "Apply the redaction policy to an existing cassette and re-chain it into a new one."),
    )),
    ("Explore", (
        ("tui", "Browse a cassette, diff two, and fork a run at a tool result — in the terminal."),
    )),
)

OPTIONS: tuple[tuple[str, str], ...] = (
    ("--version", "Print the version and exit."),
    ("--install-completion", "Install completion for the current shell."),
    ("--show-completion", "Show completion for the current shell, to copy it or customize the installation."),
    ("-h, --help", "Show this message and exit."),
)

_ABOUT = "Record, replay, fork and diff runs of LLM agents. Cassettes are hash-chained JSON files."
_EXAMPLES = (
    "blackbox check          (the whole loop offline, first thing after installing)",
    "blackbox record --out run.json -- python agent.py",
    "blackbox replay run.json -- python agent.py",
    "blackbox <command> --help",
)


def _panel(title: str, rows: Sequence[tuple[str, str]], width: int, on: bool) -> list[str]:
    """A titled box of `name  description` rows, descriptions wrapped to the box."""
    name_width = max(len(name) for name, _ in rows)
    text_width = max(20, width - name_width - 6)
    top = f"╭─ {title} " + "─" * max(0, width - len(title) - 5) + "╮"
    lines = [paint(top, "dim", on).replace(title, paint(title, "bold", on), 1)]
    for name, text in rows:
        for n, part in enumerate(textwrap.wrap(text, text_width) or [""]):
            label = name if n == 0 else ""
            cell = f" {paint(label.ljust(name_width), 'bold cyan', on)}  {part.ljust(text_width)} "
            lines.append(f"{paint('│', 'dim', on)}{cell}{paint('│', 'dim', on)}")
    lines.append(paint("╰" + "─" * (width - 2) + "╯", "dim", on))
    return lines


def _columns() -> int:
    """The terminal's width (COLUMNS first, as typer does); 100 on a pipe."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        return 100


def root_help() -> str:
    """`blackbox --help`: usage, what it is, examples, the options and the commands by panel."""
    on = colour()
    width = min(max(_columns(), 60), 120)
    lines = ["", f" {paint('Usage:', 'yellow', on)} blackbox [OPTIONS] COMMAND [ARGS]...", "", f" {_ABOUT}", "",
             f" {paint('Examples', 'bold', on)}", ""]
    lines += [f"   {example}" for example in _EXAMPLES]
    lines.append("")
    lines += _panel("Options", OPTIONS, width, on)
    for title, rows in COMMANDS:
        lines += _panel(title, rows, width, on)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------
# verify and assert with simple arguments


_VALUE_OPTIONS = {"--expect-status": "status", "--expect-final-answer": "final_answer",
                  "--expect-tools": "tools", "--expect-failure-reason": "failure_reason", "--format": "format",
                  "--step": "step"}


def _parse(args: Sequence[str], allowed: set[str], count: int) -> tuple[list[str], dict[str, str], bool] | None:
    """(the `count` positionals, option values, --json) when `args` are plainly understood; else None."""
    positional: list[str] = []
    values: dict[str, str] = {}
    json_out = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--json" and not json_out:
            json_out = True
        elif arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name not in allowed or _VALUE_OPTIONS[name] in values:
                return None
            if not eq:
                i += 1
                if i >= len(args) or args[i].startswith("-"):
                    return None
                value = args[i]
            values[_VALUE_OPTIONS[name]] = value
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            positional.append(arg)
        i += 1
    if len(positional) != count:
        return None
    return positional, values, json_out


def _format(values: dict[str, str], json_out: bool) -> Format | None:
    fmt = values.pop("format", "json" if json_out else "text").lower()
    if fmt not in ("text", "markdown", "json") or (json_out and fmt != "json"):
        return None  # typer says what is wrong (--json with --format text or markdown is refused there)
    return cast("Format", fmt)


def _inspect(args: Sequence[str]) -> int | None:
    """`inspect PATH [--step N] [--json]`, N a non-negative integer; anything else goes to typer."""
    parsed = _parse(args, {"--step"}, 1)
    if parsed is None:
        return None
    paths, values, json_out = parsed
    step = values.get("step")
    if step is not None and not (step.isascii() and step.isdigit()):
        return None
    from blackbox.cli.inspecting import run_inspect  # deferred, as in `dispatch`

    return run_inspect(Path(paths[0]), None if step is None else int(step), json_out)


def _list(args: Sequence[str]) -> int | None:
    """`list [DIR] [--json]`; anything else goes to typer."""
    rest = [a for a in args if a != "--json"]
    if len(args) - len(rest) > 1 or len(rest) > 1 or any(a.startswith("-") for a in rest):
        return None
    from blackbox.cli.listing import DEFAULT_FOLDER, run_list  # deferred, as in `dispatch`

    return run_list(Path(rest[0]) if rest else DEFAULT_FOLDER, len(rest) != len(args))


def dispatch(args: Sequence[str]) -> int | None:
    """Run the call here and return its exit code, or None to hand it to the typer application."""
    if list(args) in (["--help"], ["-h"]):
        sys.stdout.write(root_help())
        return 0
    if list(args) == ["--version"]:
        sys.stdout.write(f"blackbox {VERSION}\n")
        return 0
    if len(args) == 2 and args[1] in ("--help", "-h"):  # a command's help, as typer prints it, without typer
        from blackbox.cli.helpview import show

        return 0 if show(args[0]) else None
    if not args or args[0] not in ("verify", "assert", "diff", "inspect", "list"):
        return None
    if args[0] == "inspect":
        return _inspect(args[1:])
    if args[0] == "list":
        return _list(args[1:])
    rest = list(args[1:])
    flags = {flag: args[0] == "diff" and flag in rest for flag in ("--semantic", "--exit-code")}
    for flag, given in flags.items():
        if given:
            rest.remove(flag)
    allowed = set(_VALUE_OPTIONS) - {"--step"} if args[0] == "assert" else {"--format"}
    parsed = _parse(rest, allowed, 2 if args[0] == "diff" else 1)
    if parsed is None:
        return None
    paths, values, json_out = parsed
    fmt = _format(values, json_out)
    if fmt is None:
        return None
    # Deferred so that `--help` and `--version` do not load the cassette core.
    from blackbox.cli import reports

    if args[0] == "diff":
        return reports.run_diff(Path(paths[0]), Path(paths[1]), flags["--semantic"], fmt, flags["--exit-code"])
    if args[0] == "verify":
        return reports.run_verify(Path(paths[0]), fmt)
    expected = reports.expectations(values.get("tools"), values.get("status"), values.get("final_answer"),
                                    values.get("failure_reason"))
    if expected is None:
        return EXIT_USAGE
    return reports.run_assert(Path(paths[0]), expected, fmt)
