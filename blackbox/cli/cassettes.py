"""Commands that read cassettes: verify, assert, diff, inspect, list; and the replay summary.

Every one of them has `--json` (one JSON document on stdout, nothing else; schemas in docs/schemas/);
verify, assert and diff also `--format markdown`.  Heavy work reports progress on a terminal and never in
machine output.  Strings from a cassette are masked and made inert before they are printed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from blackbox.cassette import LazyCassette, LazyStep, chain_break, load, load_lazy, pretty_json
from blackbox.cli import reports
from blackbox.cli.app import app
from blackbox.cli.jsonout import print_json
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, console, fail
from blackbox.cli.term import colour, paint
from blackbox.diff import lazy_outcome
from blackbox.errors import CassetteError
from blackbox.inert import inert, inert_lines
from blackbox.outcome import outcome, summarize_step
from blackbox.secrets import mask_secrets

__all__ = ["replay_summary"]

PANEL_OUTPUT = "Output"
PANEL_EXPECT = "Expectations"


class OutputFormat(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"


JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document for machines (no colour, no "
                                          "decoration); the same as --format json.", rich_help_panel=PANEL_OUTPUT)]
FormatOption = Annotated[OutputFormat, typer.Option(
    "--format", help="text (for people), markdown (a pull-request comment or CI job summary) or json.",
    rich_help_panel=PANEL_OUTPUT, case_sensitive=False)]


def _format(json_out: bool, fmt: OutputFormat) -> reports.Format:
    if json_out and fmt not in (OutputFormat.text, OutputFormat.json):
        fail(f"--json and --format {fmt.value} disagree; pass one of them", code=EXIT_USAGE)
    return "json" if json_out else fmt.value


def _show(text: str) -> str:
    return inert(mask_secrets(text))


def _created(ms: float) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def _load_lazy(path: Path, *, check_utf8: bool = True) -> LazyCassette:
    """The cassette with undecoded payloads, or the one-line error."""
    problem = reports.missing_file(path)
    if problem is not None:
        fail(problem)
    try:
        return load_lazy(path, check_utf8=check_utf8)
    except CassetteError as exc:
        fail(_show(str(exc)))


@app.command("verify", rich_help_panel="Cassettes")
def verify_command(
    cassette: Annotated[Path, typer.Argument(help="The cassette file to check.", show_default=False)],
    json_out: JsonOption = False,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Check a cassette: schema version, hash chain, provider neutrality, replayability.

    The first failing check stops the rest; a file that cannot be loaded fails schema_version. Exit 0 when
    all pass, 1 otherwise.

    [bold]Examples[/]
      blackbox verify traces/run.json
      blackbox verify traces/run.json --json | jq .failure
      blackbox verify traces/run.json --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    raise typer.Exit(reports.run_verify(cassette, _format(json_out, fmt)))


@app.command("assert", rich_help_panel="Cassettes")
def assert_command(
    cassette: Annotated[Path, typer.Argument(help="The cassette file to check.", show_default=False)],
    expect_status: Annotated[str | None, typer.Option(
        "--expect-status", help="success, error or incomplete.", rich_help_panel=PANEL_EXPECT)] = None,
    expect_final_answer: Annotated[str | None, typer.Option(
        "--expect-final-answer", help="The exact final answer.", rich_help_panel=PANEL_EXPECT)] = None,
    expect_tools: Annotated[str | None, typer.Option(
        "--expect-tools", help='Tool names in call order, comma-separated ("" = no tools).',
        rich_help_panel=PANEL_EXPECT)] = None,
    expect_failure_reason: Annotated[str | None, typer.Option(
        "--expect-failure-reason", help="The exact failure reason (e.g. unknown_tool).",
        rich_help_panel=PANEL_EXPECT)] = None,
    json_out: JsonOption = False,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Verify a cassette, then check what the run did. For CI: exit 1 on any failure.

    Every expectation is an exact match; when verify fails, the expectations are skipped.

    [bold]Examples[/]
      blackbox assert traces/run.json --expect-status success --expect-tools search,calendar,booking
      blackbox assert traces/err.json --expect-status error --expect-failure-reason unknown_tool
      blackbox assert traces/run.json --expect-tools "" --format markdown
    """
    expected = reports.expectations(expect_tools, expect_status, expect_final_answer, expect_failure_reason)
    if expected is None:
        raise typer.Exit(EXIT_USAGE)
    raise typer.Exit(reports.run_assert(cassette, expected, _format(json_out, fmt)))


