"""The reports of verify, assert and diff as text, Markdown and JSON, and the verify and assert commands.

Light on purpose (no typer, no rich): `blackbox verify` and `blackbox assert` run from here without the
command-line framework when their arguments are simple (see `blackbox.cli.fast`), so a CI job that checks
many small cassettes pays a bare interpreter's start-up, not the framework's.  Every string that comes from
a cassette or a path goes through `inert()` before it is printed.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from blackbox.cli.jsonout import print_json
from blackbox.cli.printed import printed_text, text_printer
from blackbox.cli.term import EXIT_FAILURE, EXIT_USAGE, colour, error_line, paint
from blackbox.errors import CassetteError
from blackbox.format.canonical import nesting_headroom
from blackbox.format.cassette import Cassette, load
from blackbox.format.diff import DiffReport, diff_lazy, lazy_chain_breaks
from blackbox.format.expectations import ExpectationResult, Expectations, check_expectations
from blackbox.format.firstdiff import format_value
from blackbox.format.inert import inert
from blackbox.format.lazy import LazyCassette, load_lazy
from blackbox.format.outcome import outcome, summarize_step
from blackbox.format.secrets import mask_secrets, masker
from blackbox.format.verify import VerifyReport, expect_hash, unloadable_report, verify

__all__ = [
    "FORMATS",
    "Format",
    "assert_markdown",
    "assert_text",
    "diff_markdown",
    "diff_text",
    "md",
    "md_code",
    "missing_file",
    "run_assert",
    "run_diff",
    "run_verify",
    "shown",
    "table",
    "verify_markdown",
    "verify_text",
]

Format = Literal["text", "markdown", "json"]
FORMATS: tuple[Format, ...] = ("text", "markdown", "json")
BIG_FILE = 8_000_000  # bytes: above this, verify shows progress on a terminal

_MARK_STYLE = {"pass": "green", "fail": "bold red", "skip": "dim"}
_MARK_TEXT = {"pass": "pass", "fail": "FAIL", "skip": "skip"}
_MD_MARK = {"pass": "✅ pass", "fail": "❌ FAIL", "skip": "⏭️ skip"}

Row = tuple[str, str, int | None, str]  # check, status, step, detail


def shown(text: str) -> str:
    """Cassette or path text as printed: the redaction policy in force applied, secrets masked, then inert."""
    return inert(mask_secrets(printed_text(text)))


def shower() -> Callable[[str], str]:
    """`shown` with the policy and the key values looked up once, for a line per step of a long cassette."""
    policy, mask = text_printer(), masker()
    return lambda text: inert(mask(policy(text)))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], on: bool,
          styles: Sequence[Callable[[str], str]] | None = None) -> str:
    """Columns padded to their widest cell, two spaces apart (the last column is not padded)."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    last = len(headers) - 1

    def line(cells: Sequence[str], style: Callable[[int, str], str]) -> str:
        parts = [style(i, c) + ("" if i == last else " " * (widths[i] - len(c))) for i, c in enumerate(cells)]
        return "  ".join(parts).rstrip()

    out = [line(headers, lambda i, c: paint(c, "bold", on))]
    for row in rows:
        out.append(line(row, lambda i, c: styles[i](c) if styles is not None else c))
    return "\n".join(out)


def _check_rows(rows: Sequence[Row], on: bool) -> str:
    cells = [(name, _MARK_TEXT[status], "" if step is None else str(step), detail)
             for name, status, step, detail in rows]
    marks = {text: paint(text, _MARK_STYLE[status], on) for status, text in _MARK_TEXT.items()}
    styles: list[Callable[[str], str]] = [str, lambda c: marks.get(c, c), str, str]
    return table(("check", "result", "step", "detail"), cells, on, styles)


def _verify_rows(report: VerifyReport) -> list[Row]:
    return [(c.name, c.status, c.step, shown(c.detail)) for c in report.checks]


def _heading(path: str | None, report: VerifyReport) -> str:
    return f"{shown(path or report.id or '')} — id {shown(report.id or '?')}, {report.steps} step(s)"


# ---------------------------------------------------------------------------------------------------------
# Text


