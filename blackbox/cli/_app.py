"""The `blackbox` typer application; each command group lives in its own module and registers here."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from blackbox import __version__


class _FlagsWithoutType:
    """Help that shows no `<bool>` beside a flag (typer's rich help prints the type of every option, the
    flags' and its own --help's included): a flag takes no value, so there is no type to show."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.get_params(ctx):  # type: ignore[attr-defined]
            if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
                param.metavar = ""
        super().format_help(ctx, formatter)  # type: ignore[misc]


class FlagCommand(_FlagsWithoutType, TyperCommand):
    """Every `blackbox` command (see `_FlagsWithoutType`)."""


class FlagGroup(_FlagsWithoutType, TyperGroup):
    """The `blackbox` application itself (see `_FlagsWithoutType`)."""


def flags_without_type(application: typer.Typer) -> None:
    """Make every registered command that uses typer's own class a `FlagCommand` (once all are registered)."""
    for info in application.registered_commands:
        if info.cls is TyperCommand:
            info.cls = FlagCommand
    for group in application.registered_groups:  # `blackbox demo` and its `demo fork`
        if group.typer_instance is not None:
            flags_without_type(group.typer_instance)


app = typer.Typer(
    cls=FlagGroup,
    name="blackbox",
    help="Record, replay, fork and diff runs of LLM agents. Cassettes are hash-chained JSON files.\n\n"
    "[bold]Examples[/]\n\n"
    "  blackbox check          (the whole loop offline, first thing after installing)\n\n"
    "  blackbox record --out run.json -- python agent.py\n\n"
    "  blackbox replay run.json -- python agent.py\n\n"
    "  blackbox <command> --help",
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"blackbox {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Record, replay, fork and diff runs of LLM agents. Cassettes are hash-chained JSON files."""
