"""The header of the browse screen: id, fork link, created, steps, outcome, the chain's state and the totals,
drawn from a reactive `HeaderState` the screen keeps bound to it."""

from __future__ import annotations

from typing import NamedTuple

from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from blackbox.format.inert import inert

from ..run import Run, format_time
from .timeline_chart import timeline_known, totals_content

__all__ = ["HeaderState", "RunHeader", "outcome_content"]

STATUS_STYLES = {"success": "bold $text-success", "error": "bold $text-error", "incomplete": "bold $text-warning"}


class HeaderState(NamedTuple):
    """What the header shows of a run that changes while it is open: its steps (so far; `generation` counts
    their replacements), the reading of a large file, and the chain check's state.  The screen sets it from
    the run whenever the run may have changed (`BrowseScreen.header`, bound to `RunHeader.state`); the header
    redraws when it differs."""

    steps: int = 0
    generation: int = 0
    reading: float | None = None
    unreadable: bool = False  # the file cannot be read to its end
    checked: bool = False
    progress: int = 0  # percent of the steps the chain check has passed
    broken: int | None = None  # the first step whose link does not hold
    timed: bool = False  # the totals line is added up (in a thread: `BrowseScreen._add_up`)

    @classmethod
    def of(cls, run: Run) -> HeaderState:
        checked = run.chain_checked
        broken = run.chain if checked else None  # never checked here: the check runs in a thread
        progress = round(run.chain_progress * 100 / len(run)) if len(run) else 0
        return cls(len(run), run.generation, run.loading.fraction if run.loading is not None else None,
                   bool(run.problem), checked, progress, broken.index if broken is not None else None,
                   timeline_known(run))


def outcome_content(run: Run, state: HeaderState) -> Content:
    if state.reading is not None:
        return Content.styled("known once the whole file is read", "$text-muted")
    result = run.ending  # its last step only: every tool step is read later, when something needs them
    return Content.styled(inert(result.describe()), STATUS_STYLES[result.status])


def chain_content(state: HeaderState) -> Content:
    if state.reading is not None:
        return Content.styled(f"reading… {state.reading:.0%}", "$text-warning")
    if state.unreadable:
        return Content.styled(f"unreadable from step {state.steps}", "bold $text-error")
    if not state.checked:
        done = f" {state.progress}%" if state.progress else ""
        return Content.styled(f"chain: checking…{done}", "$text-muted")
    if state.broken is None:
        return Content.styled("chain intact", "$text-success")
    return Content.styled(f"chain BROKEN at step {state.broken}", "bold $text-error")


class RunHeader(Static):
    """Three lines about the run, a fourth with its totals, drawn from `state` (reactive): a run that grows, a
    file read further or a chain check that ends redraws it, and nothing else has to ask."""

    DEFAULT_CSS = """
    RunHeader {
        height: auto;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        padding: 0 1;
        background: $panel;
    }
    """

    state: reactive[HeaderState] = reactive(HeaderState(), layout=True)  # the totals line comes and goes

    def __init__(self, run: Run, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run = run

    def validate_state(self, state: HeaderState) -> HeaderState:
        """A progress past the steps (a count taken as steps were replaced) is shown as 100%."""
        return state._replace(progress=min(max(state.progress, 0), 100))

    def render(self) -> RenderResult:
        run, state = self.run, self.state
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
            (f"  ·  {state.steps:,} steps{' so far' if state.reading is not None else ''}  ·  ", "$text-muted"),
            chain_content(state),
        )
        third = Content.styled("outcome ", "$text-muted") + outcome_content(run, state)
        totals = totals_content(run, known_only=True)
        return Content("\n").join([first, second, third, *([totals] if totals is not None else [])])