def verify_text(report: VerifyReport, on: bool = False) -> str:
    lines = [paint(_heading(report.path, report), "bold", on), _check_rows(_verify_rows(report), on),
             _final_hash_line(report), *redaction_lines(report.redacted, report.rewritten_from)]
    failure = report.failure
    if failure is None:
        lines.append(f"{paint('verified', 'green', on)}: all checks pass")
    else:
        where = f"step {failure.step}" if failure.step is not None else "the cassette"
        lines.append(f"\n{paint('verify failed', 'bold red', on)}: {failure.name} at {where}\n"
                     f"  what: {shown(failure.detail)}\n  do:   {report.advice}")
    return "\n".join(lines)


def redaction_lines(redacted: dict[str, int] | None, link: dict[str, Any] | None) -> list[str]:
    """What a redaction policy left, for people: the count per rule (never a value) and the rewrite link."""
    lines = []
    if redacted:
        lines.append("redacted: " + ", ".join(f"{rule} {n}" for rule, n in redacted.items()))
    if link is not None:
        head = f", final hash {str(link['finalHash'])[:12]}…" if link.get("finalHash") else ""
        lines.append(f"rewritten by blackbox redact from {shown(str(link['id']))} ({link['steps']} step(s){head})")
    return lines


def _value(value: str | None) -> str:
    """An expected or found value as the reports show it: JSON text (a string in quotes), inert."""
    return shown(json.dumps(value, ensure_ascii=False))


def _expectation_rows(results: Sequence[ExpectationResult]) -> list[Row]:
    rows: list[Row] = []
    for r in results:
        detail = f"expected {_value(r.expected)}"
        if r.status == "fail":
            detail += f", found {_value(r.found)}"
        rows.append((f"expect {r.name}", r.status, None, detail))
    return rows


def assert_text(path: str, report: VerifyReport, results: Sequence[ExpectationResult], on: bool = False) -> str:
    rows = _verify_rows(report) + _expectation_rows(results)
    lines = [paint(_heading(path, report), "bold", on), _check_rows(rows, on)]
    failure = report.failure
    if failure is not None:
        lines.append(f"\n{paint('assert failed', 'bold red', on)}: verify check {failure.name} failed "
                     f"({shown(failure.detail)}); expectations skipped\n  do: {report.advice}")
    elif all(r.status == "pass" for r in results):
        lines.append(paint("all assertions pass", "green", on))
    else:
        for r in results:
            if r.status == "fail":
                lines.append(f"\n{paint('assert failed', 'bold red', on)}: {r.name}\n"
                             f"  expected: {_value(r.expected)}\n  found:    {_value(r.found)}")
        lines.append("  do: if the new behaviour is right, update the expectation; otherwise fix the agent and "
                     "re-record")
    return "\n".join(lines)


def _short(h: str | None) -> str:
    return (h or "")[:12]


def _side(name: str, report: DiffReport, a: bool) -> str:
    step = report.step_a if a else report.step_b
    if step is None:
        return f"  {name}: (ended after {report.first_divergence} step(s))"
    return f"  {name}: #{step.index} {step.type}  {_short(step.hash)}  {shown(summarize_step(step))}"


_MODES = {"hash": "hash", "semantic": "payload", "agents": "what each step did (across agents)"}


