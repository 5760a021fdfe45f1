"""The `blackbox` command line.  Command modules are imported here so that they register on the app."""

from __future__ import annotations

import sys

import typer

# Each module registers its commands; import order is the order of the help panels.
from blackbox.cli import demo  # noqa: F401  (try it offline)

# isort: split
from blackbox.cli import run  # noqa: F401  (record, replay, fork, recover)

# isort: split
from blackbox.cli import cassettes, imports, tui  # noqa: F401
from blackbox.cli.app import app
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, err_console, plain
from blackbox.errors import WriteError
from blackbox.inert import inert

__all__ = ["app", "main"]

# click's ClickException, which typer vendors privately; BadParameter is its public grandchild.
_CLICK_ERROR: type[Exception] = typer.BadParameter.__mro__[2]


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a usage mistake is one `error:` line and exit 2 (SPEC §12), not click's box."""
    for stream in (sys.stdout, sys.stderr):  # text no terminal encoding can take (a lone surrogate) is shown
        reconfigure = getattr(stream, "reconfigure", None)  # as an escape, never a crash; printers inert() it
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    if plain():  # typer prints help with its own console, which honours NO_COLOR but not CI (SPEC §12)
        from typer import rich_utils

        rich_utils.COLOR_SYSTEM = None
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="blackbox", standalone_mode=False)
    except _CLICK_ERROR as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            err_console().print(exc.format_message(), markup=False, highlight=False)  # type: ignore[attr-defined]
            sys.exit(EXIT_USAGE)
        ctx = getattr(exc, "ctx", None)
        where = f"; see `{ctx.command_path} --help`" if ctx is not None else ""
        message = exc.format_message().rstrip(".")  # type: ignore[attr-defined]
        err_console().print(f"error: {message}{where}", markup=False, highlight=False)
        sys.exit(getattr(exc, "exit_code", EXIT_USAGE))
    except WriteError as exc:  # a write that failed where the command did not expect it: still one line
        err_console().print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(EXIT_FAILURE)
    except OSError as exc:  # the system refused a path (a name too long, a loop of links): one line too
        where = f"{inert(str(exc.filename))}: " if exc.filename is not None else ""
        err_console().print(f"error: {where}{exc.strerror or type(exc).__name__}; check the path",
                            markup=False, highlight=False)
        sys.exit(EXIT_FAILURE)
    except typer.Abort:
        err_console().print("error: aborted", markup=False, highlight=False)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
