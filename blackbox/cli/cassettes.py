"""Commands that read cassettes: verify, assert, diff, inspect, list; and the replay summary.

Heavy work reports progress on a terminal (rich, transient) and never in `--json` output.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.markup import escape
from rich.table import Table

from blackbox.cassette import Cassette, chain_break, escape_surrogates, load, pretty_json
from blackbox.cli.app import app
from blackbox.cli.render import EXIT_FAILURE, console, err_console, fail
from blackbox.errors import CassetteError
from blackbox.expectations import Expectations, check_expectations
from blackbox.inert import inert
from blackbox.outcome import outcome, summarize_step
from blackbox.secrets import mask_secrets
from blackbox.verify import HASH_FORMAT, VerifyReport, expect_hash, verify

__all__ = ["replay_summary"]

PANEL_OUTPUT = "Output"
PANEL_EXPECT = "Expectations"
BIG_FILE = 8_000_000  # bytes: above this, verify shows progress on a terminal
MARKS = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "skip": "[dim]skip[/]"}

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines (no colour, no decoration).",
                                          rich_help_panel=PANEL_OUTPUT)]


def _print_json(value: Any) -> None:
    """One JSON document; keys masked wherever they appear (an id too), lone surrogates as escapes."""
    sys.stdout.write(mask_secrets(escape_surrogates(json.dumps(value, indent=2, ensure_ascii=False))) + "\n")


def _shown(text: str) -> str:
    """Text from a cassette (or a path) for rich markup: keys masked, controls and surrogates made inert."""
    return escape(inert(mask_secrets(text)))


def _created(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return str(ms)


@contextmanager
def _progress(label: str, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A transient progress bar on a terminal; `None` (no reporting) otherwise."""
    out = err_console()
    if not enabled or not out.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=out,
                  transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _load(path: Path) -> Cassette:
    try:
        return load(path)
    except CassetteError as exc:
        fail(mask_secrets(str(exc)))


def _show_progress(path: Path, json_out: bool) -> bool:
    try:
        return not json_out and path.is_file() and path.stat().st_size > BIG_FILE
    except OSError:  # a name too long, a loop of links: loading it says so in one line
        return False


def _verify_path(path: Path, json_out: bool) -> VerifyReport:
    """Verify the file by its path: verify owns what it loads and frees each payload once it is checked."""
    with _progress(f"verifying {path.name}", _show_progress(path, json_out)) as update:
        try:
            return verify(path, on_step=update)
        except CassetteError as exc:
            fail(mask_secrets(str(exc)))


def _load_and_verify(path: Path, json_out: bool) -> tuple[VerifyReport, Cassette]:
    """Load the file once and verify what was loaded, for commands that go on to read the run."""
    with _progress(f"verifying {path.name}", _show_progress(path, json_out)) as update:
        cassette = _load(path)
        report = verify(cassette, on_step=update)
    return msgspec.structs.replace(report, path=str(path)), cassette


def _check_table(rows: Sequence[tuple[str, str, int | None, str]]) -> Table:
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    for column in ("check", "result", "step", "detail"):
        table.add_column(column)
    for name, status, step, detail in rows:
        table.add_row(name, MARKS[status], "" if step is None else str(step), escape(detail))
    return table


def _print_verify(report: VerifyReport) -> None:
    out = console()
    out.print(f"[bold]{_shown(report.path or report.id or '')}[/] — id {_shown(report.id or '?')}, "
              f"{report.steps} step(s)")
    out.print(_check_table([(c.name, c.status, c.step, c.detail) for c in report.checks]))
    out.print(f"final hash: {report.final_hash}" if report.final_hash else
              "final hash: none (" + ("no steps" if report.steps == 0 else "the chain does not hold") + ")")
    failure = report.failure
    if failure is None:
        out.print("[green]verified[/]: all checks pass")
        return
    where = f"step {failure.step}" if failure.step is not None else "the cassette"
    out.print(f"\n[bold red]verify failed[/]: {failure.name} at {where}\n  what: {escape(failure.detail)}\n"
              f"  do:   {escape(report.advice)}")


