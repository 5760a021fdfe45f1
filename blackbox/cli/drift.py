"""`blackbox drift DIR --sample N --live`: re-send a seeded sample of recorded runs' model calls and report the
drift in tiers (`blackbox.many.drift`); without `--live`, the sample's ages and what made each run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from blackbox.cli._app import app
from blackbox.cli.cassettes import FormatOption, JsonOption, _format
from blackbox.cli.drift_report import markdown_report, text_report
from blackbox.cli.jsonout import print_json
from blackbox.cli.render import EXIT_USAGE, fail
from blackbox.cli.reports import shown
from blackbox.cli.term import colour
from blackbox.errors import UsageError
from blackbox.format.cassette import Cassette
from blackbox.providers import PROVIDERS, Provider

__all__ = ["drift_command"]

_PROVIDER_NAMES = ", ".join(provider.name for provider in PROVIDERS)


@app.command("drift", rich_help_panel="Cassettes")
def drift_command(
    folder: Annotated[Path, typer.Argument(help="The folder of recorded cassettes.", show_default=False)],
    sample: Annotated[int, typer.Option("--sample", help="How many runs to draw from the folder (all when it "
                                        "holds fewer).", min=1)] = 5,
    live: Annotated[bool, typer.Option("--live", help="Re-send each sampled run's recorded requests to the "
                                       "provider's API (its key from the environment) and compare the answers. "
                                       "Without it: only the runs' ages and what made them.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="The seed of the draw: the same folder, sample and seed "
                                      "draw the same runs.")] = 0,
    provider: Annotated[str | None, typer.Option(
        "--provider", help=f"The API to re-send to ({_PROVIDER_NAMES}; default: the one each run used).")] = None,
    json_out: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """Re-run a sample of recorded runs' model calls live and show what drifted.

    Shape: a field the answer adds is [b]info[/b], one it no longer sends a [b]warning[/b], a new type an [b]error[/b].

    Behaviour (tool calls, argument keys, finish reason, the class of the text) that changed is a warning.

    Each run's age and the model that answers now are shown too.  Exit: 0 none or info, 3 warning, 4 error, 1 a run
    could not be checked, 2 usage.

    [b]Examples[/b]
      blackbox drift tests/cassettes --sample 10 --live
      blackbox drift traces --sample 3 --live --seed 7 --format markdown >> "$GITHUB_STEP_SUMMARY"
      blackbox drift traces --sample 20
    """
    chosen_format = _format(json_out, fmt)
    try:
        if not folder.is_dir():
            what = "is a file, not a folder" if folder.exists() else "no such folder"
            fail(f"{shown(str(folder))}: {what}; pass the folder that holds your cassettes", EXIT_USAGE)
    except OSError as exc:
        fail(f"{shown(str(folder))}: {exc.strerror or type(exc).__name__}; check the path", EXIT_USAGE)
    if provider is not None and not any(p.name == provider for p in PROVIDERS):
        fail(f"unknown provider {shown(provider)}; choose one of {_PROVIDER_NAMES}", EXIT_USAGE)
    report = _run(folder, sample, seed, live, provider, chosen_format == "json")
    if chosen_format == "json":
        print_json(report.to_dict())
    else:
        typer.echo(markdown_report(report) if chosen_format == "markdown" else text_report(report), nl=False)
    raise typer.Exit(report.exit_code)


class _NoKey(Exception):
    """The key (or base URL) of a run's API is not in the environment: a usage mistake, said before any request."""


def _run(folder: Path, sample: int, seed: int, live: bool, provider: str | None, quiet: bool) -> Any:
    from blackbox.fork.whatif import LiveModel, api_key, base_url, choose_provider
    from blackbox.many.drift import drift

    checked: set[str] = set()

    def opener(watched: Provider) -> Any:
        """One live model per run, over its own watched provider (`many.drift`)."""
        return LiveModel(watched)

    def choose(cassette: Cassette) -> Provider:
        found = choose_provider(cassette, provider)
        if found.name not in checked:
            try:
                api_key(found.api)
                base_url(found.api)
            except UsageError as exc:
                raise _NoKey(str(exc)) from None
            checked.add(found.name)
        return found

    try:
        if quiet or not live or not colour(sys.stderr):
            return drift(folder, sample, seed, opener=opener if live else None, choose=choose)
        from blackbox.cli.progress import progress

        with progress(f"re-sending {folder}") as bar:
            return drift(folder, sample, seed, opener=opener, choose=choose, progress=bar)
    except _NoKey as exc:
        fail(str(exc), EXIT_USAGE)