def diff_text(report: DiffReport, lengths: tuple[int, int], on: bool = False) -> str:
    mode = _MODES[report.mode]
    lines = [f"{paint('A', 'bold', on)} {shown(report.a_id)} ({lengths[0]} steps)   {paint('B', 'bold', on)} "
             f"{shown(report.b_id)} ({lengths[1]} steps)   compared by {mode}",
             f"shared prefix: {report.shared_prefix} step(s)"]
    if report.first_divergence is None:
        lines.append(f"{paint('no divergence', 'green', on)}: the runs are identical step by step")
    else:
        lines.append(paint(f"first divergence at step {report.first_divergence}", "bold yellow", on))
        lines += [_side("A", report, True), _side("B", report, False)]
        note = report.same_payload_note()
        if note is not None:
            lines.append(f"  {note}")
        cv = report.changed_value
        if cv is not None:
            lines.append(f"  changed {cv.key}: {shown(format_value(cv.old))} → {shown(format_value(cv.new))}")
        if report.changed_fields:
            lines.append("  changed fields:")
            for f in report.changed_fields:
                lines.append(f"    {shown(f.path)}: {shown(format_value(f.old, f.old_present))} → "
                             f"{shown(format_value(f.new, f.new_present))}")
        if report.a_is_prefix:
            lines.append("  A is a strict prefix of B")
        if report.b_is_prefix:
            lines.append("  B is a strict prefix of A")
    lines.append(f"outcome: A {shown(report.outcome_a.describe())}; B {shown(report.outcome_b.describe())}")
    lines.append(f"{paint('verdict', 'bold', on)}: {shown(report.verdict.text)}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# Markdown: a compact report for a pull-request comment or a CI job summary.

_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|#~"})


def md(text: str) -> str:
    """Cassette or path text in Markdown: secrets masked, inert, Markdown's special characters escaped."""
    return shown(text).translate(_MD_SPECIAL)


def md_code(text: str) -> str:
    """Cassette text as a Markdown code span (shown as is; pipes escaped for tables): masked, inert."""
    span = shown(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", span)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or span.startswith(" ") or span.endswith(" ") else ""
    return f"{fence}{pad}{span}{pad}{fence}" if span else ""


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers),
            *("| " + " | ".join(cell or " " for cell in row) + " |" for row in rows)]


def _md_checks(rows: Sequence[Row]) -> list[str]:
    return _md_table(("check", "result", "step", "detail"),
                     [(name, _MD_MARK[status], "" if step is None else str(step), detail.translate(_MD_SPECIAL))
                      for name, status, step, detail in rows])


def _final_hash_line(report: VerifyReport) -> str:
    """The hash CI can pin with --expect-hash (an edited chain can be re-hashed; a pinned one cannot)."""
    if report.final_hash:
        return f"final hash: {report.final_hash}"
    return "final hash: none (" + ("no steps" if report.steps == 0 else "the chain does not hold") + ")"


def verify_markdown(report: VerifyReport) -> str:
    failure = report.failure
    verdict = "✅ verified" if failure is None else f"❌ failed: {failure.name}"
    lines = [f"### blackbox verify: {verdict}", "",
             f"{md_code(report.path or report.id or '')} — id {md_code(report.id or '?')}, {report.steps} step(s)",
             "", *_md_checks(_verify_rows(report)), "", md(_final_hash_line(report))]
    if failure is not None:
        where = f"step {failure.step}" if failure.step is not None else "the cassette"
        lines += ["", f"**{failure.name} failed at {where}:** {md(failure.detail)}", "",
                  f"**Do:** {md(report.advice)}"]
    return "\n".join(lines)


def assert_markdown(path: str, report: VerifyReport, results: Sequence[ExpectationResult]) -> str:
    failure = report.failure
    failed = [r for r in results if r.status == "fail"]
    if failure is not None:
        verdict = f"❌ failed: verify check {failure.name}"
    elif failed:
        verdict = "❌ failed: " + ", ".join(r.name for r in failed)
    else:
        verdict = "✅ all assertions pass"
    lines = [f"### blackbox assert: {verdict}", "",
             f"{md_code(path)} — id {md_code(report.id or '?')}, {report.steps} step(s)", "",
             *_md_checks(_verify_rows(report) + _expectation_rows(results))]
    if failure is not None:
        lines += ["", f"**Verify failed** ({failure.name}): {md(failure.detail)}; expectations skipped.", "",
                  f"**Do:** {md(report.advice)}"]
    elif failed:
        lines += ["", *_md_table(("expectation", "expected", "found"),
                                 [(r.name, md_code(_value(r.expected)), md_code(_value(r.found)))
                                  for r in failed]),
                  "", "**Do:** if the new behaviour is right, update the expectation; otherwise fix the agent "
                  "and re-record."]
    return "\n".join(lines)


