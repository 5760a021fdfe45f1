"""Browse one cassette: header, step list, detail pane; search, filter, jumps, copy, open.  The diff, the fork and
the timeline open from here through their doors (`..doors`): the app gives this screen their keys."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Input, Static

from blackbox.format.cassette import Step
from blackbox.format.inert import inert

from ..doors import Door, Here
from ..external import copy_payload, open_payload, write_payload
from ..follow import Follower
from ..messages import (
    ChainChecked,
    FollowTick,
    ProgressTick,
    RowMoved,
    RunGrew,
    SearchClosed,
    SearchProgress,
    TotalsAdded,
)
from ..notice import say
from ..run import Run
from ..widgets.fit_footer import FitFooter
from ..widgets.run_header import HeaderState, RunHeader
from ..widgets.search_box import SearchBox
from ..widgets.status_line import StatusLine
from ..widgets.step_detail import StepDetail
from ..widgets.step_table import StepTable
from ..widgets.ticker import Ticker
from ..widgets.timeline_chart import run_timeline
from .base import BlackboxScreen
from .following import follow_tick, following_status
from .prompts import PickOne

if TYPE_CHECKING:
    from ..app import BlackboxApp

__all__ = ["REST_DELAY", "BrowseScreen"]

REST_DELAY = 0.05  # seconds the cursor must rest before the detail pane is rendered
FOLLOW_EVERY = 0.3  # seconds between looks at a followed recording's journal
PROGRESS_EVERY = 0.2  # seconds between updates of the reading / chain-check progress


class BrowseScreen(BlackboxScreen[None]):
    """One run. `companion` is the cassette `d` compares with (the fork beside it), if any.

    What the status line and the run header show is the screen's reactive state (bound to the `StatusLine` and
    the `RunHeader`): setting it redraws; `rows_changed` sets it from the run."""

    HELP = ("Browse one run: the steps on the left, the selected step on the right. Tool steps are drawn under "
            "the model output that asked for them.")
    BINDING_PREFIX = "browse"

    step: var[int | None] = var(None)  # the step under the cursor, once it rests
    total: var[int] = var(0)
    rows: var[Sequence[int]] = var(range(0), always_update=True)  # the steps shown (a list may be the same one)
    reading: var[float | None] = var(None)  # how much of a large file is read, while it is read
    following: var[str | None] = var(None)
    filter_label: var[str] = var("")
    query_text: var[str] = var("")
    matches: var[list[int]] = var(list)
    searching: var[bool] = var(False)
    header: var[HeaderState] = var(HeaderState())  # what the run header shows that changes (bound to it)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", key_display="/", priority=True,  # before the keys typed next
                tooltip='Find steps whose summary or payload holds a text', id="browse.search"),
        Binding("n", "next_match", "Next match", show=False,
                tooltip='Go to the next search match (N: the previous one)', id="browse.next_match"),
        Binding("N", "previous_match", "Prev match", show=False, id="browse.previous_match"),
        Binding("t", "filter", "Filter",
                tooltip='Show only one step type, one tool, or the error results', id="browse.filter"),
        Binding("e", "next_error", "Next error",
                tooltip='Go to the next tool result that is an error', id="browse.next_error"),
        Binding("r", "next_result", "Next result", show=False,
                tooltip='Go to the next tool result (a fork point)', id="browse.next_result"),
        Binding("c", "copy", "Copy", show=False,
                tooltip="Copy this step's payload to the clipboard (OSC 52)", id="browse.copy"),
        Binding("w", "write", "Write payload to a file", show=False, id="browse.write"),
        Binding("o", "open_editor", "Open in $EDITOR", show=False, id="browse.open_editor"),
        Binding("p", "open_pager", "Open in $PAGER", show=False, id="browse.open_pager"),
        Binding("z", "fold", "Fold/unfold long text", show=False, id="browse.fold"),
        Binding("1", "tab('tab-json')", "JSON tab", show=False, id="browse.tab_json"),
        Binding("2", "tab('tab-conversation')", "Conversation tab", show=False, id="browse.tab_conversation"),
        Binding("3", "tab('tab-step')", "Hash & time tab", show=False, id="browse.tab_step"),
        Binding("escape", "clear", "Clear search/filter (or back)", show=False, id="browse.clear"),
    ]
    DOOR = Door("enter", "Browse", "Browse run A at this step (escape comes back)", on={"diff": True})

    DEFAULT_CSS = """
    BrowseScreen {
        #chain-banner {
            display: none;
            background: $error;
            color: $text;
            text-style: bold;
            padding: 0 1;
        }
        &.-broken #chain-banner { display: block; }
        #panes { height: 1fr; }
        #steps { width: 55%; min-width: 40; border-right: vkey $panel-lighten-2; }
        #detail { width: 1fr; }
        #search { dock: bottom; display: none; }
        #search.-visible { display: block; }
        #status { height: 1; padding: 0 1; color: $text-muted; background: $panel; }
    }
    """

    def __init__(self, run: Run, *, companion: Run | None = None, at: int = 0, back: bool = False,
                 follow: Follower | None = None) -> None:
        """`back`: opened from another screen (the diff), so escape with nothing to clear returns to it.
        `follow`: the journal of a recording in progress; its new steps are appended as they are written."""
        super().__init__()
        self.back = back
        self.follower = follow
        self.run = run
        self.companion = companion
        self.start_at = at
        self._filter_choice = "all"
        self._detail_timer: Timer | None = None
        self._seen = self._generation = 0
        self._search_origin: int | None = None  # the step a search started from, until it has jumped
        self._added_up: tuple[int, int] | None = None  # the run's state whose totals were last added up

    def compose(self) -> ComposeResult:
        run = self.run
        yield RunHeader(run, id="header").data_bind(state=BrowseScreen.header)
        yield Static(id="chain-banner")
        with Horizontal(id="panes"):
            yield StepTable(run, id="steps")
            yield StepDetail(run, id="detail")
        yield StatusLine(id="status").data_bind(
            BrowseScreen.step, BrowseScreen.total, BrowseScreen.rows, BrowseScreen.reading, BrowseScreen.following,
            BrowseScreen.filter_label, BrowseScreen.query_text, BrowseScreen.matches, BrowseScreen.searching)
        yield SearchBox(run, id="search")
        yield FitFooter()
        yield Ticker(PROGRESS_EVERY, ProgressTick, done=lambda: run.loaded.is_set() and run.chain_checked,
                     id="progress-ticker")
        if self.follower is not None:
            yield Ticker(FOLLOW_EVERY, FollowTick, done=lambda: self.follower is None, id="follow-ticker")

    def on_mount(self) -> None:
        table = self.table
        table.focus()
        table.rows_changed(0)
        if self.start_at:
            table.go_to_step(self.start_at, center=True)
        self.rows_changed()
        self._show_detail()
        self._check_chain()
        self._seen, self._generation = len(self.run), self.run.generation
        self.following = following_status(self)
        self.call_after_refresh(self.blackbox.read_in_background, self.run)  # after the first paint

    def rows_changed(self) -> None:
        """The run or the rows shown changed: the state the status line and the header show follows."""
        self.total, self.rows = len(self.run), self.table.indices
        self.reading = self.run.loading.fraction if self.run.loading is not None else None
        self.header = HeaderState.of(self.run)
        if not self.header.timed and self.run.loading is None and len(self.run):
            self.call_after_refresh(self._start_adding_up, len(self.run), self.run.generation)  # not before a frame

    def _start_adding_up(self, steps: int, generation: int) -> None:
        if (steps, generation) != self._added_up:  # once per state of the run (rows_changed comes in bursts)
            self._added_up = (steps, generation)
            self._add_up()

    @work(thread=True, group="totals")
    def _add_up(self) -> None:
        """The header's totals (the run's timeline: every tool step read), off the UI thread; the header shows
        "adding up…" until then.  Not exclusive: a thread cannot be stopped, and a cancelled one would only
        be marked so."""
        run_timeline(self.run, model_names=False)
        self.post_message(TotalsAdded())

    # -- a large file read in the background ---------------------------------------------------------------

    def on_run_grew(self, message: RunGrew) -> None:
        self.run_changed(message.run)

    def run_changed(self, run: Run) -> None:
        """More steps of this run were read (or the whole file was, or could not be)."""
        if run is not self.run or not self.query("#steps"):  # (a change that arrives as the app quits)
            return
        table = self.table
        grown = run.generation == self._generation
        start = self._seen if grown else 0
        self._seen, self._generation = len(run), run.generation
        table._index_width = max(table._index_width, len(str(len(run) - 1)))
        if not self.filter_label:
            table.indices = range(len(run))
        else:
            kind, _, value = self._filter_choice.partition(":")
            kept = list(table.indices) if grown else []
            table.indices = kept + run.indices(kind, value, start=start)
        if grown:
            table.rows_added()
        else:
            table.rows_changed(table.cursor)
        if run.problem:
            self._chain_checked()
        self.rows_changed()

    def on_totals_added(self) -> None:
        self.header = HeaderState.of(self.run)

    def on_progress_tick(self) -> None:
        """The reading and chain-check progress (the ticker stops once both are done)."""
        self.rows_changed()

    def on_follow_tick(self) -> None:
        follow_tick(self)

    def on_screen_resume(self) -> None:
        """Back from the diff or a fork: the keys go to the step list again (it was never focused when the
        diff opened on top at start)."""
        if self.focused is None:
            self.table.focus()

    # -- parts ---------------------------------------------------------------------------------------------

    @property
    def table(self) -> StepTable:
        return self.query_one("#steps", StepTable)

    @property
    def detail(self) -> StepDetail:
        return self.query_one("#detail", StepDetail)

    @property
    def current_step(self) -> Step | None:
        index = self.table.step_index
        return None if index is None else self.run.steps[index]

    # -- the chain check runs off the UI thread ------------------------------------------------------------

    @work(thread=True, exclusive=True, group="chain")
    def _check_chain(self) -> None:
        self.run.check_chain()  # hashes every step once (after a large file is read); cached on the run
        if self.run.chain_checked:
            self.post_message(ChainChecked())  # posted, not called: the app may be quitting

    def on_chain_checked(self) -> None:
        self._chain_checked()

    def _chain_checked(self) -> None:
        self.header = HeaderState.of(self.run)
        self.table.refresh()  # the broken step's row is marked
        broken = self.run.chain
        if self.run.problem:
            self.add_class("-broken")
            self.query_one("#chain-banner", Static).update(Content(
                f"⚠ The file cannot be read from step {len(self.run)} on: {inert(self.run.problem.rstrip('.'))}. "
                "The steps before it are shown."
            ))
        elif broken is not None:
            self.add_class("-broken")
            self.query_one("#chain-banner", Static).update(Content(
                f"⚠ Chain broken at step {broken.index}: {inert(broken.reason)}. The file changed after it was "
                "recorded; what follows may not be what ran. Still browsable."
            ))
        self.detail.refresh_facts()

    # -- following the cursor ------------------------------------------------------------------------------

    @on(RowMoved, "#steps")
    def _moved(self) -> None:
        """Render the detail once the cursor rests: holding ↓ only redraws two rows per step."""
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self._detail_timer = self.set_timer(REST_DELAY, self._show_detail)

    def _show_detail(self) -> None:
        self._detail_timer = None
        index = self.table.step_index
        needle = self.query_text if index is not None and index in self.table.marked else ""
        self.detail.show(self.current_step, needle)
        self.step = index

    # -- search --------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`/` typed in the search box is text (the binding is a priority one, to open the box at once)."""
        return not (action == "search" and self.focused is self.query_one(SearchBox))

    def action_search(self) -> None:
        self.query_one(SearchBox).open(self.query_text)

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        self._close_search()
        self.search(event.value)

    def search(self, text: str) -> None:
        """Mark every step whose summary, type or payload contains `text` and go to the next one.

        Off the UI thread: matches are marked as they are found, the steps of a large file as it is read."""
        self.query_text = text.strip()
        needle = self.query_text.lower()
        self.matches = []
        self.table.mark(frozenset(), needle)
        self._search_origin = self.table.step_index or 0
        self.searching = bool(needle)
        self.query_one(SearchBox).find(needle, self._search_origin)

    def on_search_progress(self, message: SearchProgress) -> None:
        if message.needle != self.query_text.lower():
            return  # an earlier search's
        self.matches = message.found
        self.searching = not message.done
        self.table.mark(frozenset(message.found), message.needle)
        origin = self._search_origin
        if origin is not None and self.table.step_index not in (origin, None):
            self._search_origin = origin = None  # the cursor was moved meanwhile: it stays where it was put
        if origin is not None and message.found:
            ahead = [i for i in message.found if i >= origin]
            if ahead or message.done:
                self._search_origin = None
                self._jump(lambda i: i in self.table.marked, forward=True, what="match", include_current=True)
        if message.done and not message.found:
            say(self.app, f'No step contains "{self.query_text}".', severity="warning")

    def _close_search(self) -> None:
        self.query_one(SearchBox).close()
        self.table.focus()

    def on_search_closed(self, message: SearchClosed) -> None:
        self.table.focus()

    def action_next_match(self) -> None:
        self._jump_to_match(forward=True)

    def action_previous_match(self) -> None:
        self._jump_to_match(forward=False)

    def _jump_to_match(self, *, forward: bool) -> None:
        if not self.query_text:
            say(self.app, "Nothing to find yet: press / and type.", severity="warning")
            return
        self._jump(lambda i: i in self.table.marked, forward=forward, what="match")

    # -- jumps ---------------------------------------------------------------------------------------------

    def action_next_error(self) -> None:
        self._jump(self.run.is_error_result, forward=True, what="error result")

    def action_next_result(self) -> None:
        self._jump(lambda i: self.run.steps.type(i) == "tool_result", forward=True, what="tool result")

    def _jump(self, wanted: Callable[[int], bool], *, forward: bool, what: str,
              include_current: bool = False) -> None:
        """Move to the next (or previous) shown step satisfying `wanted`, wrapping around once."""
        table = self.table
        rows = table.indices
        count = len(rows)
        if not count:
            return
        step = 1 if forward else -1
        start = table.cursor if include_current else table.cursor + step
        reading = self.run.loading is not None
        for offset in range(count):
            row = (start + offset * step) % count
            if wanted(rows[row]):
                if (forward and row < table.cursor) or (not forward and row > table.cursor):
                    if reading and forward:  # more may come after the rows read so far
                        say(self.app, f"No {what} after this step yet (the file is still being read); "
                                      f"wrapped around to the first.")
                    else:
                        say(self.app, f"Wrapped around to the {'first' if forward else 'last'} {what}.")
                table.move_to(row)
                return
        say(self.app, f"No {what} in the steps shown" + (" so far (the file is still being read)." if reading
                                                            else "."), severity="warning")

    # -- filter --------------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        options = [("all", "All steps")]
        options += [(f"type:{kind}", f"type  {kind}") for kind in self.run.step_types()]
        options += [("errors", "tool results with an error")]
        options += [(f"tool:{name}", f"tool  {inert(name)}") for name in self.run.tool_names()]
        title = "Show only… (of the steps read so far)" if self.run.loading is not None else "Show only…"
        self.app.push_screen(PickOne(title, options), self.apply_filter)

    def apply_filter(self, choice: str | None) -> None:
        """`all`, `type:<step type>`, `tool:<tool name>` or `errors`."""
        if choice is None:
            return
        keep = self.table.step_index
        self._filter_choice = choice
        if choice == "all":
            self.filter_label = ""
            self.table.show(range(len(self.run)), keep)
        else:
            kind, _, value = choice.partition(":")
            self.filter_label = choice if value else "error results"
            self.table.show(self.run.indices(kind, value), keep)
        self.rows_changed()
        self._show_detail()

    def action_clear(self) -> None:
        if self.back and not self.query_text and not self.filter_label:
            self.app.pop_screen()
            return
        if self.query_text:
            self.query_text = ""
            self.matches = []
            self.table.mark(frozenset())
            self._show_detail()
        if self.filter_label:
            self.apply_filter("all")

    # -- the payload outside the app (`..external`) -------------------------------------------------------

    def action_copy(self) -> None:
        copy_payload(self.app, self.current_step)

    def action_write(self) -> None:
        write_payload(self.app, self.run.cassette.id, self.current_step)

    def action_open_editor(self) -> None:
        open_payload(self.app, self.current_step, "editor")
        self.refresh(layout=True)

    def action_open_pager(self) -> None:
        open_payload(self.app, self.current_step, "pager")
        self.refresh(layout=True)

    # -- detail pane ---------------------------------------------------------------------------------------

    def action_tab(self, tab: str) -> None:
        self.detail.open_tab(tab)

    def action_fold(self) -> None:
        self.detail.toggle_fold()

    # -- where other screens open from (their doors: `..doors`, `app.SCREENS`) --------------------------

    def here(self) -> Here:
        def keep(other: Run) -> None:
            self.companion = other

        def go_to(step: int) -> None:
            self.table.go_to_step(step, center=True)

        return Here(self.run, self.table.step_index, self.companion, moves="press r to go to the next one",
                    go_to=go_to, keep_other=keep)

    @classmethod
    def open_from(cls, app: BlackboxApp, here: Here) -> None:
        """Browse the run at the row's step (from the diff: run A; escape goes back)."""
        row = here.step or 0
        if row >= len(here.run):
            say(app, f"{here.side or 'This run'} has no step {row}; it ended at step {len(here.run) - 1}.",
                severity="warning")
            return
        app.push_screen(cls(here.run, companion=here.other, at=row, back=True))
