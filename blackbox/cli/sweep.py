"""`blackbox sweep`: many what-ifs (or agent forks) from one fork point, each run K times, judged by the
`assert` checks, reported as pass rates with Wilson intervals against the run's own flap rate.

The folder model is `blackbox.many.folder`, the plan `many.plan`, the running `many.running`, the report
`many.report`; this module reads the options, checks the input (one line, exit 2), starts or resumes the sweep
and prints the report.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from blackbox.cli._app import app
from blackbox.cli.cassettes import FormatOption, JsonOption, _format
from blackbox.cli.intact import load_intact
from blackbox.cli.jsonout import print_json
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, err_console, fail
from blackbox.cli.reports import table
from blackbox.cli.run import Command
from blackbox.cli.term import colour
from blackbox.errors import BlackboxError, CassetteError, UsageError
from blackbox.fork.plan import check_fork_point, load_script, parse_set_value
from blackbox.fork.whatif import choose_provider, key_problem
from blackbox.format.expectations import Expectations
from blackbox.format.inert import inert
from blackbox.format.writing import atomic_write
from blackbox.live.made import made_now
from blackbox.many.folder import MANIFEST, PARENT, Mode, Settings, Sweep, is_sweep_folder, read_sweep, write_sweep
from blackbox.many.plan import differs, plan
from blackbox.many.report import markdown, report_json, text_rows
from blackbox.many.running import pending, run_sweep

if TYPE_CHECKING:
    from blackbox.cli.progress import Bar

__all__ = ["sweep_command"]

PANEL_EXPECT = "Checks (as blackbox assert)"
PANEL_RUN = "Continuation"
EXIT_INTERRUPTED = 130


@app.command("sweep", rich_help_panel="Run an agent")
def sweep_command(
    cassette: Annotated[Path | None, typer.Argument(help="The parent cassette.", dir_okay=False)] = None,
    command: Command = None,
    at: Annotated[int | None, typer.Option("--at", help="The tool_result step to fork at.")] = None,
    sets: Annotated[list[str] | None, typer.Option(
        "--set", help="A variant's tool result: JSON or @file; repeat for more variants.")] = None,
    models: Annotated[str | None, typer.Option(
        "--model", help="Ask these models instead of the recorded one, comma-separated (each × each --set).",
        rich_help_panel=PANEL_RUN)] = None,
    repeat: Annotated[int, typer.Option("--repeat", help="Runs per variant.", min=1)] = 1,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="The sweep's folder (an existing one resumes).",
                                             file_okay=False)] = None,
    live: Annotated[bool, typer.Option("--live", help="Continue against the provider's API.",
                                       rich_help_panel=PANEL_RUN)] = False,
    script: Annotated[Path | None, typer.Option("--script", help="Continue from a JSON array of model replies "
                                                "(deterministic).", dir_okay=False, rich_help_panel=PANEL_RUN)]
    = None,
    provider: Annotated[str | None, typer.Option("--provider", help="--live: the API (default: the recorded one).",
                                                 rich_help_panel=PANEL_RUN)] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Branches run at once.", min=1, max=256,
                                             rich_help_panel=PANEL_RUN)] = 8,
    seed: Annotated[int, typer.Option("--seed", help="The sweep's seed; each branch's is derived from it.",
                                      rich_help_panel=PANEL_RUN)] = 0,
    no_baseline: Annotated[bool, typer.Option("--no-baseline", help="Skip the baseline (no edit) variant.",
                                              rich_help_panel=PANEL_RUN)] = False,
    expect_status: Annotated[str | None, typer.Option(
        "--expect-status", help="success, error or incomplete (default without checks: success).",
        rich_help_panel=PANEL_EXPECT)] = None,
    expect_final_answer: Annotated[str | None, typer.Option(
        "--expect-final-answer", help="The exact final answer.", rich_help_panel=PANEL_EXPECT)] = None,
    expect_tools: Annotated[str | None, typer.Option(
        "--expect-tools", help='Tool names in call order, comma-separated ("" = no tools).',
        rich_help_panel=PANEL_EXPECT)] = None,
    expect_failure_reason: Annotated[str | None, typer.Option(
        "--expect-failure-reason", help="The exact failure reason.", rich_help_panel=PANEL_EXPECT)] = None,
    price_input: Annotated[float | None, typer.Option(
        "--price-input", help="Price per million input tokens, for the cost column.", min=0.0)] = None,
    price_output: Annotated[float | None, typer.Option(
        "--price-output", help="Price per million output tokens.", min=0.0)] = None,
    json_out: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """Fork a run many times at one tool result: pass rates per variant, against the run's own flap rate.

    Each variant (each --set × each --model, and the baseline: no edit) continues --repeat times.

    The recorded prefix is copied, never asked again; each branch is a fork cassette in OUT/branches/.

    Each branch is judged by the checks of blackbox assert (none given: it must succeed).

    A variant whose 95% interval overlaps the baseline's is nondeterminism, not a regression.

    The same command on an existing OUT resumes it; finished branches are kept.

    [b]Examples[/b]:

      blackbox sweep run.json --at 5 --set @hot.json --set @cold.json --repeat 20 --live --out sweep/

      blackbox sweep run.json --at 5 --repeat 30 --live --out flaps/ --expect-tools search,book

      blackbox sweep run.json --at 5 --set '"none"' --repeat 5 --out s/ --live -- python agent.py
    """
    output = _format(json_out, fmt)
    expect = _expectations(expect_status, expect_final_answer, expect_tools, expect_failure_reason)
    if cassette is None or at is None or out is None:
        fail("sweep needs a cassette, --at N and --out DIR", EXIT_USAGE)
    if live == (script is not None):
        fail("choose one continuation: --live (the provider's API) or --script replies.json", EXIT_USAGE)
    prices = {k: v for k, v in (("input", price_input), ("output", price_output)) if v is not None}
    asked_models = [m.strip() for m in (models or "").split(",") if m.strip()]
    sweep, parent, replies = _planned(cassette, at, sets or [], asked_models, repeat, out, script, provider,
                                      list(command or []), expect, prices, concurrency, seed, not no_baseline)
    folder = _started(out, sweep, cassette)
    total = len(sweep.branches)
    try:
        with _bar(output, f"sweep {out}") as bar, _client(sweep) as client:
            run_sweep(folder, sweep, parent, script=replies, client=client,
                      on_progress=bar, on_wait=None if bar is None else bar.say)
    except KeyboardInterrupt:
        done = total - len(pending(sweep))
        err_console().print(f"interrupted: {done} of {total} branches finished and kept in {inert(str(out))}; "
                            "run the same command to resume", markup=False, highlight=False)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _print(sweep, str(out), output)
    raise typer.Exit(EXIT_FAILURE if any(b.verdict == "error" for b in sweep.branches) else 0)


def _expectations(status: str | None, final_answer: str | None, tools: str | None,
                  reason: str | None) -> dict[str, str]:
    given = {"expect-status": status, "expect-final-answer": final_answer, "expect-tools": tools,
             "expect-failure-reason": reason}
    try:
        Expectations.from_tool_list(tools, status=status, final_answer=final_answer, failure_reason=reason)
    except ValueError:
        fail(f"--expect-status must be success, error or incomplete, not {inert(str(status))}; pick one of those",
             EXIT_USAGE)
    return {k: v for k, v in given.items() if v is not None}


def _planned(cassette: Path, at: int, sets: list[str], models: list[str], repeat: int, out: Path,
             script: Path | None, provider: str | None, command: list[str], expect: dict[str, str],
             prices: dict[str, float], concurrency: int, seed: int,
             baseline: bool) -> tuple[Sweep, Any, list[dict[str, Any]] | None]:
    """The sweep asked for, the parent and the scripted replies; one line and exit 2 for bad input."""
    if out.exists() and not out.is_dir():
        fail(f"--out {out} is a file; name a folder for the sweep (new, or one to resume)", EXIT_USAGE)
    if not sets and not baseline:
        fail("nothing to run: --no-baseline needs at least one --set", EXIT_USAGE)
    try:
        parent = load_intact(cassette, "fork")
        check_fork_point(parent, at)
        values = [(text, parse_set_value(text)) for text in sets]
        replies = load_script(script) if script is not None else None
        if script is None and not command:
            for model in models:
                choose_provider(parent, provider, model)
            problem = key_problem(provider or choose_provider(parent, provider).name)
            if problem is not None:
                raise UsageError(problem)
    except (UsageError, CassetteError) as exc:
        fail(str(exc), EXIT_USAGE)
    mode: Mode = "agent" if command else "script" if script is not None else "live"
    settings = Settings(
        at=at, repeat=repeat, mode=mode, parentId=parent.id, source=str(cassette), concurrency=concurrency,
        provider=provider, script=str(script) if script is not None else None, command=command, expect=expect,
        prices=prices, seed=seed, models=models, parentHash=parent.steps[-1].hash if parent.steps else None,
        scriptHash=hashlib.sha256(script.read_bytes()).hexdigest() if script is not None else None)
    return plan(settings, values, baseline), parent, replies


def _started(out: Path, sweep: Sweep, cassette: Path) -> Path:
    """A new folder set up (the parent copied, the manifest written), or the sweep it holds, if the same."""
    if is_sweep_folder(out):
        try:
            held = read_sweep(out)
        except CassetteError as exc:
            fail(str(exc), EXIT_USAGE)
        why = differs(held, sweep)
        if why is not None:
            fail(f"{out} holds a different sweep ({why}); run its own command to resume it, or choose a new "
                 "--out", EXIT_USAGE)
        sweep.branches, sweep.made = held.branches, held.made  # the finished ones are kept
        return out
    if out.is_dir() and any(out.iterdir()):
        fail(f"--out {out} is a folder that holds no sweep ({MANIFEST}) but other files; choose a new or empty "
             "folder", EXIT_USAGE)
    try:
        (out / "branches").mkdir(parents=True, exist_ok=True)
        atomic_write(out / PARENT, cassette.read_bytes())
        sweep.made = made_now()
        write_sweep(out, sweep)
    except (OSError, BlackboxError) as exc:
        fail(f"cannot set up the sweep in {out}: {getattr(exc, 'strerror', None) or exc}; choose another --out")
    return out


@contextlib.contextmanager
def _bar(output: str, label: str) -> Iterator[Bar | None]:
    if output != "text" or not colour(sys.stderr):
        yield None
        return
    from blackbox.cli.progress import progress

    with progress(label) as bar:
        yield bar


@contextlib.contextmanager
def _client(sweep: Sweep) -> Iterator[Any]:
    """A pooled HTTP client for a live sweep (one connection per concurrent branch), closed at the end."""
    if sweep.settings.mode != "live":
        yield None
        return
    from blackbox.fork.client import pooled_client

    with pooled_client(max(8, sweep.settings.concurrency)) as client:
        yield client


def _print(sweep: Sweep, folder: str, output: str) -> None:
    if output == "json":
        print_json(report_json(sweep, folder))
        return
    if output == "markdown":
        sys.stdout.write(markdown(sweep, folder))
        return
    headers, cells = text_rows(sweep)
    lines = [f"sweep of {inert(sweep.settings.source)} at step {sweep.settings.at}: {len(sweep.variants)} variants "
             f"× {sweep.settings.repeat} runs ({sweep.settings.mode}), branches in {inert(folder)}/branches",
             table(headers, cells, colour())]
    errors = [b for b in sweep.branches if b.verdict == "error"]
    if errors:
        lines.append(f"{len(errors)} branch(es) could not run (the first: {inert(errors[0].error or '')}); run "
                     "the same command to try them again")
    sys.stdout.write("\n".join(lines) + "\n")

