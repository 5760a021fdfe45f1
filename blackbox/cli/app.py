"""The `blackbox` typer application; each command group lives in its own module and registers here."""

from __future__ import annotations

from typing import Annotated

import typer

from blackbox import __version__

app = typer.Typer(
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
