"""A sweep's report, read from its manifest: the pass-rate table with each variant's label against the
baseline, as text rows, as markdown and as one JSON document.

The baseline (no edit, the recorded model) repeated K times measures the run's own nondeterminism: its flap
rate is the share of its runs that went the minority way (0 when every run agreed).  A variant whose 95%
Wilson interval overlaps the baseline's cannot be told from that noise and is labelled so; only a variant
whose interval lies wholly below (above) the baseline's is a regression (an improvement).
"""

from __future__ import annotations

from typing import Any

import msgspec

from blackbox.format.inert import inert
from blackbox.many.folder import Sweep, VariantSummary, summarize
from blackbox.many.plan import BASELINE

__all__ = ["NOISE", "Row", "flap_rate", "label", "markdown", "report_json", "rows", "text_rows"]

NOISE = "within the run's own variance (nondeterminism)"
HEADERS = ("variant", "runs", "pass rate (95% CI)", "first divergence", "outcome changed", "tokens in/out",
           "time (sum)", "cost", "verdict")


class Row(msgspec.Struct):
    """One variant's row: its summary and its label against the baseline."""

    summary: VariantSummary
    label: str


def flap_rate(summary: VariantSummary) -> float:
    """The share of runs that went the minority way (pass or not)."""
    if not summary.runs:
        return 0.0
    return min(summary.passed, summary.runs - summary.passed) / summary.runs


def label(summary: VariantSummary, baseline: VariantSummary | None) -> str:
    """What the variant's pass rate says against the baseline's."""
    if summary.runs == 0:
        return "not run yet"
    if baseline is None or baseline.runs == 0:
        return "no baseline to compare with"
    if summary is baseline:
        return f"the run's own variance: flap rate {flap_rate(summary):.0%}"
    if summary.high < baseline.low:
        return "regression (pass rate below the baseline's interval)"
    if summary.low > baseline.high:
        return "improvement (pass rate above the baseline's interval)"
    return NOISE


def rows(sweep: Sweep) -> list[Row]:
    summaries = summarize(sweep)
    baseline = next((s for s in summaries if s.variant == BASELINE), None)
    return [Row(s, label(s, baseline)) for s in summaries]


def _rate(s: VariantSummary) -> str:
    if not s.runs:
        return "–"
    return f"{s.passed}/{s.runs} = {s.rate:.0%} ({s.low:.0%}–{s.high:.0%})"


def _cells(row: Row) -> list[str]:
    s = row.summary
    return [inert(s.variant), str(s.runs), _rate(s), "none" if s.firstDivergence is None else f"step "
            f"{s.firstDivergence}", f"{s.outcomeChanged}/{s.runs}", f"{s.inputTokens}/{s.outputTokens}",
            f"{s.seconds:.1f} s", "–" if s.cost is None else f"${s.cost:.4f}", row.label]


def text_rows(sweep: Sweep) -> tuple[tuple[str, ...], list[list[str]]]:
    """The table's headers and cells (the CLI lays them out)."""
    return HEADERS, [_cells(row) for row in rows(sweep)]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(sweep: Sweep, folder: str) -> str:
    """The report as a pull-request comment: a heading, what was asked, the table, the errors."""
    settings = sweep.settings
    lines = [f"### Sweep of `{_md(inert(settings.source))}` at step {settings.at}", "",
             f"{len(sweep.variants)} variants × {settings.repeat} runs ({settings.mode}), in `{_md(inert(folder))}`",
             "", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(_md(c) for c in _cells(row)) + " |" for row in rows(sweep)]
    errors = [b for b in sweep.branches if b.verdict == "error"]
    if errors:
        lines += ["", f"{len(errors)} branch(es) could not run; the first: `{_md(inert(errors[0].error or ''))}`"]
    return "\n".join(lines) + "\n"


def report_json(sweep: Sweep, folder: str) -> dict[str, Any]:
    """The report and the manifest as one JSON document."""
    table = rows(sweep)
    baseline = next((row.summary for row in table if row.summary.variant == BASELINE), None)
    return {
        "folder": folder,
        "settings": msgspec.to_builtins(sweep.settings),
        "variants": [{**msgspec.to_builtins(row.summary), "rate": row.summary.rate, "label": row.label}
                     for row in table],
        "baseline": None if baseline is None else BASELINE,
        "flapRate": None if baseline is None or not baseline.runs else flap_rate(baseline),
        "branches": msgspec.to_builtins(sweep.branches),
        "complete": all(b.verdict is not None for b in sweep.branches),
    }