@app.command("verify", rich_help_panel="Cassettes")
def verify_command(
    cassette: Annotated[Path, typer.Argument(help="The cassette file to check.", show_default=False)],
    json_out: JsonOption = False,
    expected_hash: Annotated[str | None, typer.Option(
        "--expect-hash", metavar="HASH", help="Also require this final hash (the last step's, printed by "
        "verify): pins the cassette, since an edited chain can be re-hashed.")] = None,
) -> None:
    """Check a cassette: schema version, hash chain, provider neutrality, replayability; print its final hash.

    The first failing check stops the rest. Exit 0 when all pass, 1 otherwise. What verify does not cover
    (step ids, the top-level fields, truncation at a step boundary) is listed in SECURITY.md.

    [bold]Examples[/]
      blackbox verify traces/run.json
      blackbox verify traces/run.json --json | jq .failure
      blackbox verify traces/run.json --expect-hash 29f766634dff…  (all 64 hex digits)
    """
    if expected_hash is not None and not HASH_FORMAT.fullmatch(expected_hash.lower()):
        fail("--expect-hash must be the 64 hex digits of a final hash, as `blackbox verify` prints it", code=2)
    report = _verify_path(cassette, json_out)
    if expected_hash is not None:
        report = expect_hash(report, expected_hash)
    if json_out:
        _print_json(report.to_dict())
    else:
        _print_verify(report)
    raise typer.Exit(0 if report.ok else EXIT_FAILURE)


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
) -> None:
    """Verify a cassette, then check what the run did. For CI: exit 1 on any failure.

    Every expectation is an exact match; when verify fails, the expectations are skipped.

    [bold]Examples[/]
      blackbox assert traces/run.json --expect-status success --expect-tools search,calendar,booking
      blackbox assert traces/err.json --expect-status error --expect-failure-reason unknown_tool
      blackbox assert traces/run.json --expect-tools ""
    """
    try:
        expected = Expectations.from_tool_list(expect_tools, status=expect_status,
                                               final_answer=expect_final_answer,
                                               failure_reason=expect_failure_reason)
    except ValueError:
        fail(f"--expect-status must be success, error or incomplete, not {expect_status!r}; pick one of those",
             code=2)
    report, loaded = _load_and_verify(cassette, json_out)
    rows = [(c.name, c.status, c.step, c.detail) for c in report.checks]
    results = [msgspec.structs.asdict(r) for r in
               check_expectations(expected, outcome(loaded) if report.ok else None)]
    ok = report.ok and all(r["status"] == "pass" for r in results)
    if json_out:
        _print_json({"ok": ok, "verify": report.to_dict(), "expectations": results})
        raise typer.Exit(0 if ok else EXIT_FAILURE)
    out = console()
    for r in results:
        detail = f"expected {json.dumps(r['expected'], ensure_ascii=False)}"
        if r["status"] == "fail":
            detail += f", found {json.dumps(r['found'], ensure_ascii=False)}"
        rows.append((f"expect {r['name']}", r["status"], None, mask_secrets(detail)))
    out.print(f"[bold]{_shown(str(cassette))}[/] — id {_shown(report.id or '?')}, {report.steps} step(s)")
    out.print(_check_table(rows))
    if ok:
        out.print("[green]all assertions pass[/]")
    elif not report.ok:
        failure = report.failure
        assert failure is not None
        out.print(f"\n[bold red]assert failed[/]: verify check {failure.name} failed "
                  f"({escape(failure.detail)}); expectations skipped\n  do: {escape(report.advice)}")
    else:
        failed = [r for r in results if r["status"] == "fail"]
        for r in failed:
            out.print(f"\n[bold red]assert failed[/]: {r['name']}\n"
                      f"  expected: {escape(mask_secrets(json.dumps(r['expected'], ensure_ascii=False)))}\n"
                      f"  found:    {escape(mask_secrets(json.dumps(r['found'], ensure_ascii=False)))}")
        out.print("  do: if the new behaviour is right, update the expectation; otherwise fix the agent and "
                  "re-record")
    raise typer.Exit(0 if ok else EXIT_FAILURE)


