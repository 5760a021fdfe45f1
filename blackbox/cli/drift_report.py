"""The drift report (`blackbox.many.drift.DriftReport`) as people read it: text on a terminal or in a CI log,
markdown for a pull-request comment.  `--json` is the report's own `to_dict`.  Text from the cassettes and the
live answers (file names, ids, model names, paths) is masked and made inert (`reports.shown`).
"""

from __future__ import annotations

from blackbox.cli.inspecting import created
from blackbox.cli.reports import shown
from blackbox.many.drift import EXIT_ERROR, EXIT_WARNING, CallDrift, DriftReport, RunDrift
from blackbox.many.shapes import Finding

__all__ = ["markdown_report", "text_report"]

_WHAT = {"added": "added", "removed": "removed", "type": "type changed", "unreadable": "the codec cannot read it"}
_LIMIT = 12  # findings shown per run and tier in text; the JSON has them all


def _finding(finding: Finding) -> str:
    if finding.change == "unreadable":
        return f"{shown(finding.path)}: the live answer is one Blackbox's codec cannot read"
    if finding.change == "type":
        return f"{shown(finding.path)}: type changed, {'/'.join(finding.recorded)} → {'/'.join(finding.live)}"
    types = finding.live if finding.change == "added" else finding.recorded
    return f"{shown(finding.path)}: {_WHAT[finding.change]} ({'/'.join(types)})"


def _unique(calls: list[CallDrift]) -> list[tuple[Finding, list[int]]]:
    """Each finding once per run, with the steps it was found at, worst tier first."""
    seen: dict[Finding, list[int]] = {}
    for call in calls:
        for finding in call.findings:
            seen.setdefault(finding, []).append(call.step)
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(seen.items(), key=lambda item: (order[item[0].tier], item[0].path))


def _age(run: RunDrift) -> str:
    if run.madeAt is None:
        return "age ?"
    return f"{run.ageDays:g} days old (made {created(run.madeAt)[:16]})"


def _behaviour(run: RunDrift) -> str | None:
    if run.firstDivergence is None or not run.calls:
        return None
    call = run.calls[run.firstDivergence]
    was, now = call.recorded, call.live
    said = f"{was.kind} {' '.join(was.tools)}".strip(), f"{now.kind} {' '.join(now.tools)}".strip()
    detail = f"{shown(said[0])} → {shown(said[1])}" if said[0] != said[1] else \
        f"finish {was.finish} → {now.finish}, text {was.text} → {now.text}, argument keys changed" \
        if (was.finish, was.text) != (now.finish, now.text) else "argument keys changed"
    return (f"behaviour: call {run.firstDivergence + 1} of {len(run.calls)} (step {call.step}) differs: {detail}; "
            f"{shown(run.verdictText or '')}")


def _run_lines(run: RunDrift) -> list[str]:
    lines = ["  ".join(part for part in (shown(run.file), shown(run.id or ""), _age(run)) if part)]
    if run.madeWith:
        lines.append(f"  made with {shown(run.madeWith)}")
    for recorded, now in run.models_changed():
        lines.append(f"  model: recorded {shown(recorded or '(none kept)')}, answers now as {shown(now)}")
    for finding, steps in _unique(run.calls)[:_LIMIT * 3]:
        where = f" (step{'s' if len(steps) > 1 else ''} {', '.join(map(str, steps[:5]))})"
        lines.append(f"  {finding.tier:<7}  {_finding(finding)}{where}")
    said = _behaviour(run)
    if said:
        lines.append(f"  {'warning':<7}  {said}")
    if run.calls and said is None:
        lines.append(f"  same behaviour over {len(run.calls)} call{'s' if len(run.calls) != 1 else ''}")
    if run.problem:
        lines.append(f"  not checked: {shown(run.problem)}")
    return lines


def _summary(report: DriftReport) -> str:
    counts = report.counts()
    changed = sum(1 for run in report.runs if run.firstDivergence is not None)
    code = report.exit_code
    meaning = {0: "no drift" if report.tier == "none" else "information only", 1: "a run could not be checked",
               EXIT_WARNING: "warning", EXIT_ERROR: "error"}[code]
    live = f"; behaviour changed in {changed} of {len(report.runs)}" if report.live else \
        " (ages only: pass --live to re-send the calls)"
    return (f"{counts['error']} error, {counts['warning']} warning, {counts['info']} info{live} "
            f"→ exit {code} ({meaning})")


def text_report(report: DriftReport) -> str:
    calls = sum(len(run.calls) for run in report.runs)
    lines = [f"drift: {len(report.runs)} of {report.files} runs in {shown(report.folder)} (seed {report.seed})"
             + (f", {calls} model call{'s' if calls != 1 else ''} re-sent live" if report.live else "")]
    for run in report.runs:
        lines += _run_lines(run)
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"


def markdown_report(report: DriftReport) -> str:
    lines = [f"### Drift: {len(report.runs)} of {report.files} runs (seed {report.seed})", "",
             "| run | age (days) | made with | tier | shape findings | behaviour | model now |",
             "|---|---|---|---|---|---|---|"]
    for run in report.runs:
        findings = "<br>".join(f"{f.tier}: `{_finding(f)}`" for f, _ in _unique(run.calls)[:_LIMIT]) or "-"
        said = _behaviour(run) or ("not checked: " + shown(run.problem) if run.problem else "same")
        models = ", ".join(f"{shown(a or '?')} → {shown(b)}" for a, b in run.models_changed()) or "-"
        lines.append(f"| `{shown(run.file)}` | {run.ageDays if run.ageDays is not None else '?'} | "
                     f"{shown(run.madeWith or '-')} | {run.tier} | {findings} | {said.replace('|', '/')} | {models} |")
    lines += ["", _summary(report)]
    return "\n".join(lines) + "\n"
