"""A migration's report: one document (`--json`, `report.json` in the output folder), read by the terminal
table and the pull-request markdown alike, so none of them disagrees with another.

Counts are per continuation (a run × `--repeat`); a run whose repeats do not all land in one class is
*unstable*, and a run is listed as "outcome changed" when any of its repeats changed the outcome.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

import msgspec

from blackbox.format.inert import inert
from blackbox.format.origin import Made
from blackbox.many.migrate import CLASSES, Attempt, Facts, Skipped

__all__ = ["HEADERS", "PASS_RULE", "Migration", "RunResult", "Summary", "gate_line", "markdown", "rows", "structure",
           "summarize", "summary_lines"]

KIND = "blackbox-migration"
PASS_RULE = ("a continuation passes when it took the same path (no behavioural divergence) or came to the same "
             "outcome (status and answer or failure reason); one stopped at an unseen call under --unseen fail "
             "passes neither")


class RunResult(msgspec.Struct):
    """One recorded run (`file`, relative to the folder): what it did, and each repeat's continuation."""

    file: str
    recorded: Facts | None
    attempts: list[Attempt]

    @property
    def classes(self) -> list[str]:
        return [a.verdict for a in self.attempts]

    @property
    def stable(self) -> bool:
        return len(set(self.classes)) <= 1

    @property
    def worst(self) -> str:
        return max(self.classes, key=lambda c: CLASSES.index(c)) if self.attempts else "error"


class Summary(msgspec.Struct):
    runs: int
    continuations: int
    counts: dict[str, int]
    passed: int
    passRate: float
    rule: str
    outcomeChanged: list[str]
    pathChanged: list[str]
    errors: list[str]
    unstable: list[str]
    minPass: float | None = None
    gate: Literal["pass", "fail"] | None = None


class Migration(msgspec.Struct):
    model: str
    provider: str
    repeat: int
    unseen: str
    source: str
    out: str
    runs: list[RunResult]
    skipped: list[Skipped]
    summary: Summary
    made: Made | None = None
    kind: str = KIND


def summarize(runs: list[RunResult], min_pass: float | None) -> Summary:
    attempts = [a for run in runs for a in run.attempts]
    counts = Counter(a.verdict for a in attempts)
    passed = sum(a.passed for a in attempts)
    rate = passed / len(attempts) if attempts else 0.0
    gate: Literal["pass", "fail"] | None = None if min_pass is None else "pass" if rate >= min_pass else "fail"
    return Summary(
        runs=len(runs), continuations=len(attempts), counts={c: counts.get(c, 0) for c in CLASSES}, passed=passed,
        passRate=rate, rule=PASS_RULE,
        outcomeChanged=[r.file for r in runs if "changed outcome" in r.classes],
        pathChanged=[r.file for r in runs if "changed path" in r.classes],
        errors=[r.file for r in runs if "error" in r.classes],
        unstable=[r.file for r in runs if not r.stable], minPass=min_pass, gate=gate)


# -- shared cells -----------------------------------------------------------------------------------------


def _delta(old: int | None, new: int | None, unit: str = "") -> str:
    if old is None or new is None:
        return "n/a" if new is None else f"{new}{unit} (none recorded)"
    change = new - old
    share = f", {change / old:+.0%}" if old else ""
    return f"{old}→{new}{unit} ({change:+d}{unit}{share})"


def _tokens(recorded: Facts | None, candidate: Facts | None) -> str:
    if candidate is None:
        return ""
    old = None if recorded is None or recorded.inputTokens is None else \
        recorded.inputTokens + (recorded.outputTokens or 0)
    new = None if candidate.inputTokens is None else candidate.inputTokens + (candidate.outputTokens or 0)
    return _delta(old, new)


def _latency(recorded: Facts | None, candidate: Facts | None) -> str:
    if candidate is None:
        return ""
    return _delta(None if recorded is None else recorded.latencyMs, candidate.latencyMs, " ms")


