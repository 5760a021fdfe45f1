"""`blackbox migrate`: should we switch models?  Every recorded run of a folder asked again of a candidate model
(`blackbox.many.migrate`), judged against its recording, with a pass-rate gate for CI and a markdown report for
a pull request (`blackbox.many.migrate_report`)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from blackbox.cli._app import app
from blackbox.cli.jsonout import json_document, print_json
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, console, err_console, fail
from blackbox.cli.term import JSON_OUTPUT
from blackbox.errors import BlackboxError, UsageError
from blackbox.format.inert import inert
from blackbox.format.secrets import mask_secrets
from blackbox.format.writing import atomic_write
from blackbox.many import migrate_report as reports
from blackbox.many.migrate import Attempt, Plan, Skipped, default_out, find_runs, migrate_run, recorded_facts
from blackbox.many.unseen import parse_unseen
from blackbox.providers import PROVIDERS, Provider, by_name, for_model

__all__ = ["migrate_command", "parse_rate"]

REPORT = "report.json"
_NAMES = ", ".join(p.name for p in PROVIDERS)


class Format(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"


@app.command("migrate", rich_help_panel="Run an agent")
def migrate_command(
    folder: Annotated[Path, typer.Argument(help="The folder of recorded runs (cassettes, searched recursively).",
                                           show_default=False)],
    model: Annotated[str, typer.Option("--model", help="The candidate model to ask.", show_default=False)],
    provider: Annotated[str | None, typer.Option(
        "--provider", help=f"The candidate's API ({_NAMES}; default: from the model's name).")] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Ask each run K times; reports each run's "
                                        "stability.")] = 1,
    unseen: Annotated[str, typer.Option(
        "--unseen", help="A tool call the recording never saw: fail (stop; the run is \"changed path\"), "
        "static:TEXT (answer TEXT), or live-readonly:TOOL,… (run those Python functions, module:function or "
        "name=module:function; \"read-only\" is your word, not checked: see README).")] = "fail",
    min_pass: Annotated[str | None, typer.Option(
        "--min-pass", metavar="RATE", help="Exit 1 when the pass rate is below RATE (0.9 or 90%).")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Continuations asked at once (a 429's "
                                             "retry-after pauses them all).")] = 4,
    out: Annotated[Path | None, typer.Option("--out", help="Where the forks and report.json go (default: "
                                             "DIR-migrated-<model>).", file_okay=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    fmt: Annotated[Format | None, typer.Option("--format", help="text (default), markdown (a pull-request "
                                               "comment) or json.", case_sensitive=False)] = None,
) -> None:
    """Ask every recorded run of a folder again with another model, and say what changed.

    Each run's conversation is asked from its first model request, Blackbox playing the agent; each tool call
    is answered with the recorded result for the same tool and arguments (--unseen decides the rest).  Each
    continuation is a verified fork cassette in --out, judged against its run: same, changed path, changed
    outcome (or error).  A continuation passes when it took the same path or came to the same outcome.

    Exit 0, 1 when the pass rate is below --min-pass (or nothing could be asked), 2 on bad input.

    [b]Examples[/b]:

      blackbox migrate traces/ --model gpt-5.1 --min-pass 0.9

      blackbox migrate traces/ --model claude-sonnet-4-5 --repeat 3 --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    JSON_OUTPUT.begin(json_out or fmt == Format.json)
    if json_out and fmt not in (None, Format.json):
        fail(f"--json and --format {fmt.value if fmt else ''} disagree; pass one of them", EXIT_USAGE)
    try:
        rate = parse_rate(min_pass)
        policy = parse_unseen(unseen)
        chosen = _provider(provider, model)
        from blackbox.fork.whatif import LiveModel

        LiveModel(chosen)  # the key and the address, checked before anything is asked
        if not folder.is_dir():
            raise UsageError(f"{inert(str(folder))} is not a folder; give the folder holding the recorded runs")
        target = out if out is not None else default_out(folder, model)
        if target.resolve() == folder.resolve():
            raise UsageError("--out must differ from the folder of runs; the recordings are never overwritten")
        runs, skipped = find_runs(folder, target)
        if not runs:
            raise UsageError(f"no cassettes in {inert(str(folder))} ({len(skipped)} other file(s)); record runs "
                             "there first (blackbox record --out DIR/run.json -- …)")
        target.mkdir(parents=True, exist_ok=True)  # before anything is asked: a folder that cannot be made
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot make --out {inert(str(target))}: {exc.strerror or exc}; choose another --out", EXIT_USAGE)
    plan = Plan(model=model, provider=chosen.name, unseen=policy, source=folder, out=target,
                make_model=lambda: LiveModel(chosen))
    try:
        results = _run_all(plan, runs, repeat, concurrency)
    except KeyboardInterrupt:
        fail(f"interrupted: the forks finished so far are whole in {inert(str(target))}; no report was written")
    report = _report(plan, runs, skipped, results, repeat, rate)
    try:
        atomic_write(target / REPORT, (mask_secrets(json_document(report)) + "\n").encode())
    except (OSError, BlackboxError) as exc:
        fail(f"cannot write {inert(str(target / REPORT))}: {getattr(exc, 'strerror', None) or exc}; choose "
             "another --out")
    _print(report, "json" if json_out else (fmt or Format.text).value)
    raise typer.Exit(_exit_code(report))