def diff_markdown(report: DiffReport, lengths: tuple[int, int]) -> str:
    first = report.first_divergence
    head = "no divergence" if first is None else f"first divergence at step {first}"
    mode = _MODES[report.mode]
    lines = [f"### blackbox diff: {head} — {md(report.verdict.text)}", "",
             f"**A** {md_code(report.a_id)} ({lengths[0]} steps) · **B** {md_code(report.b_id)} ({lengths[1]} steps) · "
             f"compared by {mode} · shared prefix {report.shared_prefix} step(s)"]
    if first is not None:
        rows = []
        for name, step in (("A", report.step_a), ("B", report.step_b)):
            if step is None:
                rows.append((name, "", "", "", f"(ended after {first} step(s))"))
            else:
                rows.append((name, str(step.index), step.type, md_code(_short(step.hash)),
                             md_code(summarize_step(step))))
        lines += ["", *_md_table(("", "step", "type", "hash", "summary"), rows)]
        note = report.same_payload_note()
        if note is not None:
            lines += ["", f"**Same payload:** {md(note)}"]
        cv = report.changed_value
        if cv is not None:
            lines += ["", f"**Changed {cv.key}:** {md_code(format_value(cv.old))} → {md_code(format_value(cv.new))}"]
        if report.changed_fields:
            lines += ["", *_md_table(("field", "A", "B"), [
                (md_code(f.path), md_code(format_value(f.old, f.old_present)),
                 md_code(format_value(f.new, f.new_present)))
                for f in report.changed_fields])]
        if report.a_is_prefix or report.b_is_prefix:
            lines += ["", "A is a strict prefix of B." if report.a_is_prefix else "B is a strict prefix of A."]
    lines += ["", f"**Outcome:** A {md_code(report.outcome_a.describe())}; B {md_code(report.outcome_b.describe())}",
              "",
              f"**Verdict:** {md(report.verdict.text)}"]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# verify and assert


def missing_file(path: Path) -> str | None:
    """Why `path` is not a file to read (one line, with what to do), or None."""
    try:
        if path.is_file():
            return None
        what = "is a directory, not a cassette file" if path.is_dir() else "no such file"
    except OSError as exc:  # a name too long, a loop of links: the system's own words
        return f"{shown(str(path))}: {exc.strerror or type(exc).__name__}; check the path"
    return f"{shown(str(path))}: {what}; pass the path of a cassette (.json)"


