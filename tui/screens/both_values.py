"""`v` in the diff: both steps' payloads in full, side by side, line for line, the changed lines marked.

A line too long for its side wraps under its own indentation (never back to column 0), and the other side
gets as many rows there, so the two stay aligned at any width."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, Static

from blackbox.format.cassette import Step
from blackbox.format.inert import inert

from ..doors import Door, Here
from ..run import pretty_json
from ..widgets.payload_view import hang
from .base import BlackboxModal

if TYPE_CHECKING:
    from ..app import BlackboxApp

__all__ = ["BothValues", "aligned_json", "aligned_rows"]


class BothValues(BlackboxModal[None]):
    """Step `index` of both runs, each payload in full, side by side."""

    HELP = "Both steps' payloads in full, side by side, line for line; the changed lines are marked."
    BINDING_PREFIX = "values"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,v", "dismiss", "Close", id="values.close"),
    ]
    DOOR = Door("v", "Both values", "Both steps' payloads side by side, aligned, changes marked", on={"diff": True})

    DEFAULT_CSS = """
    BothValues {
        align: center middle;
        & > Vertical { width: 96%; height: 90%; border: round $accent; background: $panel; }
        & Horizontal { height: 1fr; }
        & VerticalScroll { width: 1fr; border: round $panel-lighten-2; background: $surface; padding: 0 1; }
        & Label { padding: 0 1; color: $text-muted; }
    }
    """

    def __init__(self, index: int, a: Step | None, b: Step | None) -> None:
        super().__init__()
        self.index = index
        self.a = a
        self.b = b

    @classmethod
    def open_from(cls, app: BlackboxApp, here: Here) -> None:
        index = here.step or 0
        runs = (here.run, here.other or here.run)
        app.push_screen(cls(index, *(run.steps[index] if index < len(run) else None for run in runs)))

    def compose(self) -> ComposeResult:
        self.lines = aligned_json(self.a, self.b)
        with Vertical():
            yield Label(f"step {self.index}: A left, B right, changed lines marked (escape closes)")
            with Horizontal():
                with VerticalScroll(id="value-a"):
                    yield Static(Content("\n").join(self.lines[0]))
                with VerticalScroll(id="value-b"):
                    yield Static(Content("\n").join(self.lines[1]))

    def on_resize(self, event: events.Resize) -> None:
        """Wrap both sides to the room each has, row for row."""
        sides = [self.query_one(f"#value-{side}", VerticalScroll) for side in "ab"]
        widths = [scroll.scrollable_content_region.width - (0 if scroll.show_vertical_scrollbar else
                                                            scroll.styles.scrollbar_size_vertical) for scroll in sides]
        if min(widths) < 8:
            return
        left, right = aligned_rows(*self.lines, widths[0], widths[1])
        sides[0].query_one(Static).update(left)
        sides[1].query_one(Static).update(right)




def aligned_json(a: Step | None, b: Step | None) -> tuple[list[Content], list[Content]]:
    """Both payloads as JSON, line for line: equal lines side by side, changed lines marked, a side's extra
    lines faced by blank ones; a missing step says so instead of `null`."""
    a_lines = inert(pretty_json(a.payload), keep_newlines=True).split("\n") if a is not None else []
    b_lines = inert(pretty_json(b.payload), keep_newlines=True).split("\n") if b is not None else []
    left: list[Content] = []
    right: list[Content] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            left += [Content(line) for line in a_lines[i1:i2]]
            right += [Content(line) for line in b_lines[j1:j2]]
            continue
        old, new = a_lines[i1:i2], b_lines[j1:j2]
        height = max(len(old), len(new))
        left += [Content.styled(line, "$text-error on $error 15%") for line in old] + \
            [Content("")] * (height - len(old))
        right += [Content.styled(line, "$text-success on $success 15%") for line in new] + \
            [Content("")] * (height - len(new))
    if a is None:
        left = [Content.styled("(no such step in A)", "italic $text-muted")]
    if b is None:
        right = [Content.styled("(no such step in B)", "italic $text-muted")]
    return left, right


def aligned_rows(left: list[Content], right: list[Content], left_width: int, right_width: int) -> tuple[Content,
                                                                                                      Content]:
    """The two sides' lines wrapped (`hang`) to their widths, each pair padded to the same number of rows."""
    out_left: list[Content] = []
    out_right: list[Content] = []
    for a, b in zip(left, right, strict=False):
        rows_a = hang(a, left_width).split("\n", allow_blank=True)
        rows_b = hang(b, right_width).split("\n", allow_blank=True)
        height = max(len(rows_a), len(rows_b))
        out_left += rows_a + [Content("")] * (height - len(rows_a))
        out_right += rows_b + [Content("")] * (height - len(rows_b))
    out_left += left[len(right):]
    out_right += right[len(left):]
    return Content("\n").join(out_left), Content("\n").join(out_right)