def parse_rate(text: str | None) -> float | None:
    """`--min-pass`: a share (0.9) or a percentage (90%), between 0 and 1 (0% and 100%)."""
    if text is None:
        return None
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"--min-pass {inert(text)!r} is not a rate; give a share between 0 and 1 (0.9) or a "
                         "percentage (90%)")
    return value


def _provider(name: str | None, model: str) -> Provider:
    """`--provider`, else the family the model's name belongs to; one line naming the choices otherwise."""
    found = by_name(name) if name else for_model(model)
    if found is None:
        what = f"unknown provider {inert(name)!r}" if name else f"cannot tell the provider from {inert(model)!r}"
        raise UsageError(f"{what}; choose one with --provider ({_NAMES})")
    return found


def _run_all(plan: Plan, runs: list[Path], repeat: int, concurrency: int) -> dict[tuple[int, int], Attempt]:
    """Every (run, repeat) continuation through the bounded pool, with a progress bar on a terminal."""
    from blackbox.cli.progress import progress
    from blackbox.many.pool import run_all

    keys = [(i, k) for i, _ in enumerate(runs) for k in range(repeat)]
    jobs = [lambda i=i, k=k: migrate_run(plan, runs[i], k, repeat) for i, k in keys]
    found: dict[tuple[int, int], Attempt] = {}
    with progress(f"asking {plan.model}") as bar:
        bar(0, len(jobs))

        def done(result: object) -> None:
            index, value, error = result.index, result.value, result.error  # type: ignore[attr-defined]
            i, k = keys[index]
            found[(i, k)] = value if isinstance(value, Attempt) else Attempt(
                repeat=k, verdict="error", passed=False, error=f"{type(error).__name__}: {error}")
            bar(len(found), len(jobs))

        run_all(jobs, concurrency, done, on_wait=bar.say)
    return found


def _report(plan: Plan, runs: list[Path], skipped: list[Skipped], found: dict[tuple[int, int], Attempt],
            repeat: int, rate: float | None) -> reports.Migration:
    from blackbox.live.made import made_now

    results = [reports.RunResult(file=path.relative_to(plan.source).as_posix(), recorded=recorded_facts(path),
                                 attempts=[found[(i, k)] for k in range(repeat)]) for i, path in enumerate(runs)]
    return reports.Migration(model=plan.model, provider=plan.provider, repeat=repeat, unseen=plan.unseen.spec,
                             source=str(plan.source), out=str(plan.out), runs=results, skipped=skipped,
                             summary=reports.summarize(results, rate), made=made_now())


def _print(report: reports.Migration, form: str) -> None:
    if form == "json":
        print_json(report)
    elif form == "markdown":
        sys.stdout.write(reports.markdown(report))
    else:
        from blackbox.cli.reports import table

        head = (f"migration to {inert(report.model)} ({report.provider}) of {inert(report.source)}; forks in "
                f"{inert(report.out)}; unseen calls: {inert(report.unseen)}")
        lines = [head, "", table(reports.HEADERS, reports.rows(report), False), "", *reports.summary_lines(report)]
        console().print("\n".join(lines), markup=False, highlight=False)
    if report.summary.gate == "fail":
        err_console().print(reports.gate_line(report), markup=False, highlight=False)


def _exit_code(report: reports.Migration) -> int:
    s = report.summary
    if s.gate == "fail" or (s.continuations and s.counts.get("error") == s.continuations):
        return EXIT_FAILURE
    return 0