def _short(h: str | None) -> str:
    return (h or "")[:12]


@app.command("diff", rich_help_panel="Cassettes")
def diff_command(
    a: Annotated[Path, typer.Argument(help="The first cassette (e.g. the parent).", show_default=False)],
    b: Annotated[Path, typer.Argument(help="The second cassette (e.g. the fork).", show_default=False)],
    semantic: Annotated[bool, typer.Option(
        "--semantic", help="Match steps by type and JSON-equal payload instead of hash (two separate "
        "recordings).")] = False,
    json_out: JsonOption = False,
) -> None:
    """Show where two runs diverge, what changed there, and what it did to the outcome.

    Exit 0 whether or not they diverge; 1 if either cassette fails to load or its chain is broken.

    [bold]Examples[/]
      blackbox diff traces/parent.json traces/fork.json
      blackbox diff before.json after.json --semantic
      blackbox diff a.json b.json --json
    """
    from blackbox.diff import diff

    ca, cb = _load(a), _load(b)
    for path, c in ((a, ca), (b, cb)):
        broken = chain_break(c)
        if broken is not None:
            fail(f"{path}: hash chain broken at step {broken.index}: {broken.reason}; run blackbox verify on it")
    report = diff(ca, cb, semantic=semantic)
    if json_out:
        _print_json(msgspec.to_builtins(report.to_dict()))
        return
    out = console()
    out.print(f"[bold]A[/] {_shown(ca.id)} ({len(ca.steps)} steps)   [bold]B[/] {_shown(cb.id)} "
              f"({len(cb.steps)} steps)   compared by {'payload' if semantic else 'hash'}")
    out.print(f"shared prefix: {report.shared_prefix} step(s)")
    if report.first_divergence is None:
        out.print("[green]no divergence[/]: the runs are identical step by step")
    else:
        out.print(f"[bold yellow]first divergence at step {report.first_divergence}[/]")
        for name, step in (("A", report.step_a), ("B", report.step_b)):
            if step is None:
                out.print(f"  {name}: (ended after {report.first_divergence} step(s))")
            else:
                out.print(f"  {name}: #{step.index} {step.type}  {_short(step.hash)}  "
                          f"{_shown(summarize_step(step))}")
        if report.changed_value is not None:
            from blackbox.firstdiff import format_value

            cv = report.changed_value
            out.print(f"  changed {cv.key}: {_shown(format_value(cv.old))} → {_shown(format_value(cv.new))}")
        if report.changed_fields:
            from blackbox.firstdiff import format_value

            out.print("  changed fields:")
            for f in report.changed_fields:
                out.print(f"    {_shown(f.path)}: {_shown(format_value(f.old, f.old_present))} → "
                          f"{_shown(format_value(f.new, f.new_present))}")
        if report.a_is_prefix:
            out.print("  A is a strict prefix of B")
        if report.b_is_prefix:
            out.print("  B is a strict prefix of A")
    out.print(f"outcome: A {escape(report.outcome_a.describe())}; B {escape(report.outcome_b.describe())}")
    out.print(f"[bold]verdict[/]: {escape(report.verdict.text)}")


