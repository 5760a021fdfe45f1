"""Compare two runs: the outcome verdict, both step lists side by side, and the changed fields of a step.

Rows say why they differ: ✎ the fork point's new value, ≈ a step that only carries it (a request whose history
holds the new value, or a step whose hash differs while its payload does not), ≠ where behaviour changed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from blackbox.errors import BlackboxError, CassetteError
from blackbox.format.inert import inert

from ..diffing import KIND_TEXT, Classifier, Comparison, agents_of, compare, field_changes, word_changes
from ..doors import Door, Here
from ..messages import ProgressTick, RowMoved
from ..notice import say
from ..run import Run, compact_json
from ..widgets.diff_table import DiffTable
from ..widgets.fit_footer import FitFooter
from ..widgets.ticker import Ticker
from .base import BlackboxScreen
from .browse import REST_DELAY
from .prompts import PathPrompt

if TYPE_CHECKING:
    from ..app import BlackboxApp

__all__ = ["DiffScreen"]

VALUE_CLIP = 70
MIN_CLIP = 12  # a value is never clipped shorter than this, however narrow the pane
WORDS_FROM = 40  # strings at least this long on both sides are compared word by word
CHANGE_LIMIT = 200
SHORT = 30  # a terminal fewer lines high than this gets a smaller header and changes pane


def _clip(value: Any, limit: int = VALUE_CLIP) -> str:
    text = inert(compact_json(value))
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def _fit_pair(old: str, new: str, room: int) -> tuple[str, str]:
    """Both sides of a change cut to share `room` columns (a short side whole, the long one taking the rest; never
    shorter than `MIN_CLIP`)."""
    if len(old) + len(new) <= room:
        return old, new
    half = max(MIN_CLIP, room // 2)
    if len(old) <= half:
        return old, _cut(new, max(MIN_CLIP, room - len(old)))
    if len(new) <= half:
        return _cut(old, max(MIN_CLIP, room - len(new))), new
    return _cut(old, half), _cut(new, max(MIN_CLIP, room - half))


#: Seconds after the comparison is drawn before the chains are checked: the check hashes every step, holding
#: the GIL for most of its ~0.2 s per 10,000 steps, which made the screen settle 1.5x later when it ran at once.
CHAIN_CHECK_AFTER = 0.3


class DiffScreen(BlackboxScreen[None]):
    """`a` and `b` compared by hash (default) or semantically, or across agents when they are imports of two
    coding agents (then `s` cycles the three); opens on `at` or the first divergence."""

    HELP = ("Two runs side by side, aligned by step index: = same, ≠ changed, ◀ only in A, ▶ only in B. "
            "Below, the changed fields of the selected step.")
    BINDING_PREFIX = "diff"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right_square_bracket,n", "next_difference", "Next diff", key_display="]",
                tooltip="The next row that differs",
                id="diff.next_difference"),
        Binding("left_square_bracket,N", "previous_difference", "Prev diff", key_display="[", show=False,
                tooltip="The previous row that differs",
                id="diff.previous_difference"),
        Binding("s", "toggle_semantic", "Hash/semantic",
                tooltip="Compare by stored hash, or by type and payload (two recordings), or (two imports by "
                        "different coding agents) by what each step did", id="diff.toggle_semantic"),
        Binding("slash", "search", "Find", key_display="/", show=False, priority=True,
                tooltip="Go to the next row whose summary holds a text", id="diff.search"),
        Binding("escape", "back", "Back", show=False, id="diff.back"),
    ]
    DOOR = Door("d", "Diff", "Compare this run with another cassette (or its fork)", on={"browse": True})

    DEFAULT_CSS = """
    DiffScreen {
        #diff-chain { display: none; height: auto; background: $error; color: $text; text-style: bold; padding: 0 1; }
        &.-broken #diff-chain { display: block; }
        #verdict { height: auto; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
        #columns { height: 1; padding: 0; color: $text-muted; background: $panel; text-style: bold; }
        #rows { height: 1fr; }
        #changes-box { height: 12; border-top: hkey $panel-lighten-2; background: $surface; }
        &.-short #changes-box { height: 6; }
        #changes { padding: 0 1; }
    }
    """

    def __init__(self, a: Run, b: Run, *, semantic: bool = False, at: int | None = None) -> None:
        super().__init__()
        self.a = a
        self.b = b
        self.semantic = semantic
        self.agents = False  # comparing across coding agents (chosen when both runs are imports of two agents)
        self.modes: tuple[str, ...] | None = None  # what `s` cycles, known once the runs are read
        self.start_at = at
        self.comparison: Comparison | None = None
        self.first_behavioural: int | None = None
        self.find_text = ""
        self._changes_timer: Timer | None = None
        self._settled = threading.Event()  # the first comparison is on screen (or will never be): chains next

    def compose(self) -> ComposeResult:
        yield Static(id="diff-chain")
        yield Static(Content.styled("comparing…", "$text-muted"), id="verdict")
        yield Static(id="columns")
        yield DiffTable(self.a, self.b, id="rows")
        with VerticalScroll(id="changes-box"):
            yield Static(id="changes")
        yield FitFooter()
        yield Ticker(0.2, ProgressTick, done=lambda: self.a.loaded.is_set() and self.b.loaded.is_set())

    def on_mount(self) -> None:
        self.table.focus()
        self.table.rows_changed(0)
        self._compare()
        self._check_chains()

    def on_unmount(self) -> None:
        self._settled.set()

    def on_progress_tick(self) -> None:
        """While a large file is still being read, the verdict line says how far (then the comparison runs)."""
        if self.comparison is not None or (self.a.loaded.is_set() and self.b.loaded.is_set()):
            if self.comparison is None:
                self.query_one("#verdict", Static).update(Content.styled("comparing…", "$text-muted"))
            return
        shown = [f"{side} {run.loading.fraction:.0%}" for side, run in (("A", self.a), ("B", self.b))
                 if run.loading is not None]
        self.query_one("#verdict", Static).update(
            Content.styled(f"reading the files before comparing them… {', '.join(shown)}", "$text-muted"))

    def on_resize(self) -> None:
        self.set_class(self.size.height < SHORT, "-short")
        self._update_verdict()
        self.call_after_refresh(self._update_columns)
        self.call_after_refresh(self._show_changes)  # its lines are fitted to the pane's width

    @property
    def table(self) -> DiffTable:
        return self.query_one("#rows", DiffTable)

    # -- comparing (off the UI thread: hashing or canonicalizing two large runs takes a moment) ------------

    @work(thread=True, exclusive=True, group="compare")
    def _compare(self) -> None:
        if not (self.a.wait_loaded() and self.b.wait_loaded()):
            self._settled.set()
            return  # the app is quitting
        try:
            if self.modes is None:
                agent_a, agent_b = agents_of(self.a, self.b)
                across = agent_a is not None and agent_b is not None and agent_a != agent_b
                self.modes = ("agents", "hash", "semantic") if across else ("hash", "semantic")
                self.agents = across and not self.semantic
            result = compare(self.a, self.b, semantic=self.semantic, agents=self.agents)
            classifier = Classifier(self.a, self.b, result)
            behavioural = classifier.first_behavioural()
        except (BlackboxError, ValueError, MemoryError) as exc:
            self.app.call_from_thread(self._failed, f"cannot compare these runs: {inert(str(exc))}")
            return
        self.app.call_from_thread(self._compared, result, classifier, behavioural)

    @work(thread=True, exclusive=True, group="chains")
    def _check_chains(self) -> None:
        """The chains (every step hashed once, cached on the run): the CLI refuses a broken one, so the screen
        says so — once the comparison is drawn, so hashing 20,000 steps never delays drawing it."""
        self._settled.wait()
        self.a.check_chain()
        self.b.check_chain()
        if self.a.chain_checked and self.b.chain_checked:
            self.app.call_from_thread(self._show_chains)

    def _failed(self, message: str) -> None:
        self._settled.set()
        self.query_one("#verdict", Static).update(Content.styled(message, "bold $text-error"))

    def _compared(self, result: Comparison, classifier: Classifier, behavioural: int | None) -> None:
        first_load = self.comparison is None
        self.comparison = result
        self.first_behavioural = behavioural
        self.table.comparison = result
        self.table.classifier = classifier
        self.table.rows_changed(self.table.cursor)  # a large file may have had more steps to read
        self._update_verdict()
        self._show_chains()
        self.call_after_refresh(self._update_columns)
        if first_load:
            target = self.start_at if self.start_at is not None else result.first_divergence
            self.table.move_to(target or 0, center=True)
        self._show_changes()
        if first_load:  # once the comparison has settled on screen: the hashing holds the GIL while it runs
            self.set_timer(CHAIN_CHECK_AFTER, self._settled.set)

    def broken_chains(self) -> list[str]:
        """`A: chain broken at step 5 (reason)` for each run whose chain does not hold (checked by `_check_chains`)."""
        found = []
        for side, run in (("A", self.a), ("B", self.b)):
            broken = run.chain if run.chain_checked else None
            if broken is not None:
                found.append(f"{side} ({run.name}): chain broken at step {broken.index} ({inert(broken.reason)})")
        return found

    def _show_chains(self) -> None:
        if self.comparison is not None:
            self._update_verdict()  # its first line marks a broken chain too
        broken = self.broken_chains()
        self.set_class(bool(broken), "-broken")
        if broken:
            self.query_one("#diff-chain", Static).update(Content(
                "⚠ " + "; ".join(broken) + ". The file changed after it was recorded: the comparison may not be "
                "what ran (`blackbox diff` refuses it)."))

    def _update_verdict(self) -> None:
        result = self.comparison
        if result is None:
            return
        mode = ("what each step did, across agents" if result.agents else
                "semantic (type + payload)" if result.semantic else "hash")
        if result.first_divergence is None:
            where = Content.styled("no divergence", "bold $text-success")
        else:
            where = Content.styled(f"first divergence at step {result.first_divergence}", "bold $text-warning")
            classifier = self.table.classifier
            if self.first_behavioural is not None and self.first_behavioural != result.first_divergence:
                where += Content.styled(f" · first behavioural divergence at step {self.first_behavioural}",
                                        "bold $text-error")
            elif self.first_behavioural is None and classifier is not None and not classifier.complete:
                where += Content.styled(f" · no behavioural divergence up to step {classifier.scanned_to} "
                                        "(] looks further)", "$text-muted")
        counts = {kind: result.rows.count(kind) for kind in ("changed", "only_a", "only_b")}
        first = Content.assemble((self.a.label, "bold"), ("  ↔  ", "$text-muted"), (self.b.label, "bold"))
        for side, run in (("A", self.a), ("B", self.b)):  # before the rest: a narrow terminal cuts the line's end
            broken = run.chain if run.chain_checked else None
            if broken is not None:
                first += Content.styled(f"   {side}: chain BROKEN at step {broken.index}", "bold $text-error")
        first += Content.styled(f"   compared by {mode} (s toggles)", "$text-muted")
        second = where + Content.styled(
            f"   ·  {counts['changed']} changed, {counts['only_a']} only in A, {counts['only_b']} only in B",
            "$text-muted",
        )
        verdict = Content.styled(inert(result.verdict), "bold $text-accent")
        outcomes = [Content.assemble((f"{side} ", "bold $text-muted"), (inert(run.outcome.describe()), "$text-muted"))
                    for side, run in (("A", self.a), ("B", self.b))]
        self.query_one("#verdict", Static).update(Content("\n").join([first, second, verdict, *outcomes]))

    def _update_columns(self) -> None:
        a_start, b_start, side = self.table.column_layout(self.table.content_width or self.size.width)
        left = f" A  {self.a.name}"[:side].ljust(b_start - a_start)
        text = f"{' ' * a_start}{left} B  {self.b.name}"[: a_start + 2 * side + 4]
        self.query_one("#columns", Static).update(Content(text))  # Content: a file name is not markup

    # -- the selected row ----------------------------------------------------------------------------------

    @on(RowMoved, "#rows")
    def _moved(self) -> None:
        """Show the changed fields once the cursor rests on a row."""
        if self._changes_timer is not None:
            self._changes_timer.stop()
        self._changes_timer = self.set_timer(REST_DELAY, self._show_changes)

    def _show_changes(self) -> None:
        self._changes_timer = None
        box = self.query_one("#changes-box", VerticalScroll)
        width = box.scrollable_content_region.width - 2 - (0 if box.show_vertical_scrollbar
                                                           else box.styles.scrollbar_size_vertical)
        self.query_one("#changes", Static).update(self.changes_content(self.table.cursor, width))

    def changes_content(self, index: int, width: int = 0) -> Content:
        """What differs at step `index`, one changed field per line; with `width`, each field's line clipped to
        it (a value cut at the pane's edge would go on in a row the pane has no room for)."""
        kind = self.table.kind(index) if self.comparison else "same"
        head = Content.styled(f"step {index}: ", "bold")
        if kind == "only_a":
            return head + Content.styled(f"only in A — {self.a.summary(index)}", "$text-error")
        if kind == "only_b":
            return head + Content.styled(f"only in B — {self.b.summary(index)}", "$text-success")
        if kind == "same":
            return head + Content.styled(f"same on both sides — {self.a.summary(index)}", "$text-muted")
        if kind == "hash_only":
            a_step, b_step = self.a.steps[index], self.b.steps[index]
            why = (f"its time differs ({a_step.timestamp} → {b_step.timestamp} ms)"
                   if a_step.timestamp != b_step.timestamp else "an earlier step differs (the hash chains it)")
            return head + Content.styled(f"same payload, different hash: {why}; nothing in this step changed",
                                         "$text-muted")
        changes = field_changes(self.a, self.b, index, limit=CHANGE_LIMIT)
        count = f"{len(changes)} changed field{'s' if len(changes) != 1 else ''}"
        said = f"{KIND_TEXT.get(kind, kind)} · {count}"
        if not width or len(head.plain) + len(said) + 34 <= width:
            said += "; v shows both steps side by side"
        lines = [head + Content.styled(said, "$text-warning" if kind == "changed" else "$text-muted")]
        for change in changes:
            shown_path = inert(change.path)
            if width and len(shown_path) > width // 2:
                shown_path = "…" + shown_path[-(width // 2 - 1):]
            path = Content.styled(f"{shown_path}: ", "bold")
            if isinstance(change.old, str) and isinstance(change.new, str) and \
                    min(len(change.old), len(change.new)) >= WORDS_FROM:
                lines.append(path + _words(change.old, change.new))
                continue
            old = _clip(change.old) if change.old_present else "(absent)"
            new = _clip(change.new) if change.new_present else "(absent)"
            if width:
                old, new = _fit_pair(old, new, width - len(path.plain) - 3)
            lines.append(path + Content.assemble((old, "$text-error"), (" → ", "$text-muted"), (new, "$text-success")))
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
        modes = self.modes or ("hash", "semantic")
        current = "agents" if self.agents else "semantic" if self.semantic else "hash"
        following = modes[(modes.index(current) + 1) % len(modes)]
        self.agents, self.semantic = following == "agents", following == "semantic"
        self.query_one("#verdict", Static).update(Content.styled("comparing…", "$text-muted"))
        self._compare()

    def here(self) -> Here:
        """Run A at the row (the timeline takes B's on a row only B has); the fork and browse doors say "A"."""
        return Here(self.a, self.table.cursor, self.b, side="A", moves="] jumps between differences",
                    go_to=lambda step: self.table.move_to(step, center=True))

    @classmethod
    def open_from(cls, app: BlackboxApp, here: Here) -> None:
        """The diff of the run and the one it is compared with; asked for (a path), when there is none yet."""
        if here.other is not None:
            app.open_diff(here.run, here.other)
            return

        def chosen(path: str | None) -> None:
            if path:
                app.run_worker(lambda: load(path), thread=True, exclusive=True, group="load")

        def load(path: str) -> None:
            try:
                other = Run.open(Path(path).expanduser())
            except CassetteError as exc:
                app.call_from_thread(say, app, str(exc), severity="error", timeout=10)
                return
            app.call_from_thread(loaded, other)

        def loaded(other: Run) -> None:
            if here.keep_other is not None:
                here.keep_other(other)
            app.open_diff(here.run, other)

        app.push_screen(PathPrompt("Compare with which cassette? (path)", ""), chosen)

    def action_search(self) -> None:
        self.app.push_screen(PathPrompt("Find the next row whose summary holds (either side):", self.find_text),
                             self._find)

    def _find(self, text: str | None) -> None:
        if not text:
            return
        self.find_text = text
        needle = text.lower()
        count = self.table.row_count
        for offset in range(1, count + 1):
            row = (self.table.cursor + offset) % count
            if any(row < len(run) and needle in run.summary(row).lower() for run in (self.a, self.b)):
                self.table.move_to(row, center=True)
                return
        say(self.app, f'No row holds "{text}".', severity="warning")

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()


def _words(old: str, new: str) -> Content:
    """A long string's change, word by word: only the words that differ are coloured."""
    left, right = word_changes(inert(old), inert(new))
    a = Content.assemble(*[(text, "bold $text-error underline" if changed else "$text-muted")
                           for text, changed in left])
    b = Content.assemble(*[(text, "bold $text-success underline" if changed else "$text-muted")
                           for text, changed in right])
    return Content("\n  A: ") + a + Content("\n  B: ") + b
