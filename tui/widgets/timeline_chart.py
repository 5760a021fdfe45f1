"""The run's timeline (`blackbox.format.timeline`): one row per model call and tool call, a bar where it ran in time,
its duration and tokens, the slowest marked; and the totals line of the run header.

Line-rendered like the step list (only the visible rows are drawn), so a 10,000-step run costs its spans,
not a widget each.  The timeline of a run is computed once per state of the run (its length and generation)
and shared by the header and the screen.
"""

from __future__ import annotations

import math
import weakref
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.content import Content

from blackbox.format.inert import inert
from blackbox.format.timeline import Span, Timeline, Totals, duration_text, timeline

from ..run import Run
from .line_table import LineTable

__all__ = ["TimelineChart", "compact", "run_timeline", "timeline_known", "times_text", "totals_content"]

_CACHE: weakref.WeakKeyDictionary[Run, tuple[tuple[int, int, bool], Timeline]] = weakref.WeakKeyDictionary()
NAME_WIDTH = 16
DURATION_WIDTH = 9


def run_timeline(run: Run, *, model_names: bool = True) -> Timeline:
    """The timeline of the run's steps as they stand (recomputed when steps were added or replaced); the
    header asks without `model_names`, which spares it reading every request (a timeline with them serves
    it too)."""
    key = (len(run), run.generation)
    cached = _CACHE.get(run)
    if cached is None or cached[0][:2] != key or (model_names and not cached[0][2]):
        cached = _CACHE[run] = ((*key, model_names), timeline(run.steps.lazy, model_names=model_names))
    return cached[1]


def timeline_known(run: Run) -> bool:
    """Whether the run's timeline, as its steps stand, is computed (the header draws its totals only then)."""
    cached = _CACHE.get(run)
    return cached is not None and cached[0][:2] == (len(run), run.generation)


def compact(n: int) -> str:
    """A count in at most 5 cells: 950, 12,345 → 12.3k, 2.1M."""
    if n < 10_000:
        return f"{n:,}"
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= size:
            value = n / size
            return f"{value:.1f}{unit}" if value < 100 else f"{value:.0f}{unit}"
    return str(n)  # pragma: no cover (n < 10,000 handled above)


def times_text(totals: Totals) -> str:
    return (f"model {duration_text(totals.model_ms)}  ·  tools {duration_text(totals.tool_ms)}  ·  "
            f"wall {duration_text(totals.wall_ms)}")


def totals_content(run: Run, *, known_only: bool = False) -> Content | None:
    """The header's totals line (tokens in and out, model, tool and wall time: 80 columns hold it); while the
    file is still being read, a line saying so (so the header does not grow under the step list when the
    read ends), and with `known_only` while they are added up (off the UI thread: they read every tool step);
    None when there is nothing to tell (no counts, and every step at one time: an import, the demo's fixed
    clock)."""
    if run.loading is not None:
        return Content.styled("tokens and times known once the whole file is read", "$text-muted")
    if not len(run):
        return None
    if known_only and not timeline_known(run):
        return Content.styled("tokens and times: adding up…", "$text-muted")
    totals = run_timeline(run, model_names=False).totals
    tokens = totals.tokens
    if tokens is None and not totals.wall_ms:
        return None
    counts = "not recorded" if tokens is None else f"{tokens.input:,} in · {tokens.output:,} out"
    return Content.assemble(("tokens ", "$text-muted"), (counts, ""), (f"  ·  {times_text(totals)}", "$text-muted"))


class TimelineChart(LineTable):
    """Rows are spans, in the order they started or slowest first (`by_duration`)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline-chart--model", "timeline-chart--tool", "timeline-chart--slow", "timeline-chart--open",
    }

    DEFAULT_CSS = """
    TimelineChart {
        & > .timeline-chart--model { color: $text-primary; }
        & > .timeline-chart--tool { color: $text-success; }
        & > .timeline-chart--slow { color: $text-error; text-style: bold; }
        & > .timeline-chart--open { color: $text-muted; }
    }
    """

    def __init__(self, line: Timeline, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.line = line
        self.order: list[int] = list(range(len(line.spans)))
        self._step_width = max(4, len(str(max((s.start_step for s in line.spans), default=0))))

    @property
    def row_count(self) -> int:
        return len(self.order)

    @property
    def span(self) -> Span | None:
        """The span under the cursor."""
        return self.line.spans[self.order[self.cursor]] if self.order else None

    def sort(self, *, by_duration: bool) -> None:
        """Rows slowest first (unfinished calls last), or in the order the calls started."""
        spans = self.line.spans
        self.order = sorted(range(len(spans)), key=lambda i: -(spans[i].ms or -1.0)) if by_duration \
            else list(range(len(spans)))
        self.rows_changed(0)

    def _bar(self, span: Span, width: int) -> tuple[int, int]:
        """The span's first cell and its length in a bar of `width` cells (at least one cell)."""
        first, last = self.line.first or 0.0, self.line.last or 0.0
        scale = (last - first) or 1.0
        start = min(width - 1, int((span.start - first) / scale * width))
        end = width if span.end is None else math.ceil((span.end - first) / scale * width)
        return start, max(1, min(width, end) - start)

    def render_row(self, row: int, width: int) -> list[Segment]:
        span = self.line.spans[self.order[row]]
        style = self.style_of(f"timeline-chart--{span.kind}")
        muted = self.style_of("line-table--muted")
        tokens = "" if span.tokens is None else f"{compact(span.tokens.input)}→{compact(span.tokens.output)}"
        name = inert(span.name)
        if cell_len(name) > NAME_WIDTH:
            name = set_cell_size(name, NAME_WIDTH - 1) + "…"
        left = f"{'!' if span.slow else ' '}{span.start_step:>{self._step_width}} {span.kind:<5} "
        right = f" {duration_text(span.ms) if span.end is not None else 'no end':>{DURATION_WIDTH}} {tokens:>11}"
        bar_width = max(4, width - cell_len(left) - NAME_WIDTH - 1 - cell_len(right))
        start, length = self._bar(span, bar_width)
        colour = (self.style_of("timeline-chart--slow") if span.slow else
                  self.style_of("timeline-chart--open") if span.end is None else style).color
        base = self.rich_style
        return [
            Segment(left[0], self.style_of("timeline-chart--slow") if span.slow else muted),
            Segment(left[1:], muted),
            Segment(set_cell_size(name, NAME_WIDTH) + " ", style),
            Segment(" " * start, base),
            Segment(" " * length, base + Style(bgcolor=colour)),  # a bar of cells, exact in any font
            Segment(" " * (bar_width - start - length), base),
            Segment(right, muted),
        ]