def _print_steps(c: Cassette) -> None:
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("#", "type", "hash", "summary"):
        table.add_column(column)
    for step in c.steps:
        table.add_row(str(step.index), step.type, _short(step.hash), _shown(summarize_step(step)))
    console().print(table)


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
    """
    c = _load(cassette)
    if step is not None and not 0 <= step < len(c.steps):
        has = f"steps 0 to {len(c.steps) - 1}" if c.steps else "no steps"
        fail(f"--step {step} is out of range; this cassette has {has}", code=2)
    if step is not None:
        s = c.steps[step]
        if json_out:
            _print_json(msgspec.to_builtins(s))
            return
        out = console()
        out.print(f"[bold]step {s.index}[/] {s.type} — {_shown(summarize_step(s))}")
        out.print(f"hash:     {s.hash}\nprevHash: {s.prevHash}\ntime:     {_created(s.timestamp)} ({s.timestamp})")
        text = mask_secrets(pretty_json(s.payload))
        if out.is_terminal:
            from rich.syntax import Syntax

            out.print(Syntax(text, "json", word_wrap=True, background_color="default"), soft_wrap=False)
        else:
            out.print(text, markup=False, highlight=False, crop=False)
        return
    o = outcome(c)
    if json_out:
        _print_json({"id": c.id, "version": c.version, "parentId": c.parentId, "forkedFromStepId":
                     c.forkedFromStepId, "createdAt": c.createdAt, "steps": len(c.steps),
                     "outcome": msgspec.to_builtins(o),
                     "rows": [{"index": s.index, "type": s.type, "hash": s.hash,
                               "summary": mask_secrets(summarize_step(s))} for s in c.steps]})
        return
    out = console()
    out.print(f"[bold]{_shown(c.id)}[/]  version {c.version}")
    if c.parentId:
        out.print(f"parent:  {_shown(c.parentId)} (forked from {_shown(c.forkedFromStepId or '?')})")
    out.print(f"created: {_created(c.createdAt)}\nsteps:   {len(c.steps)}\noutcome: {escape(o.describe())}")
    _print_steps(c)


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
        fail(f"{directory}: {what}; pass the folder that holds your cassettes", code=2)
    files = sorted(directory.glob("*.json"))
    entries: list[dict[str, Any]] = []
    with _progress(f"reading {directory}", len(files) > 20 and not json_out) as update:
        for n, path in enumerate(files, 1):
            try:
                c = load(path)
                broken = chain_break(c)
            except CassetteError as exc:
                reason = str(exc).removeprefix(f"{path}: ")
                entries.append({"file": path.name, "valid": False, "reason": mask_secrets(reason)})
            else:
                if broken is not None:
                    entries.append({"file": path.name, "valid": False,
                                    "reason": f"hash chain broken: {broken.reason}"})
                else:
                    entries.append({"file": path.name, "valid": True, "id": c.id, "steps": len(c.steps),
                                    "status": outcome(c).status, "createdAt": c.createdAt,
                                    "parentId": c.parentId})
            if update is not None:
                update(n, len(files))
    valid = sum(1 for e in entries if e["valid"])
    if json_out:
        _print_json({"folder": str(directory), "cassettes": entries, "valid": valid,
                     "invalid": len(entries) - valid})
        return
    out = console()
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("file", "id", "steps", "status", "created", "parent"):
        table.add_column(column, overflow="fold")
    for e in entries:
        if e["valid"]:
            table.add_row(_shown(e["file"]), _shown(e["id"]), str(e["steps"]), e["status"],
                          _created(e["createdAt"]), _shown(e["parentId"] or ""))
    if valid:
        out.print(table)
    for e in entries:
        if not e["valid"]:
            out.print(f"{_shown(e['file'])}: [red]invalid[/]: {_shown(e['reason'])}")
    out.print(f"{len(entries)} file(s): {valid} valid, {len(entries) - valid} invalid")


def replay_summary(path: Path) -> None:
    """`blackbox replay <cassette>` without a command: validate, then print the recorded steps and outcome."""
    report, c = _load_and_verify(path, json_out=False)
    if not report.ok:
        failure = report.failure
        assert failure is not None
        where = f" at step {failure.step}" if failure.step is not None else ""
        fail(f"{path}: {failure.name} failed{where}: {failure.detail}; {report.advice}")
    out = console()
    out.print(f"[bold]{_shown(c.id)}[/] — {len(c.steps)} recorded step(s), valid")
    _print_steps(c)
    out.print(f"outcome: {escape(outcome(c).describe())}")