def structure(recorded: Facts | None, candidate: Facts | None) -> str:
    """The structural diff in one cell: tool names, argument keys, finish reason; `same structure` when none."""
    if recorded is None or candidate is None:
        return ""
    parts = []
    if recorded.tools != candidate.tools:
        parts.append(f"tools {' → '.join(recorded.tools) or '(none)'} vs {' → '.join(candidate.tools) or '(none)'}")
    for name in sorted(recorded.argumentKeys.keys() & candidate.argumentKeys.keys()):
        if recorded.argumentKeys[name] != candidate.argumentKeys[name]:
            parts.append(f"{name} keys {{{', '.join(recorded.argumentKeys[name])}}} vs "
                         f"{{{', '.join(candidate.argumentKeys[name])}}}")
    if recorded.finish != candidate.finish:
        parts.append(f"finish {recorded.finish} vs {candidate.finish}")
    return "; ".join(parts) or "same structure"


def _divergence(attempt: Attempt) -> str:
    found = attempt.divergence
    if attempt.error is not None:
        return attempt.error
    if found is None:
        return "none"
    return f"step {found.step}: {found.recorded} vs {found.candidate}"


def _unseen(attempt: Attempt) -> str:
    return ", ".join(f"{u.tool}({', '.join(u.keys)}) answered {u.answered}" for u in attempt.unseen)


def rows(report: Migration) -> list[list[str]]:
    out = []
    for run in report.runs:
        for attempt in run.attempts:
            name = run.file if report.repeat <= 1 else f"{run.file} #{attempt.repeat + 1}"
            detail = _divergence(attempt)
            unseen = _unseen(attempt)
            out.append([name, attempt.verdict, "pass" if attempt.passed else "FAIL",
                         detail + (f"; unseen: {unseen}" if unseen else ""),
                         structure(run.recorded, attempt.candidate), _tokens(run.recorded, attempt.candidate),
                         _latency(run.recorded, attempt.candidate)])
    return [[inert(cell) for cell in row] for row in out]


HEADERS = ["run", "class", "pass", "first divergence", "structure", "tokens", "latency"]


def summary_lines(report: Migration) -> list[str]:
    s = report.summary
    counts = ", ".join(f"{n} {c}" for c, n in s.counts.items())
    lines = [f"{s.continuations} continuation(s) of {s.runs} run(s): {counts}",
             f"pass rate {s.passRate:.0%} ({s.passed}/{s.continuations}): {s.rule}"]
    if s.outcomeChanged:
        lines.append(f"outcome changed: {', '.join(inert(f) for f in s.outcomeChanged)}")
    if report.repeat > 1:
        stable = [r for r in report.runs if r.stable]
        lines.append(f"stability over {report.repeat} repeats: {len(stable)}/{len(report.runs)} run(s) stable"
                     + (f"; unstable: {', '.join(inert(f) for f in s.unstable)}" if s.unstable else ""))
    if report.skipped:
        lines.append(f"skipped {len(report.skipped)} file(s): " +
                     "; ".join(f"{inert(k.file)} ({inert(k.reason)})" for k in report.skipped))
    if s.gate is not None and s.minPass is not None:
        lines.append(gate_line(report))
    return lines


def gate_line(report: Migration) -> str:
    s = report.summary
    word = "passed" if s.gate == "pass" else "FAILED"
    relation = "≥" if s.gate == "pass" else "<"
    return f"gate {word}: pass rate {s.passRate:.0%} {relation} --min-pass {s.minPass:.0%}"


def _cell(text_: str) -> str:
    return text_.replace("|", "\\|").replace("\n", " ") or " "


def markdown(report: Migration) -> str:
    """A pull-request comment: what was asked, the verdict, the table, the rule."""
    s = report.summary
    mark = "" if s.gate is None else ("✅ " if s.gate == "pass" else "❌ ")
    lines = [f"## {mark}Migration to `{inert(report.model)}` ({report.provider})", "",
             f"**{s.passed}/{s.continuations} passed ({s.passRate:.0%})** over {s.runs} recorded run(s) of "
             f"`{inert(report.source)}`" + (f", {report.repeat} repeats each" if report.repeat > 1 else "") + ".",
             "", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows(report)]
    lines += ["", *[f"- {line}" for line in summary_lines(report)], "",
              f"Unseen tool calls: `{inert(report.unseen)}`. Forks: `{inert(report.out)}` "
              "(open any with `blackbox diff <run> <fork> --across-agents`)."]
    return "\n".join(lines) + "\n"
