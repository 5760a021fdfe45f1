"""`T` on the browse screen (and the diff): the run over time, each model and tool call a bar, the slowest marked.

Enter goes back to the browse screen at the call's first step (the screen is dismissed with its index);
`s` shows the slowest calls first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static

from blackbox.format.timeline import SLOWEST, duration_text, tokens_text

from ..doors import Door, Here
from ..run import Run
from ..widgets.fit_footer import FitFooter
from ..widgets.timeline_chart import NAME_WIDTH, TimelineChart, run_timeline, times_text
from .base import BlackboxScreen

if TYPE_CHECKING:
    from ..app import BlackboxApp

__all__ = ["TimelineScreen"]


class TimelineScreen(BlackboxScreen[int | None]):
    """The timeline of one run; dismissed with the step to show (enter) or None (escape)."""

    HELP = ("The run over time: each model call (from its request to its answer) and each tool call (from its "
            f"call to its result) is a bar where it ran, with its duration and tokens (in→out); ! marks the "
            f"{SLOWEST} slowest.")
    BINDING_PREFIX = "timeline"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "go_to_step", "Go to step", tooltip="Browse the run at this call's first step",
                id="timeline.go_to_step"),
        Binding("s", "sort", "Slowest first", tooltip="Show the slowest calls first, or in time order again",
                id="timeline.sort"),
        Binding("escape", "back", "Back", id="timeline.back"),
    ]
    DOOR = Door("T", "Timeline", "Each model and tool call over time, the slowest marked; enter comes back at the "
                "call's step (in a diff: run A's, B's on a row only B has)",
                on={"browse": True, "diff": False})  # the diff's footer: 80 columns hold no more (help, palette)

    DEFAULT_CSS = """
    TimelineScreen {
        #timeline-header { height: auto; padding: 0 1; background: $panel; text-wrap: nowrap;
                           text-overflow: ellipsis; }
        #timeline-columns { height: 1; padding: 0 1; color: $text-muted; text-wrap: nowrap; }
        #timeline { height: 1fr; padding: 0 1; }
        #timeline-empty { padding: 1 2; color: $text-muted; }
    }
    """

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run
        self.line = run_timeline(run)
        self.by_duration = False

    @classmethod
    def open_from(cls, app: BlackboxApp, here: Here) -> None:
        """The timeline of the run the row's step is in; a call chosen there is shown where it opened from."""
        def go_to(step: int | None) -> None:
            if step is not None and here.go_to is not None:
                here.go_to(step)

        app.push_screen(cls(here.run_with_step()), go_to)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="timeline-header")
        if self.line.spans:
            yield Static(self._columns(), id="timeline-columns")
            yield TimelineChart(self.line, id="timeline")
        else:
            yield Static("This run has no model or tool calls.", id="timeline-empty")
        yield FitFooter()

    def on_mount(self) -> None:
        charts = self.query(TimelineChart)
        if charts:
            charts.first().focus()

    def _header(self) -> Content:
        first = Content.assemble(("Timeline", "bold"), ("  ", ""), (self.run.name, "$text-muted"))
        line = self.line
        totals = line.totals
        lines = [first, Content.assemble(("tokens ", "$text-muted"), tokens_text(totals.tokens)),
                 Content.styled(times_text(totals), "$text-muted")]
        if self.run.loading is not None:
            lines.append(Content.styled("the file is still being read: the calls so far", "$text-warning"))
        slowest = sorted((s for s in line.spans if s.slow), key=lambda s: -(s.ms or 0.0))
        third = Content.styled("slowest: " + ", ".join(f"{s.name} at step {s.start_step} "
                                                        f"({duration_text(s.ms)})" for s in slowest)
                               if slowest else "no call took any time (the steps share one timestamp)",
                               "$text-muted")
        return Content("\n").join([*lines, third])

    def _columns(self) -> str:
        width = max(4, len(str(max(s.start_step for s in self.line.spans))))
        return f" {'step':>{width}} call  {'name':<{NAME_WIDTH}} time →"

    def action_go_to_step(self) -> None:
        span = self.query_one(TimelineChart).span
        if span is not None:
            self.dismiss(span.start_step)

    def action_sort(self) -> None:
        self.by_duration = not self.by_duration
        self.query_one(TimelineChart).sort(by_duration=self.by_duration)

    def action_back(self) -> None:
        self.dismiss(None)
