"""`blackbox demo` (and `demo fork`) and `blackbox check`: the built-in offline demo, its fork, and the newcomer's
first self-check."""

from __future__ import annotations

import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from blackbox.cli._app import FlagGroup, app
from blackbox.cli.demo_fork import demo_option, run_demo_fork
from blackbox.cli.render import EXIT_FAILURE, console, fail
from blackbox.errors import WriteError
from blackbox.format.inert import inert

_TRY = "Try it offline"


class Scenario(StrEnum):
    success = "success"
    error = "error"
    all = "all"


demo_app = typer.Typer(cls=FlagGroup, rich_markup_mode="rich", context_settings={"help_option_names": ["-h", "--help"]},
                       pretty_exceptions_enable=False)
app.add_typer(demo_app, name="demo", rich_help_panel=_TRY)


@demo_app.callback(invoke_without_command=True)
def demo(
    ctx: typer.Context,
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

    [b]blackbox demo fork[/b] forks it.

    [b]Examples[/b]:

      blackbox demo

      blackbox demo --scenario error --out-dir /tmp/traces

      blackbox demo && blackbox demo fork --trace traces/example-trace.json

      blackbox diff traces/example-trace.json traces/example-run-001-fork.json
    """
    if ctx.invoked_subcommand is not None:
        return  # `blackbox demo fork`: the fork alone
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
    out.print(f"next: blackbox inspect {inert(str(paths[0]))}   ·   blackbox demo fork --trace "
              f"{inert(str(out_dir / 'example-trace.json'))}", markup=False, highlight=False)


@demo_app.command("fork")
def demo_fork_command(
    trace: Annotated[Path | None, demo_option("trace", dir_okay=False)] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Where to write the fork (default "
                                             "traces/<parent id>-fork.json).", dir_okay=False)] = None,
    fork_index: Annotated[int | None, demo_option("fork_index")] = None,
    mutation_step: Annotated[int | None, demo_option("mutation_step")] = None,
    payload_json: Annotated[str | None, demo_option("payload_json")] = None,
    mode: Annotated[str, demo_option("mode")] = "tool-result",
    prompt: Annotated[str | None, demo_option("prompt")] = None,
) -> None:
    """Fork the demo's cassette offline: a tool result (or the prompt) changed, the demo's model goes on.

    The TypeScript Blackbox's `blackbox fork` (which `blackbox fork` with no agent command still runs).

    [b]Examples[/b]:

      blackbox demo fork

      blackbox demo fork --trace traces/example-trace.json --payload-json '{"hotels": []}'

      blackbox demo fork --mode prompt --prompt "Find a hotel in Rome" --out traces/rome.json
    """
    run_demo_fork(trace, out, fork_index, mutation_step, payload_json, mode, prompt)


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
