"""Compare two runs: the §9 verdict, both step lists side by side, and the changed fields of a step."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Footer, Label, Static

from blackbox.inert import inert
from blackbox_tui.diffing import Comparison, compare, field_changes
from blackbox_tui.run import Run, compact_json
from blackbox_tui.screens.browse import REST_DELAY
from blackbox_tui.widgets.diff_table import DiffTable
from blackbox_tui.widgets.line_table import LineTable
from blackbox_tui.widgets.payload_view import PayloadView

__all__ = ["BothValues", "DiffScreen"]

VALUE_CLIP = 70
CHANGE_LIMIT = 200


def _clip(value: Any) -> str:
    text = inert(compact_json(value))
    return text if len(text) <= VALUE_CLIP else text[: VALUE_CLIP - 1] + "…"


class DiffScreen(Screen[None]):
    """`a` and `b` compared by hash (default) or semantically; opens on `at` or the first divergence."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right_square_bracket,n", "next_difference", "Next diff", key_display="]",
                id="diff.next_difference"),
        Binding("left_square_bracket,N", "previous_difference", "Prev diff", key_display="[",
                id="diff.previous_difference"),
        Binding("s", "toggle_semantic", "Hash/semantic", id="diff.toggle_semantic"),
        Binding("v", "view_values", "Both values", id="diff.view_values"),
        Binding("escape", "back", "Back", id="diff.back"),
    ]

    DEFAULT_CSS = """
    DiffScreen {
        #verdict { height: auto; padding: 0 1; background: $panel; }
        #columns { height: 1; padding: 0; color: $text-muted; background: $panel; text-style: bold; }
        #rows { height: 1fr; }
        #changes-box { height: 12; border-top: hkey $panel-lighten-2; background: $surface; }
        #changes { padding: 0 1; }
    }
    """

    def __init__(self, a: Run, b: Run, *, semantic: bool = False, at: int | None = None) -> None:
        super().__init__()
        self.a = a
        self.b = b
        self.semantic = semantic
        self.start_at = at
        self.comparison: Comparison | None = None
        self._changes_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content.styled("comparing…", "$text-muted"), id="verdict")
        yield Static(id="columns")
        yield DiffTable(self.a, self.b, id="rows")
        with VerticalScroll(id="changes-box"):
            yield Static(id="changes")
        yield Footer()

    def on_mount(self) -> None:
        self.table.focus()
        self.table.rows_changed(0)
        self._compare()

    def on_resize(self) -> None:
        self.call_after_refresh(self._update_columns)

    @property
    def table(self) -> DiffTable:
        return self.query_one("#rows", DiffTable)

    # -- comparing (off the UI thread: hashing or canonicalizing two large runs takes a moment) ------------

    @work(thread=True, exclusive=True, group="compare")
    def _compare(self) -> None:
        try:
            result = compare(self.a, self.b, semantic=self.semantic)
        except Exception as exc:
            self.app.call_from_thread(self._failed, f"cannot compare these runs: {exc}")
            return
        self.app.call_from_thread(self._compared, result)

    def _failed(self, message: str) -> None:
        self.query_one("#verdict", Static).update(Content.styled(message, "bold $text-error"))

    def _compared(self, result: Comparison) -> None:
        first_load = self.comparison is None
        self.comparison = result
        self.table.comparison = result
        self.table.refresh()
        self._update_verdict()
        self.call_after_refresh(self._update_columns)
        if first_load:
            target = self.start_at if self.start_at is not None else result.first_divergence
            self.table.move_to(target or 0, center=True)
        self._show_changes()

    def _update_verdict(self) -> None:
        result = self.comparison
        if result is None:
            return
        mode = "semantic (type + payload)" if result.semantic else "hash"
        if result.first_divergence is None:
            where = Content.styled("no divergence", "bold $text-success")
        else:
            where = Content.styled(f"first divergence at step {result.first_divergence}", "bold $text-warning")
        counts = {kind: result.rows.count(kind) for kind in ("changed", "only_a", "only_b")}
        first = Content.assemble(
            (self.a.label, "bold"), ("  ↔  ", "$text-muted"), (self.b.label, "bold"),
            (f"   compared by {mode} (s toggles)", "$text-muted"),
        )
        second = where + Content.styled(
            f"   ·  {counts['changed']} changed, {counts['only_a']} only in A, {counts['only_b']} only in B",
            "$text-muted",
        )
        verdict = Content.styled(inert(result.verdict), "bold $text-accent")
        outcomes = [Content.assemble((f"{side} ", "bold $text-muted"), (inert(run.outcome.describe()), "$text-muted"))
                    for side, run in (("A", self.a), ("B", self.b))]
        self.query_one("#verdict", Static).update(Content("\n").join([first, second, verdict, *outcomes]))

    def _update_columns(self) -> None:
        a_start, b_start, side = self.table.layout(self.table.content_width or self.size.width)
        left = f" A  {self.a.name}"[:side].ljust(b_start - a_start)
        text = f"{' ' * a_start}{left} B  {self.b.name}"[: a_start + 2 * side + 4]
        self.query_one("#columns", Static).update(Content(text))  # Content: a file name is not markup

    # -- the selected row ----------------------------------------------------------------------------------

    @on(LineTable.Moved, "#rows")
    def _moved(self) -> None:
        """Show the changed fields once the cursor rests on a row."""
        if self._changes_timer is not None:
            self._changes_timer.stop()
        self._changes_timer = self.set_timer(REST_DELAY, self._show_changes)

    def _show_changes(self) -> None:
        self._changes_timer = None
        self.query_one("#changes", Static).update(self.changes_content(self.table.cursor))

    def changes_content(self, index: int) -> Content:
        """What differs at step `index`, one changed field per line."""
        kind = self.table.kind(index) if self.comparison else "same"
        head = Content.styled(f"step {index}: ", "bold")
        if kind == "only_a":
            return head + Content.styled(f"only in A — {self.a.summary(index)}", "$text-error")
        if kind == "only_b":
            return head + Content.styled(f"only in B — {self.b.summary(index)}", "$text-success")
        if kind == "same":
            return head + Content.styled(f"same on both sides — {self.a.summary(index)}", "$text-muted")
        changes = field_changes(self.a, self.b, index, limit=CHANGE_LIMIT)
        lines = [head + Content.styled(f"{len(changes)} changed field(s); v shows both steps in full",
                                       "$text-warning")]
        for change in changes:
            lines.append(Content.assemble(
                (f"{inert(change.path)}: ", "bold"),
                (_clip(change.old) if change.old_present else "(absent)", "$text-error"),
                (" → ", "$text-muted"),
                (_clip(change.new) if change.new_present else "(absent)", "$text-success"),
            ))
        return Content("\n").join(lines)

    # -- actions -------------------------------------------------------------------------------------------

    def action_next_difference(self) -> None:
        self._step_difference(forward=True)

    def action_previous_difference(self) -> None:
        self._step_difference(forward=False)

    def _step_difference(self, *, forward: bool) -> None:
        if self.comparison is None:
            return
        cursor = self.table.cursor
        differing = self.comparison.differing
        candidates = [i for i in differing if i > cursor] if forward else [i for i in differing if i < cursor]
        if not candidates:
            self.notify(f"No differing step {'after' if forward else 'before'} step {cursor}.")
            return
        self.table.move_to(candidates[0] if forward else candidates[-1])

    def action_toggle_semantic(self) -> None:
        self.semantic = not self.semantic
        self.query_one("#verdict", Static).update(Content.styled("comparing…", "$text-muted"))
        self._compare()

    def action_view_values(self) -> None:
        index = self.table.cursor
        a_step = self.a.steps[index] if index < len(self.a) else None
        b_step = self.b.steps[index] if index < len(self.b) else None
        self.app.push_screen(BothValues(index, a_step.payload if a_step else None,
                                        b_step.payload if b_step else None))

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()


class BothValues(ModalScreen[None]):
    """Step `index` of both runs, each payload in full, side by side."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,v", "dismiss", "Close", id="values.close"),
    ]

    DEFAULT_CSS = """
    BothValues {
        align: center middle;
        & > Vertical { width: 96%; height: 90%; border: round $accent; background: $panel; }
        & Horizontal { height: 1fr; }
        & PayloadView { width: 1fr; border: round $panel-lighten-2; }
        & Label { padding: 0 1; color: $text-muted; }
    }
    """

    def __init__(self, index: int, a: Any, b: Any) -> None:
        super().__init__()
        self.index = index
        self.a = a
        self.b = b

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"step {self.index}: A on the left, B on the right (escape closes)")
            with Horizontal():
                yield PayloadView(id="value-a")
                yield PayloadView(id="value-b")

    def on_mount(self) -> None:
        self.query_one("#value-a", PayloadView).show(self.a)
        self.query_one("#value-b", PayloadView).show(self.b)