@app.command("diff", rich_help_panel="Cassettes")
def diff_command(
    a: Annotated[Path, typer.Argument(help="The first cassette (e.g. the parent).", show_default=False)],
    b: Annotated[Path, typer.Argument(help="The second cassette (e.g. the fork).", show_default=False)],
    semantic: Annotated[bool, typer.Option(
        "--semantic", help="Match steps by type and JSON-equal payload instead of hash (two separate "
        "recordings).")] = False,
    json_out: JsonOption = False,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Show where two runs diverge, what changed there, and what it did to the outcome.

    Exit 0 whether or not they diverge; 1 if either cassette fails to load or its chain is broken.

    [bold]Examples[/]
      blackbox diff traces/parent.json traces/fork.json
      blackbox diff before.json after.json --semantic
      blackbox diff a.json b.json --json
      blackbox diff a.json b.json --format markdown
    """
    raise typer.Exit(reports.run_diff(a, b, semantic, _format(json_out, fmt)))


# ---------------------------------------------------------------------------------------------------------
# inspect: rows are written as they are made, one payload decoded at a time (10,000 steps in well under a
# second); never one big table in memory.


def _rows(steps: Iterable[LazyStep]) -> Iterable[tuple[int, str, str, str]]:
    for lazy in steps:
        step = lazy.decoded()
        yield step.index, step.type, step.hash[:12], _show(summarize_step(step))


def _write_rows(c: LazyCassette) -> None:
    """One line per step (index, type, short hash, summary), aligned, streamed to stdout in blocks."""
    on = colour()
    index_width = max(1, len(str(len(c.steps) - 1)))
    type_width = max([4, *(len(s.type) for s in c.steps)])
    out = sys.stdout
    out.write(paint(f"{'#':<{index_width}}  {'type':<{type_width}}  {'hash':<12}  summary", "bold", on) + "\n")
    block: list[str] = []
    for index, kind, short, summary in _rows(c.steps):
        block.append(f"{index:<{index_width}}  {kind:<{type_width}}  {short:<12}  {summary}\n")
        if len(block) >= 512:
            out.write("".join(block))
            block.clear()
    out.write("".join(block))
    out.flush()


def _json_rows(c: LazyCassette) -> list[dict[str, Any]]:
    return [{"index": d.index, "type": d.type, "hash": d.hash, "summary": mask_secrets(summarize_step(d))}
            for d in (s.decoded() for s in c.steps)]


def _step_json(step: LazyStep) -> dict[str, Any]:
    decoded = step.decoded()
    return {"id": decoded.id, "index": decoded.index, "type": decoded.type, "timestamp": decoded.timestamp,
            "summary": mask_secrets(summarize_step(decoded)), "payload": decoded.payload,
            "prevHash": decoded.prevHash, "hash": decoded.hash}


@app.command("inspect", rich_help_panel="Cassettes")
def inspect_command(
    cassette: Annotated[Path, typer.Argument(help="The cassette file to show.", show_default=False)],
    step: Annotated[int | None, typer.Option("--step", help="Show this one step in full.")] = None,
    json_out: JsonOption = False,
) -> None:
    """Show a cassette: id, parent, created, outcome and one row per step; or one step in full.

    [bold]Examples[/]
      blackbox inspect traces/run.json
      blackbox inspect traces/run.json --step 3
      blackbox inspect traces/run.json --json | jq '.rows[] | select(.type == "tool_result")'
    """
    c = _load_lazy(cassette)
    if step is not None and not 0 <= step < len(c.steps):
        has = f"steps 0 to {len(c.steps) - 1}" if c.steps else "no steps"
        fail(f"--step {step} is out of range; this cassette has {has}", code=EXIT_USAGE)
    if step is not None:
        _inspect_step(c.steps[step], json_out)
        return
    o = lazy_outcome(c)
    if json_out:
        print_json({"id": c.id, "version": c.version, "parentId": c.parentId,
                    "forkedFromStepId": c.forkedFromStepId, "createdAt": c.createdAt, "steps": len(c.steps),
                    "outcome": o,
                    "rows": _json_rows(c)})
        return
    on = colour()
    lines = [f"{paint(_show(c.id), 'bold', on)}  version {c.version}"]
    if c.parentId:
        lines.append(f"parent:  {_show(c.parentId)} (forked from {_show(c.forkedFromStepId or '?')})")
    lines.append(f"created: {_created(c.createdAt)}\nsteps:   {len(c.steps)}\noutcome: {_show(o.describe())}")
    sys.stdout.write("\n".join(lines) + "\n")
    _write_rows(c)


def _inspect_step(lazy: LazyStep, json_out: bool) -> None:
    if json_out:
        print_json(_step_json(lazy))
        return
    s = lazy.decoded()
    on = colour()
    sys.stdout.write(f"{paint(f'step {s.index}', 'bold', on)} {s.type} — {_show(summarize_step(s))}\n"
                     f"hash:     {s.hash}\nprevHash: {s.prevHash}\n"
                     f"time:     {_created(s.timestamp)} ({pretty_json(s.timestamp)})\n")
    text = inert_lines(mask_secrets(pretty_json(s.payload)))
    out = console()
    if out.is_terminal and on:
        from rich.syntax import Syntax

        out.print(Syntax(text, "json", word_wrap=True, background_color="default"), soft_wrap=False)
    else:
        sys.stdout.write(text + "\n")


# ---------------------------------------------------------------------------------------------------------
# list


def _entry(path: Path) -> dict[str, Any]:
    try:
        c = load(path)
        broken = chain_break(c)
    except CassetteError as exc:
        return {"file": path.name, "valid": False, "reason": mask_secrets(str(exc).removeprefix(f"{path}: "))}
    if broken is not None:
        return {"file": path.name, "valid": False, "reason": f"hash chain broken: {broken.reason}"}
    return {"file": path.name, "valid": True, "id": c.id, "steps": len(c.steps), "status": outcome(c).status,
            "createdAt": c.createdAt, "parentId": c.parentId}


@app.command("list", rich_help_panel="Cassettes")
def list_command(
    directory: Annotated[Path, typer.Argument(help="The folder to list.")] = Path("traces"),
    json_out: JsonOption = False,
) -> None:
    """List the cassettes in a folder: id, steps, status, created, parent; invalid files with a reason.

    [bold]Examples[/]
      blackbox list
      blackbox list tests/fixtures/traces --json
    """
    if not directory.is_dir():
        what = "is a file, not a folder" if directory.exists() else "no such folder"
        fail(f"{_show(str(directory))}: {what}; pass the folder that holds your cassettes", code=EXIT_USAGE)
    files = sorted(directory.glob("*.json"))
    if len(files) > 20 and not json_out and colour(sys.stderr):
        from blackbox.cli.progress import progress

        entries = []
        with progress(f"reading {directory}") as update:
            for n, path in enumerate(files, 1):
                entries.append(_entry(path))
                update(n, len(files))
    else:
        entries = [_entry(path) for path in files]
    valid = sum(1 for e in entries if e["valid"])
    if json_out:
        print_json({"folder": str(directory), "cassettes": entries, "valid": valid,
                    "invalid": len(entries) - valid})
        return
    on = colour()
    rows = [(_show(e["file"]), _show(e["id"]), str(e["steps"]), e["status"], _created(e["createdAt"]),
             _show(e["parentId"] or "")) for e in entries if e["valid"]]
    lines = []
    if rows:
        lines.append(reports.table(("file", "id", "steps", "status", "created", "parent"), rows, on))
    for e in entries:
        if not e["valid"]:
            lines.append(f"{_show(e['file'])}: {paint('invalid', 'red', on)}: {_show(e['reason'])}")
    lines.append(f"{len(entries)} file(s): {valid} valid, {len(entries) - valid} invalid")
    sys.stdout.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------------------
# replay without a command


def replay_summary(path: Path, json_out: bool = False) -> None:
    """`blackbox replay <cassette>` without a command: validate, then print the recorded steps and outcome.

    With `json_out`, one JSON document: the verify report, the rows and the outcome (exit 1 when the
    cassette does not verify)."""
    problem = reports.missing_file(path)
    if problem is not None:
        fail(problem)
    report, _ = reports.load_and_verify(path)
    if json_out:
        doc: dict[str, Any] = {"ok": report.ok, "verify": report.to_dict()}
        if report.ok:
            c = load_lazy(path)
            doc.update(id=c.id, steps=len(c.steps), outcome=lazy_outcome(c), rows=_json_rows(c))
        print_json(doc)
        if not report.ok:
            raise typer.Exit(EXIT_FAILURE)
        return
    if not report.ok:
        failure = report.failure
        assert failure is not None
        where = f" at step {failure.step}" if failure.step is not None else ""
        fail(f"{_show(str(path))}: {failure.name} failed{where}: {_show(failure.detail)}; {report.advice}")
    c = load_lazy(path)
    on = colour()
    sys.stdout.write(f"{paint(_show(c.id), 'bold', on)} — {len(c.steps)} recorded step(s), valid\n")
    _write_rows(c)
    sys.stdout.write(f"outcome: {_show(lazy_outcome(c).describe())}\n")
