"""The `blackbox` command line.

`main` first offers the call to the light dispatcher (`blackbox.cli.fast`: the root help, `--version`, simple
verify and assert calls, without importing typer or rich); everything else goes to the typer application.
`app` is built on first use: importing the command modules registers their commands on it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

from blackbox.cli.fast import dispatch
from blackbox.cli.term import JSON_OUTPUT, json_error

if TYPE_CHECKING:
    import typer

__all__ = ["app", "main"]


# The module that registers each command: a call naming one builds only that command's module and command
# (the others' imports and typer's per-parameter set-up are most of a subcommand's `--help` time).
_MODULES = {"demo": "demo", "check": "demo", "record": "run", "replay": "run", "fork": "run", "recover": "run",
            "what-if": "whatif", "sweep": "sweep",
            "verify": "cassettes", "assert": "cassettes", "diff": "cassettes", "inspect": "cassettes",
            "list": "cassettes", "import": "imports", "export": "export", "scan": "redact",
            "redact": "redact", "tui": "tui"}


def _one_command(name: str) -> typer.Typer:
    """The typer application holding only the command `name` (same settings, same root options)."""
    import copy
    import importlib

    importlib.import_module(f"blackbox.cli.{_MODULES[name]}")
    from blackbox.cli._app import app, flags_without_type

    def command_name(info: Any) -> str:
        return str(info.name or info.callback.__name__.lower().replace("_", "-"))

    from typer.models import TyperInfo

    one = copy.copy(app)
    one.registered_commands = [info for info in app.registered_commands if command_name(info) == name]
    one.registered_groups = [info for info in app.registered_groups if info.name == name]  # `demo` (with `demo fork`)
    # No root options: `--version` and shell completion belong to `blackbox` alone (the full app and the light
    # path answer them); parsing them would set up typer's validators for options this call cannot use.
    one.registered_callback = TyperInfo(callback=_bare_root)
    one._add_completion = False
    flags_without_type(one)
    return one


def _bare_root() -> None:
    """Record, replay, fork and diff runs of LLM agents."""


def _application() -> typer.Typer:
    """The typer application with every command registered (import order is the order of the help panels)."""
    from blackbox.cli import demo  # noqa: F401  (try it offline)

    # isort: split
    from blackbox.cli import run  # noqa: F401  (record, replay, fork, recover)

    # isort: split
    from blackbox.cli import whatif  # noqa: F401  (what-if: the fork without the agent)

    # isort: split
    from blackbox.cli import sweep  # noqa: F401  (sweep: many what-ifs, pass rates)

    # isort: split
    from blackbox.cli import cassettes, export, imports, redact, tui  # noqa: F401
    from blackbox.cli._app import app, flags_without_type

    flags_without_type(app)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return _application()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a usage mistake is one `error:` line and exit 2, not click's box."""
    for stream in (sys.stdout, sys.stderr):  # text no terminal encoding can take (a lone surrogate) is shown
        reconfigure = getattr(stream, "reconfigure", None)  # as an escape, never a crash; printers inert() it
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    args = sys.argv[1:] if argv is None else argv
    JSON_OUTPUT.expect(list(args))
    try:
        code = dispatch(args)
        if code is not None:
            sys.exit(code)
        _typer_main(args)
    except BrokenPipeError:  # the reader left (`blackbox inspect run.json | head`): stop quietly, no traceback
        _quiet_stdout()
        sys.exit(1)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's flush at exit meets no closed pipe either."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _typer_main(args: list[str]) -> None:
    import typer

    from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, err_console, plain
    from blackbox.errors import WriteError
    from blackbox.format.inert import inert

    app = _one_command(args[0]) if args and args[0] in _MODULES else _application()
    if plain():  # typer prints help with its own console, which honours NO_COLOR but not CI
        from typer import rich_utils

        rich_utils.COLOR_SYSTEM = None
    # click's ClickException, which typer vendors privately; BadParameter is its public grandchild.
    click_error: type[Exception] = typer.BadParameter.__mro__[2]
    command = typer.main.get_command(app)
    try:
        code = command.main(args=args, prog_name="blackbox", standalone_mode=False)
    except click_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            json_error(f"missing arguments; see `blackbox {inert(args[0])} --help`", EXIT_USAGE)
            err_console().print(exc.format_message(), markup=False, highlight=False)  # type: ignore[attr-defined]
            sys.exit(EXIT_USAGE)
        ctx = getattr(exc, "ctx", None)
        where = f"; see `{ctx.command_path} --help`" if ctx is not None else ""
        message = exc.format_message().rstrip(".")  # type: ignore[attr-defined]
        code = getattr(exc, "exit_code", EXIT_USAGE)
        json_error(f"{inert(message)}{where}", code)
        err_console().print(f"error: {inert(message)}{where}", markup=False, highlight=False)
        sys.exit(code)
    except WriteError as exc:  # a write that failed where the command did not expect it: still one line
        json_error(str(exc), EXIT_FAILURE)
        err_console().print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(EXIT_FAILURE)
    except BrokenPipeError:
        raise  # not a path's fault: `main` ends quietly
    except OSError as exc:  # the system refused a path (a name too long, a loop of links): one line too
        where = f"{inert(str(exc.filename))}: " if exc.filename is not None else ""
        json_error(f"{where}{exc.strerror or type(exc).__name__}; check the path", EXIT_FAILURE)
        err_console().print(f"error: {where}{exc.strerror or type(exc).__name__}; check the path",
                            markup=False, highlight=False)
        sys.exit(EXIT_FAILURE)
    except typer.Abort:
        err_console().print("error: aborted", markup=False, highlight=False)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
