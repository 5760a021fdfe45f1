"""The header of the browse screen: id, fork link, created, steps, outcome, the chain's state and the totals."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from blackbox.format.inert import inert

from ..run import Run, format_time
from .timeline_chart import totals_content

__all__ = ["RunHeader", "outcome_content"]

STATUS_STYLES = {"success": "bold $text-success", "error": "bold $text-error", "incomplete": "bold $text-warning"}


def outcome_content(run: Run) -> Content:
    if run.loading is not None:
        return Content.styled("known once the whole file is read", "$text-muted")
    result = run.outcome
    return Content.styled(inert(result.describe()), STATUS_STYLES[result.status])


def chain_content(run: Run) -> Content:
    if run.loading is not None:
        return Content.styled(f"reading… {run.loading.fraction:.0%}", "$text-warning")
    if run.problem:
        return Content.styled(f"unreadable from step {len(run)}", "bold $text-error")
    if not run.chain_checked:
        done = f" {run.chain_progress / len(run):.0%}" if run.chain_progress and len(run) else ""
        return Content.styled(f"chain: checking…{done}", "$text-muted")
    broken = run.chain
    if broken is None:
        return Content.styled("chain intact", "$text-success")
    return Content.styled(f"chain BROKEN at step {broken.index}", "bold $text-error")


class RunHeader(Static):
    """Three lines about the run, a fourth with its totals; `refresh_chain` after the background chain check."""

    DEFAULT_CSS = """
    RunHeader {
        height: auto;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(self, run: Run, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run = run

    def on_mount(self) -> None:
        self.refresh_chain()

    def refresh_chain(self) -> None:
        run = self.run
        cassette = run.cassette
        first = Content.assemble(
            (run.label, "bold"),
            ("  ", ""),
            (run.name, "$text-muted"),
        )
        if cassette.parentId is not None:
            first += Content.assemble(
                ("  fork of ", "$text-muted"),
                (inert(cassette.parentId), "$text-accent"),
                (f" at {inert(cassette.forkedFromStepId or '?')}", "$text-muted"),
            )
        second = Content.assemble(
            (f"created {format_time(cassette.createdAt)}", "$text-muted"),
            (f"  ·  {len(run):,} steps{' so far' if run.loading is not None else ''}  ·  ", "$text-muted"),
            chain_content(run),
        )
        third = Content.styled("outcome ", "$text-muted") + outcome_content(run)
        totals = totals_content(run)
        self.update(Content("\n").join([first, second, third, *([totals] if totals is not None else [])]))
