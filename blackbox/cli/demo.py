"""`blackbox demo` and `blackbox check`: the built-in offline demo and the newcomer's first self-check."""

from __future__ import annotations

import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from blackbox.cli._app import app
from blackbox.cli.render import EXIT_FAILURE, console, fail
from blackbox.errors import WriteError
from blackbox.format.inert import inert

_TRY = "Try it offline"


class Scenario(StrEnum):
    success = "success"
    error = "error"
    all = "all"


@app.command(rich_help_panel=_TRY)
def demo(
    scenario: Annotated[
        Scenario, typer.Option("--scenario", help="Which run to record: success, error or all.")
    ] = Scenario.all,
    out_dir: Annotated[
        Path, typer.Option("--out-dir", help="Folder for the cassettes.", file_okay=False)
    ] = Path("traces"),
) -> None:
    """Record the built-in demo agent (a scripted model and three fixture tools) — no API key, no network.

    Writes [b]example-trace.json[/b] (a hotel booking: search → calendar → booking, 15 steps) and
    [b]example-error-trace.json[/b] (the model calls an unknown tool, 5 steps).

    [b]Examples[/b]:

      blackbox demo

      blackbox demo --scenario error --out-dir /tmp/traces

      blackbox demo && blackbox fork --trace traces/example-trace.json

      blackbox diff traces/example-trace.json traces/example-run-001-fork.json
    """
    from blackbox.demo.scenarios import write_scenarios
    from blackbox.format.cassette import chain_break, load
    from blackbox.format.outcome import outcome

    try:
        paths = write_scenarios(out_dir, scenario.value)
    except OSError as exc:
        fail(f"{exc}; choose another --out-dir" if isinstance(exc, WriteError)
             else f"cannot write to {inert(str(out_dir))}: {exc.strerror or exc}; choose another --out-dir")
    out = console()
    for path in paths:
        cassette = load(path)
        verdict = "passed" if chain_break(cassette) is None else "FAILED"
        result = outcome(cassette)
        out.print(f"[bold]{escape(inert(str(path)))}[/]  id {escape(inert(cassette.id))}, {len(cassette.steps)} "
                  f"steps, chain {verdict}")
        out.print(f"  outcome: {result.describe()}; tools: {', '.join(result.tools) or '(none)'}",
                  markup=False, highlight=False)
    out.print(f"next: blackbox inspect {inert(str(paths[0]))}   ·   blackbox fork --trace "
              f"{inert(str(out_dir / 'example-trace.json'))}", markup=False, highlight=False)


@app.command(rich_help_panel=_TRY)
def check(
    out_dir: Annotated[
        Path | None,
        typer.Option("--out-dir", help="Keep the cassettes here (default: a temporary folder, removed).",
                     file_okay=False),
    ] = None,
) -> None:
    """Run the whole loop offline in about a second: record → verify → fork → verify → diff.

    One row per stage and one verdict; exit 1 if any stage fails.  Run it first after installing.

    [b]Examples[/b]:

      blackbox check

      blackbox check --out-dir check-output
    """
    from rich.table import Table

    from blackbox.demo.check import run_check

    if out_dir is None:
        with tempfile.TemporaryDirectory(prefix="blackbox-check-") as tmp:
            report = run_check(Path(tmp))
    else:
        report = run_check(out_dir)
    table = Table(title="blackbox check", title_justify="left")
    table.add_column("stage")
    table.add_column("result")
    table.add_column("detail", overflow="fold")
    styles = {"pass": "green", "FAIL": "bold red", "skip": "dim"}
    for stage in report.stages:
        table.add_row(stage.name, f"[{styles[stage.status]}]{stage.status}[/]", escape(inert(stage.detail)))
    out = console()
    out.print(table)
    if out_dir is not None:
        # Only what a passing stage wrote: a failed stage (read-only folder, full disk) wrote nothing.
        passed = {stage.name for stage in report.stages if stage.status == "pass"}
        kept = [inert(str(path)) for stage, path in (("record", report.parent), ("fork", report.child))
                if stage in passed]
        out.print(f"cassettes kept: {'  '.join(kept)}" if kept else f"no cassette was written to "
                  f"{inert(str(out_dir))}", markup=False, highlight=False)
    out.print(("[bold green]" if report.ok else "[bold red]") + report.verdict.replace("[", r"\[") + "[/]")
    if not report.ok:
        raise typer.Exit(EXIT_FAILURE)
