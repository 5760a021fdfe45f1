"""Commands that read cassettes: verify, assert, diff, inspect, list; and the replay summary.

Every one of them has `--json` (one JSON document on stdout, nothing else; schemas in docs/schemas/);
verify, assert and diff also `--format markdown`.  Heavy work reports progress on a terminal and never in
machine output.  Strings from a cassette are masked and made inert before they are printed.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from blackbox.cli import reports
from blackbox.cli._app import app
from blackbox.cli.inspecting import json_rows, run_inspect, write_rows
from blackbox.cli.jsonout import print_json
from blackbox.cli.listing import DEFAULT_FOLDER, run_list
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, fail
from blackbox.cli.reports import shown
from blackbox.cli.term import JSON_OUTPUT, colour, paint
from blackbox.errors import CassetteError
from blackbox.format.diff import lazy_outcome
from blackbox.format.lazy import LazyCassette, load_lazy
from blackbox.format.secrets import mask_secrets
from blackbox.format.verify import HASH_FORMAT, unloadable_report, verify

__all__ = ["replay_summary"]

PANEL_OUTPUT = "Output"
PANEL_EXPECT = "Expectations"


class OutputFormat(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"


JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document for machines (no colour, no "
                                          "decoration); the same as --format json.", rich_help_panel=PANEL_OUTPUT)]
FormatOption = Annotated[OutputFormat | None, typer.Option(
    "--format", help="text (for people, the default), markdown (a pull-request comment or CI job summary) or "
    "json.", rich_help_panel=PANEL_OUTPUT, case_sensitive=False, show_default=False)]


#: The expectations of `assert`, declared once: `sweep` judges each branch by the same options.
ExpectStatus = Annotated[str | None, typer.Option(
    "--expect-status", help="success, error or incomplete.", rich_help_panel=PANEL_EXPECT)]
ExpectFinalAnswer = Annotated[str | None, typer.Option(
    "--expect-final-answer", help="The exact final answer.", rich_help_panel=PANEL_EXPECT)]
ExpectTools = Annotated[str | None, typer.Option(
    "--expect-tools", help='Tool names in call order, comma-separated ("" = no tools).',
    rich_help_panel=PANEL_EXPECT)]
ExpectFailureReason = Annotated[str | None, typer.Option(
    "--expect-failure-reason", help="The exact failure reason (e.g. unknown_tool).", rich_help_panel=PANEL_EXPECT)]


def _format(json_out: bool, fmt: OutputFormat | None) -> reports.Format:
    """The output format; `--json` with `--format text` or `markdown` is refused (the light path does the
    same), since either choice would ignore one of the two."""
    JSON_OUTPUT.begin(json_out or fmt == OutputFormat.json)
    if json_out and fmt not in (None, OutputFormat.json):
        fail(f"--json and --format {fmt.value} disagree; pass one of them", code=EXIT_USAGE)
    return "json" if json_out else (fmt or OutputFormat.text).value


@app.command("verify", rich_help_panel="Cassettes")
def verify_command(
    cassette: Annotated[Path, typer.Argument(help="The cassette file to check.", show_default=False)],
    json_out: JsonOption = False,
    fmt: FormatOption = None,
    expected_hash: Annotated[str | None, typer.Option(
        "--expect-hash", metavar="HASH", help="Also require this final hash (the last step's, printed by "
        "verify): pins the cassette, since an edited chain can be re-hashed.")] = None,
) -> None:
    """Check a cassette: schema version, hash chain, provider neutrality, replayability; print its final hash.

    The first failing check stops the rest; a file that cannot be loaded fails schema_version. Exit 0 when
    all pass, 1 when one fails, 2 when there is no such file. What verify does not cover (step ids, the
    top-level fields, truncation at a step boundary) is listed in SECURITY.md.

    [bold]Examples[/]
      blackbox verify traces/run.json
      blackbox verify traces/run.json --json | jq .failure
      blackbox verify traces/run.json --format markdown >> "$GITHUB_STEP_SUMMARY"
      blackbox verify traces/run.json --expect-hash 29f766634dff…  (all 64 hex digits)
    """
    if expected_hash is not None and not HASH_FORMAT.fullmatch(expected_hash.lower()):
        fail("--expect-hash must be the 64 hex digits of a final hash, as `blackbox verify` prints it",
             code=EXIT_USAGE)
    raise typer.Exit(reports.run_verify(cassette, _format(json_out, fmt),
                                        None if expected_hash is None else expected_hash.lower()))


@app.command("assert", rich_help_panel="Cassettes")
def assert_command(
    cassette: Annotated[Path, typer.Argument(help="The cassette file to check.", show_default=False)],
    expect_status: ExpectStatus = None,
    expect_final_answer: ExpectFinalAnswer = None,
    expect_tools: ExpectTools = None,
    expect_failure_reason: ExpectFailureReason = None,
    json_out: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """Verify a cassette, then check what the run did. For CI: exit 1 on any failure.

    Every expectation is an exact match; when verify fails, the expectations are skipped. Exit 0 when all
    pass, 1 when a check or an expectation fails, 2 when there is no such file or an option is wrong.

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
    exit_code: Annotated[bool, typer.Option(
        "--exit-code", help="Exit 1 when the runs diverge (as git diff --exit-code), so a CI job fails on it.")]
    = False,
    across_agents: Annotated[bool, typer.Option(
        "--across-agents", help="Match steps by what they did, whichever coding agent took them (two imports of "
        "one task, e.g. Claude Code and Codex; docs/format.md, \"Diff across agents\").")] = False,
    json_out: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """Show where two runs diverge, what changed there, and what it did to the outcome.

    Exit 0 whether or not they diverge (with --exit-code: 0 identical, 1 diverging at some step); 2 if either
    file is missing, fails to load or its chain is broken.

    [bold]Examples[/]
      blackbox diff traces/parent.json traces/fork.json
      blackbox diff before.json after.json --semantic
      blackbox diff claude.json codex.json --across-agents
      blackbox diff a.json b.json --json
      blackbox diff a.json b.json --format markdown
      blackbox diff golden.json new.json --exit-code   (fails the job when they diverge)
    """
    if semantic and across_agents:
        fail("choose one comparison: --semantic (equal payloads) or --across-agents (the same actions)", EXIT_USAGE)
    raise typer.Exit(reports.run_diff(a, b, semantic, _format(json_out, fmt), exit_code, across_agents))


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
    JSON_OUTPUT.begin(json_out)
    raise typer.Exit(run_inspect(cassette, step, json_out))