def _write(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _progress_wanted(path: Path, fmt: Format) -> bool:
    try:
        return fmt == "text" and colour(sys.stderr) and path.stat().st_size > BIG_FILE
    except OSError:  # loading it says what is wrong, in one line
        return False


def _verify_file(path: Path, fmt: Format) -> VerifyReport:
    if not _progress_wanted(path, fmt):
        return verify(path)
    from blackbox.cli.progress import progress  # rich, only for a big file on a terminal

    with progress(f"verifying {path.name}") as update:
        return verify(path, on_step=update)


def run_verify(path: Path, fmt: Format, expected_hash: str | None = None) -> int:
    """`blackbox verify`: the report in `fmt`; exit 0 when every check passes (and the final hash is
    `expected_hash`, when given), 1 when one fails (a file that is not a cassette fails schema_version), 2 when
    there is no file at `path`."""
    problem = missing_file(path)
    if problem is not None:
        error_line(problem, EXIT_USAGE)
        return EXIT_USAGE
    report = _verify_file(path, fmt)
    if expected_hash is not None:
        report = expect_hash(report, expected_hash)
    if fmt == "json":
        print_json(report.to_dict())
    elif fmt == "markdown":
        _write(verify_markdown(report))
    else:
        _write(verify_text(report, colour()))
    return 0 if report.ok else EXIT_FAILURE


def load_and_verify(path: Path) -> tuple[VerifyReport, Cassette | None]:
    """Load once and verify what was loaded, for commands that go on to read the run; a file that cannot be
    loaded gives the report verify gives it, and no cassette."""
    try:
        cassette = load(path)
    except CassetteError as exc:
        return unloadable_report(str(path), mask_secrets(str(exc))), None
    report = verify(cassette)
    return msgspec.structs.replace(report, path=str(path)), cassette


def expectations(tools: str | None, status: str | None, final_answer: str | None,
                 failure_reason: str | None) -> Expectations | None:
    """The expectations of `blackbox assert`, or None (after the error line) when --expect-status is wrong."""
    try:
        return Expectations.from_tool_list(tools, status=status, final_answer=final_answer,
                                           failure_reason=failure_reason)
    except ValueError:
        error_line(f"--expect-status must be success, error or incomplete, not {_value(status)}; pick one of "
                   "those", EXIT_USAGE)
        return None


def run_assert(path: Path, expected: Expectations, fmt: Format) -> int:
    """`blackbox assert`: verify, then each expectation; exit 0 only when everything passes, 1 when a check
    or an expectation fails, 2 when there is no file at `path`."""
    problem = missing_file(path)
    if problem is not None:
        error_line(problem, EXIT_USAGE)
        return EXIT_USAGE
    report, loaded = load_and_verify(path)
    results = check_expectations(expected, outcome(loaded) if report.ok and loaded is not None else None)
    ok = report.ok and all(r.status == "pass" for r in results)
    if fmt == "json":
        doc: dict[str, Any] = {"ok": ok, "verify": report.to_dict(),
                               "expectations": [msgspec.structs.asdict(r) for r in results]}
        print_json(doc)
    elif fmt == "markdown":
        _write(assert_markdown(str(path), report, results))
    else:
        _write(assert_text(str(path), report, results, colour()))
    return 0 if ok else EXIT_FAILURE


# ---------------------------------------------------------------------------------------------------------
# diff


class _Refused(Exception):
    """A cassette diff cannot compare; the message is the one line to print."""


def _lazy(path: Path, check_utf8: bool) -> LazyCassette:
    problem = missing_file(path)
    if problem is not None:
        raise _Refused(problem)
    try:
        return load_lazy(path, check_utf8=check_utf8)
    except CassetteError as exc:
        raise _Refused(shown(str(exc))) from None


def _diffed(a: Path, b: Path, semantic: bool, agents: bool = False) -> tuple[DiffReport, tuple[int, int]]:
    """Load both lazily, check both chains together, compare; `_Refused` when either cannot be compared."""
    ca, cb = _lazy(a, False), _lazy(b, False)  # the chain check decodes every payload: it checks the UTF-8
    try:
        breaks = lazy_chain_breaks(ca, cb)
    except (UnicodeDecodeError, msgspec.DecodeError):  # a payload that is not UTF-8: the precise error
        _lazy(a, True), _lazy(b, True)
        raise _Refused(f"{shown(str(a))} or {shown(str(b))}: a payload is not valid JSON text; re-record "
                       "it") from None
    for path, broken in zip((a, b), breaks, strict=True):
        if broken is not None:
            raise _Refused(f"{shown(str(path))}: hash chain broken at step {broken.index}: {broken.reason}; "
                           "run blackbox verify on it")
    with nesting_headroom():  # the field changes walk the diverging payloads, which may be deeply nested
        return diff_lazy(ca, cb, semantic=semantic, agents=agents), (len(ca.steps), len(cb.steps))


def run_diff(a: Path, b: Path, semantic: bool, fmt: Format, exit_code: bool = False,
             agents: bool = False) -> int:
    """`blackbox diff`: exit 0 whether or not the runs diverge, unless `exit_code` (`--exit-code`, as in
    `git diff`): then 1 when they diverge, i.e. differ at some step (by hash, or by payload with `semantic`;
    one a strict prefix of the other counts) — an outcome that changed always comes with a divergence.  2 when
    either cannot be compared: no such file, not a cassette, or a broken chain (one error line, no report)."""
    try:
        report, lengths = _diffed(a, b, semantic, agents)
    except _Refused as exc:
        error_line(str(exc), EXIT_USAGE)
        return EXIT_USAGE
    if fmt == "json":
        doc = report.to_dict()
        for side in ("stepA", "stepB"):
            if doc[side] is not None:
                doc[side]["summary"] = mask_secrets(doc[side]["summary"])
        doc["lengths"] = {"a": lengths[0], "b": lengths[1]}
        print_json(doc)
    elif fmt == "markdown":
        _write(diff_markdown(report, lengths))
    else:
        _write(diff_text(report, lengths, colour()))
    return EXIT_FAILURE if exit_code and report.first_divergence is not None else 0
