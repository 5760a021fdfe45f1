"""The sweep screen's list of branches: one line each (its verdict, variant and repeat, where it first diverged,
whether its outcome changed, its tokens and time, and the checks it failed or why it could not run), in the
order `sweeping.SweepFolder.listed` gives.  Line-rendered like the step list: a sweep of a thousand branches
scrolls as smoothly as one of ten."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment

from blackbox.format.inert import inert
from blackbox.many.folder import Branch

from ..sweeping import branch_name, seconds, tokens, verdict_of
from .line_table import LineTable

__all__ = ["MARKS", "BranchList"]

MARKS = {"fail": "✗ fail ", "error": "! error", "pass": "✓ pass ", "running": "… todo "}
NAME_MAX = 22  # a variant's name longer than this is cut: the reason column needs the room
FIGURES_FROM = 96  # columns from which each branch's tokens and time are shown


def _why(branch: Branch) -> str:
    if branch.error:
        return inert(branch.error)
    if branch.failed:
        return inert("; ".join(branch.failed))
    return "" if branch.verdict else "not finished"


def layout(width: int, branches: list[Branch]) -> tuple[int, bool]:
    """The name column's width, and whether the tokens and time columns fit (below `FIGURES_FROM` columns they
    go: the reason a branch failed needs the room more, and the pass-rate table has the totals)."""
    longest = max((cell_len(branch_name(b)) for b in branches), default=8)
    return min(NAME_MAX, max(8, longest)), width >= FIGURES_FROM


class BranchList(LineTable):
    """`branches` (set them, then `rows_changed`); the cursor's branch is `branch`."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "branch-list--fail", "branch-list--error", "branch-list--pass", "branch-list--running",
    }

    DEFAULT_CSS = """
    BranchList {
        & > .branch-list--fail { color: $text-error; text-style: bold; }
        & > .branch-list--error { color: $text-warning; text-style: bold; }
        & > .branch-list--pass { color: $text-success; }
        & > .branch-list--running { color: $text-muted; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.branches: list[Branch] = []

    @property
    def row_count(self) -> int:
        return len(self.branches)

    @property
    def branch(self) -> Branch | None:
        return self.branches[self.cursor] if 0 <= self.cursor < len(self.branches) else None

    def header(self, width: int) -> str:
        """The columns' names, laid out as the rows are."""
        name_width, figures = layout(width, self.branches)
        text = " verdict " + "branch".ljust(name_width) + "  div  outcome"
        if figures:
            text += "      tokens   time"
        text += "  failed checks / error"
        return text if cell_len(text) <= width else set_cell_size(text, width - 1) + "…"

    def render_row(self, row: int, width: int) -> list[Segment]:
        branch = self.branches[row]
        verdict = verdict_of(branch)
        muted = self.style_of("line-table--muted")
        name_width, figures = layout(width, self.branches)
        name = branch_name(branch)
        name = set_cell_size(name, name_width - 1) + "…" if cell_len(name) > name_width else name.ljust(name_width)
        divergence = "—" if branch.divergence is None else str(branch.divergence)
        changed = branch.outcomeChanged
        outcome = "" if not branch.verdict else "—" if changed is None else "changed" if changed else "same"
        segments = [
            Segment(" " + MARKS[verdict], self.style_of(f"branch-list--{verdict}")),
            Segment(" " + name, self.rich_style),
            Segment(f" {divergence:>4}  {outcome:<7}", muted),
        ]
        if figures:
            ran = branch.inputTokens or branch.outputTokens or branch.seconds  # (a branch that never ran: blank)
            segments.append(Segment(f" {tokens(branch.inputTokens, branch.outputTokens) if ran else '':>11}"
                                    f" {seconds(branch.seconds) if ran else '':>6}", muted))
        room = width - sum(cell_len(segment.text) for segment in segments) - 2
        why = _why(branch)
        if cell_len(why) > room > 0:
            why = set_cell_size(why, room - 1) + "…"
        segments.append(Segment("  " + why, self.style_of(f"branch-list--{verdict}")
                                if verdict in ("fail", "error") else muted))
        return segments