# ---------------------------------------------------------------------------------------------------------
# list


@app.command("list", rich_help_panel="Cassettes")
def list_command(
    directory: Annotated[Path, typer.Argument(help="The folder to list.")] = DEFAULT_FOLDER,
    json_out: JsonOption = False,
) -> None:
    """List the cassettes in a folder: id, steps, status, created, parent; invalid files with a reason.

    [bold]Examples[/]
      blackbox list
      blackbox list tests/fixtures/traces --json
    """
    JSON_OUTPUT.begin(json_out)
    raise typer.Exit(run_list(directory, json_out))


# ---------------------------------------------------------------------------------------------------------
# replay without a command


def replay_summary(path: Path, json_out: bool = False) -> None:
    """`blackbox replay <cassette>` without a command: validate, then print the recorded steps and outcome.

    With `json_out`, one JSON document: the verify report, the rows and the outcome (exit 1 when the
    cassette does not verify)."""
    problem = reports.missing_file(path)
    if problem is not None:
        fail(problem, EXIT_USAGE)
    c: LazyCassette | None = None
    try:  # read once: verified, then its rows shown
        loaded = load_lazy(path)
    except CassetteError as exc:
        report = unloadable_report(str(path), mask_secrets(str(exc)))
    else:
        c, report = loaded, msgspec.structs.replace(verify(loaded.decoded()), path=str(path))
    if json_out:
        doc: dict[str, Any] = {"ok": report.ok, "verify": report.to_dict()}
        if report.ok and c is not None:
            doc.update(id=c.id, steps=len(c.steps), outcome=lazy_outcome(c), rows=json_rows(c))
        print_json(doc)
        if not report.ok:
            raise typer.Exit(EXIT_FAILURE)
        return
    if not report.ok:
        failure = report.failure
        assert failure is not None
        where = f" at step {failure.step}" if failure.step is not None else ""
        fail(f"{shown(str(path))}: {failure.name} failed{where}: {shown(failure.detail)}; {report.advice}")
    assert c is not None  # it verified
    on = colour()
    sys.stdout.write(f"{paint(shown(c.id), 'bold', on)} — {len(c.steps)} recorded step(s), valid\n")
    write_rows(c)
    sys.stdout.write(f"outcome: {shown(lazy_outcome(c).describe())}\n")
