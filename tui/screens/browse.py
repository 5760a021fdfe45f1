"""Browse one cassette: header, step list, detail pane; search, filter, jumps, copy, open, diff, fork."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from blackbox.errors import CassetteError
from blackbox.format.cassette import Step
from blackbox.format.inert import inert
from blackbox.format.writing import atomic_write

from ..external import open_readonly, viewer_command
from ..follow import Follower
from ..notice import say
from ..run import Run, pretty_json
from ..widgets.fit_footer import FitFooter
from ..widgets.line_table import LineTable
from ..widgets.run_header import RunHeader
from ..widgets.step_detail import StepDetail
from ..widgets.step_table import StepTable
from .following import follow_tick, following_status
from .prompts import PathPrompt, PickOne

__all__ = ["REST_DELAY", "BrowseScreen"]

REST_DELAY = 0.05  # seconds the cursor must rest before the detail pane is rendered
FOLLOW_EVERY = 0.3  # seconds between looks at a followed recording's journal
PROGRESS_EVERY = 0.2  # seconds between updates of the reading / chain-check progress
SEARCH_POST_EVERY = 0.15  # seconds between a search's reports of the matches found so far


class BrowseScreen(Screen[None]):
    """One run. `companion` is the cassette `d` compares with (the fork beside it), if any."""

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
        Binding("d", "diff", "Diff", tooltip='Compare this run with another cassette (or its fork)', id="browse.diff"),
        Binding("f", "fork", "Fork", tooltip='Fork the run at this tool result with another value', id="browse.fork"),
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
        self.query_text = ""
        self.matches: list[int] = []
        self.filter_label = ""
        self._filter_choice = "all"
        self._detail_timer: Timer | None = None
        self._progress_timer: Timer | None = None
        self._seen = self._generation = 0
        self._search_origin: int | None = None  # the step a search started from, until it has jumped
        self._searching = False

    def compose(self) -> ComposeResult:
        yield RunHeader(self.run, id="header")
        yield Static(id="chain-banner")
        with Horizontal(id="panes"):
            yield StepTable(self.run, id="steps")
            yield StepDetail(self.run, id="detail")
        yield Static(id="status")
        yield Input(placeholder="search summaries and payloads (enter: find, escape: close)", id="search")
        yield FitFooter()

    def on_mount(self) -> None:
        table = self.table
        table.focus()
        table.rows_changed(0)
        if self.start_at:
            table.go_to_step(self.start_at, center=True)
        self._show_detail()
        self._update_status()
        self._check_chain()
        if self.follower is not None:
            self.set_interval(FOLLOW_EVERY, self._follow)
        self._seen, self._generation = len(self.run), self.run.generation
        if not self.run.loaded.is_set() or not self.run.chain_checked:
            self._progress_timer = self.set_interval(PROGRESS_EVERY, self._show_progress)
        self.call_after_refresh(self._app.read_in_background, self.run)  # after the first paint

    # -- a large file read in the background ---------------------------------------------------------------

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
        self.query_one(RunHeader).refresh_chain()
        if run.problem:
            self._chain_checked()
        self._update_status()

    def _show_progress(self) -> None:
        """The header's reading and chain-check progress, until both are done."""
        self.query_one(RunHeader).refresh_chain()
        self._update_status()
        if self.run.loaded.is_set() and self.run.chain_checked and self._progress_timer is not None:
            self._progress_timer.stop()
            self._progress_timer = None

    def _follow(self) -> None:
        follow_tick(self)

    def on_screen_resume(self) -> None:
        """Back from the diff or a fork: the keys go to the step list again (it was never focused when the
        diff opened on top at start)."""
        if self.focused is None:
            self.table.focus()

    @property
    def _app(self) -> Any:
        """The Blackbox app (its routing: open_diff, open_fork); typed loosely to avoid an import cycle."""
        return self.app

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

    class ChainChecked(Message):
        """The background chain check is done."""

    @work(thread=True, exclusive=True, group="chain")
    def _check_chain(self) -> None:
        self.run.check_chain()  # hashes every step once (after a large file is read); cached on the run
        if self.run.chain_checked:
            self.post_message(self.ChainChecked())  # posted, not called: the app may be quitting

    def on_browse_screen_chain_checked(self) -> None:
        self._chain_checked()

    def _chain_checked(self) -> None:
        self.query_one(RunHeader).refresh_chain()
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

    @on(LineTable.Moved, "#steps")
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
        self._update_status()

    def _update_status(self) -> None:
        index = self.table.step_index
        # steps are named by their index, 0-based as in the cassette and the CLI; the position counts from 1
        where = f"step {index} ({index + 1} of {len(self.run)})" if index is not None else "no steps shown"
        parts = [where]
        if self.run.loading is not None:
            parts.append(f"reading the file: {self.run.loading.fraction:.0%}")
        if (following := following_status(self)) is not None:
            parts.append(following)
        if self.filter_label:
            parts.append(f"filter: {inert(self.filter_label)} ({self.table.row_count} shown)")
        if self.query_text:
            if self._searching:  # numbers would shift as matches before the cursor are found
                found = f"{len(self.matches)} match{'es' if len(self.matches) != 1 else ''} so far" if self.matches \
                    else "none yet"
                parts.append(f'search "{inert(self.query_text)}": {found} (searching…)')
            else:
                parts.append(f'search "{inert(self.query_text)}": {self.match_position()}')
        self.query_one("#status", Static).update(Content("  ·  ".join(parts)))

    def match_position(self) -> str:
        """`match 3 of 12` when the cursor is on a match, else how many there are (n / N move between them)."""
        shown = [i for i in self.matches if i in self._shown_set()]
        if not shown:
            return "no match" + (" in the steps shown" if self.matches else "")
        index = self.table.step_index
        if index is not None and index in self.table.marked:
            return f"match {shown.index(index) + 1} of {len(shown)}" if index in shown else f"{len(shown)} matches"
        return f"{len(shown)} match{'es' if len(shown) != 1 else ''} (n: next, N: previous)"

    def _shown_set(self) -> frozenset[int] | range:
        rows = self.table.indices
        return rows if isinstance(rows, range) else frozenset(rows)

    # -- search --------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`/` typed in the search box is text (the binding is a priority one, to open the box at once)."""
        return not (action == "search" and self.focused is self.query_one("#search", Input))

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.add_class("-visible")
        box.value = self.query_text
        self.set_focus(box)  # now, not after the keys already typed: those belong in the box

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
        self._searching = bool(needle)
        if needle:
            self._search_worker(needle, self._search_origin)
        else:
            self.workers.cancel_group(self, "search")
        self._update_status()

    @work(thread=True, exclusive=True, group="search")
    def _search_worker(self, needle: str, origin: int) -> None:
        """From the step the search started at to the end (waiting for steps still being read), then from
        the first step back to it; the matches so far are posted every `SEARCH_POST_EVERY` seconds."""
        worker = get_current_worker()
        run = self.run
        run.searching.set()
        try:
            self._search_steps(needle, origin, lambda: worker.is_cancelled)
        finally:
            run.searching.clear()

    def _search_steps(self, needle: str, origin: int, cancelled: Callable[[], bool]) -> None:
        run = self.run
        found: list[int] = []
        posted = time.monotonic()
        order = [(origin, None), (0, origin)]
        for start, stop in order:
            index = start
            while not cancelled():
                end = len(run) if stop is None else min(stop, len(run))
                if index >= end:
                    if stop is not None or (run.loaded.is_set() and index >= len(run)):
                        break
                    run.loaded.wait(0.05)
                    continue
                if run.matches(index, needle):
                    found.append(index)
                index += 1
                if time.monotonic() - posted > SEARCH_POST_EVERY:
                    self.post_message(self.SearchProgress(needle, sorted(found), done=False))
                    posted = time.monotonic()
        if not cancelled():
            self.post_message(self.SearchProgress(needle, sorted(found), done=True))

    class SearchProgress(Message):
        """The matches a search has found so far."""

        def __init__(self, needle: str, found: list[int], *, done: bool) -> None:
            super().__init__()
            self.needle = needle
            self.found = found
            self.done = done

    def on_browse_screen_search_progress(self, message: SearchProgress) -> None:
        if message.needle != self.query_text.lower():
            return  # an earlier search's
        self.matches = message.found
        self._searching = not message.done
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
        self._update_status()

    def _close_search(self) -> None:
        self.query_one("#search", Input).remove_class("-visible")
        self.table.focus()

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.focused is self.query_one("#search", Input):
            event.stop()
            self._close_search()

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
        self._update_status()

    # -- the payload outside the app -----------------------------------------------------------------------

    def _payload_text(self) -> tuple[Step, str] | None:
        step = self.current_step
        if step is None:
            say(self.app, "No step selected.", severity="warning")
            return None
        return step, pretty_json(step.payload)

    def action_copy(self) -> None:
        got = self._payload_text()
        if got is None:
            return
        step, text = got
        self.app.copy_to_clipboard(text)
        say(self.app, f"Copied the payload of step {step.index} ({len(text):,} characters) to the clipboard "
                    "(OSC 52; w writes it to a file instead).")

    def action_write(self) -> None:
        got = self._payload_text()
        if got is None:
            return
        step, text = got
        safe_id = re.sub(r"[^A-Za-z0-9._-]+", "-", self.run.cassette.id) or "run"
        default = str(Path.cwd() / f"{safe_id}.step-{step.index}.json")

        def write(path: str | None) -> None:
            if path is None:
                return
            try:
                atomic_write(Path(path).expanduser(), text.encode("utf-8", "surrogatepass"))
            except OSError as exc:
                say(self.app, f"Cannot write {path}: {exc.strerror or exc}", severity="error")
                return
            say(self.app, f"Wrote the payload of step {step.index} to {path}.")

        self.app.push_screen(PathPrompt(f"Write the payload of step {step.index} to:", default), write)

    def action_open_editor(self) -> None:
        self._open("editor")

    def action_open_pager(self) -> None:
        self._open("pager")

    def _open(self, kind: str) -> None:
        step = self.current_step
        if step is None:
            return
        command = viewer_command(kind)
        status = open_readonly(self.app, pretty_json(step), command, f"step-{step.index}")
        if status == 127:
            say(self.app, f"Cannot start {command[0]}; set ${'EDITOR' if kind == 'editor' else 'PAGER'}.",
                        severity="error")
        self.refresh(layout=True)

    # -- detail pane ---------------------------------------------------------------------------------------

    def action_tab(self, tab: str) -> None:
        self.detail.open_tab(tab)

    def action_fold(self) -> None:
        self.detail.toggle_fold()

    # -- other screens -------------------------------------------------------------------------------------

    def action_diff(self) -> None:
        if self.companion is not None:
            self._app.open_diff(self.run, self.companion)
            return
        self.app.push_screen(PathPrompt("Compare with which cassette? (path)", ""), self._load_companion)

    def _load_companion(self, path: str | None) -> None:
        if path:
            self._load_worker(path)

    @work(thread=True, exclusive=True, group="load")
    def _load_worker(self, path: str) -> None:
        try:
            other = Run.open(Path(path).expanduser())
        except CassetteError as exc:
            self.app.call_from_thread(say, self.app, str(exc), severity="error", timeout=10)
            return
        self.app.call_from_thread(self._companion_loaded, other)

    def _companion_loaded(self, other: Run) -> None:
        self.companion = other
        self._app.open_diff(self.run, other)

    def action_fork(self) -> None:
        step = self.current_step
        if step is None or step.type != "tool_result":
            points = self.run.indices("type", "tool_result")[:12]
            hint = f"tool results here: {', '.join(map(str, points))}" if points else "this run has none"
            say(self.app, f"A fork starts at a tool_result step ({hint}); press r to go to the next one.",
                        severity="warning")
            return
        self._app.open_fork(self.run, step.index)
