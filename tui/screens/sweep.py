"""`blackbox tui SWEEP-FOLDER/`: a sweep at a glance — the pass-rate table, one row per variant, and every branch
listed by verdict (failures first) — and any branch opened beside the parent in the diff, at the step where it
first diverged.

The folder is read only through `blackbox.many.folder` (by `..sweeping`).  A sweep still running rewrites its
manifest after every branch: the screen looks at it every `LOOK_EVERY` seconds (and `r` reads it at once), so
branches arrive as they finish.  Whatever cannot be read (a broken or missing manifest, a branch's missing
file, a cassette that does not load) is one line on the screen, and the rest stays usable."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static

from blackbox.errors import CassetteError
from blackbox.format.inert import inert
from blackbox.many.folder import Branch

from ..messages import RowMoved, SweepTick
from ..run import Run
from ..sweeping import FILTERS, ORDER, SweepFolder, branch_name
from ..widgets.branch_list import BranchList
from ..widgets.fit_footer import FitFooter
from ..widgets.pass_rates import PassRates
from ..widgets.ticker import Ticker
from .base import BlackboxScreen
from .prompts import PickOne

__all__ = ["LOOK_EVERY", "SweepScreen"]

LOOK_EVERY = 1.0  # seconds between looks at the manifest (a stat; it is read only when it changed)
OPEN_HINT = "enter: beside the parent at its first divergence · t: filter · r: read again"
UNREAD = ("Nothing to show until the manifest can be read: r reads it again (and a sweep still running rewrites "
          "it after each branch, which this screen notices).")


class SweepScreen(BlackboxScreen[None]):
    """The sweep in `folder`; `open_branch` shows one branch beside `parent.json` in the diff."""

    HELP = ("A sweep: the pass rate of each variant (with its 95% Wilson interval, the first step where a branch "
            "diverged, how many changed the run's outcome, tokens, time and cost when prices were given) and "
            "every branch by verdict, failures first. Enter opens a branch beside the parent in the diff.")
    BINDING_PREFIX = "sweep"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_branch", "Diff with parent",
                tooltip="This branch beside the parent run, side by side, at its first divergence",
                id="sweep.open_branch"),
        Binding("t", "filter", "Filter", tooltip="Show only the branches of one verdict", id="sweep.filter"),
        Binding("r", "refresh", "Read again",
                tooltip="Read the sweep's manifest again (a running sweep's is also looked at every second)",
                id="sweep.refresh"),
        Binding("escape", "clear_filter", "Show all branches", show=False, id="sweep.clear_filter"),
    ]

    DEFAULT_CSS = """
    SweepScreen {
        #sweep-header { height: auto; padding: 0 1; background: $panel; text-wrap: nowrap;
                        text-overflow: ellipsis; }
        #sweep-problem { display: none; height: auto; padding: 0 1; background: $error; color: $text;
                         text-style: bold; }
        &.-problem #sweep-problem { display: block; }
        #branch-columns { height: 1; padding: 0; color: $text-muted; background: $panel; text-style: bold;
                          text-wrap: nowrap; }
        #branches { height: 1fr; }
        #sweep-unread { display: none; height: 1fr; padding: 1 2; color: $text-muted; }
        &.-unread #sweep-unread { display: block; }
        &.-unread #pass-rates, &.-unread #branch-columns, &.-unread #branches { display: none; }
        #sweep-status { height: auto; max-height: 3; padding: 0 1; color: $text-muted; background: $panel;
                        text-wrap: nowrap; text-overflow: ellipsis; }
        #sweep-status.-problem { color: $text-error; text-style: bold; text-wrap: wrap; }
    }
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        super().__init__()
        self.sweep = SweepFolder(Path(folder))
        self.only = "all"  # the verdict shown (the filter), or all
        self._runs: dict[Path, tuple[tuple[int, int], Run]] = {}  # loaded cassettes, by path, with their stat
        self._runs_lock = threading.Lock()
        self.sweep.look(force=True)

    def compose(self) -> ComposeResult:
        yield Static(id="sweep-header")
        yield Static(id="sweep-problem")
        yield PassRates(id="pass-rates")
        yield Static(id="branch-columns")
        yield BranchList(id="branches")
        yield Static(UNREAD, id="sweep-unread")
        yield Static(id="sweep-status")
        yield FitFooter()
        yield Ticker(LOOK_EVERY, SweepTick)

    def on_mount(self) -> None:
        self.table.focus()
        self._show(keep=None)

    def on_unmount(self) -> None:
        with self._runs_lock:
            for _, run in self._runs.values():
                run.close()
            self._runs.clear()

    def on_resize(self) -> None:
        self.call_after_refresh(self._show_columns)

    @property
    def table(self) -> BranchList:
        return self.query_one("#branches", BranchList)

    # -- what is shown -------------------------------------------------------------------------------------

    def _show(self, keep: Branch | None) -> None:
        """Draw the manifest as last read; the cursor stays on `keep` (the same variant and repeat) if listed."""
        sweep = self.sweep
        self.query_one("#sweep-header", Static).update(self._header())
        self.set_class(bool(sweep.problem), "-problem")
        self.set_class(sweep.sweep is None, "-unread")
        self.query_one("#sweep-problem", Static).update(Content("⚠ " + sweep.problem) if sweep.problem else "")
        self.query_one(PassRates).show(sweep.rows, sweep.labels)
        table = self.table
        table.branches = sweep.listed(self.only)
        at = 0
        if keep is not None:
            at = next((i for i, b in enumerate(table.branches)
                       if (b.variant, b.repeat) == (keep.variant, keep.repeat)), min(table.cursor, len(table.branches)))
        table.rows_changed(at)
        self._show_columns()
        if not self.query_one("#sweep-status", Static).has_class("-problem"):
            self._status(self._hint())

    def _header(self) -> Content:
        sweep = self.sweep
        title = Content.assemble(("Sweep ", "bold"), (sweep.shown, "bold $text-accent"))
        manifest = sweep.sweep
        if manifest is None:
            return title + Content.styled("  (no manifest could be read)", "$text-muted")
        settings = manifest.settings
        count = len(manifest.variants)
        title += Content.styled(f"  {count} variant{'s' if count != 1 else ''} × {settings.repeat} at step "
                                f"{settings.at} of {inert(settings.source)} ({settings.mode})", "$text-muted")
        counts = sweep.counts()
        total = len(manifest.branches)
        done = total - counts["running"]
        parts = [f"{counts[v]} {v}" for v in ORDER if counts[v] and v != "running"]
        state = "finished" if sweep.finished else f"{counts['running']} not finished (running, or stopped)"
        second = Content.assemble((f"{done} of {total} branches done", "bold"),
                                  (f": {', '.join(parts) or 'none yet'}  ·  {state}", "$text-muted"))
        return Content("\n").join([title, second])

    def _hint(self) -> str:
        """The status line when nothing is wrong: the filter, and what the cursor's variant's pass rate says
        against the baseline's (the sweep report's words), else what the keys do."""
        branch = self.table.branch
        said = self.sweep.labels.get(branch.variant, "") if branch is not None else ""
        text = f"{inert(branch.variant)}: {said}" if branch is not None and said else OPEN_HINT
        if self.only != "all":
            return f"showing: {FILTERS[self.only].lower()} (escape shows all) · {text}"
        return text

    def _show_columns(self) -> None:
        width = self.table.content_width or self.size.width
        self.query_one("#branch-columns", Static).update(Content(self.table.header(width)))

    @on(RowMoved, "#branches")
    def _moved(self) -> None:
        """A problem said about one branch is not said of the next."""
        self._status(self._hint())

    def _status(self, text: str, *, problem: bool = False) -> None:
        status = self.query_one("#sweep-status", Static)
        status.set_class(problem, "-problem")
        status.update(Content(text))  # Content: a file name is not markup

    # -- reading the folder again ----------------------------------------------------------------------------

    def on_sweep_tick(self) -> None:
        if self.sweep.look():
            self._show(keep=self.table.branch)

    def action_refresh(self) -> None:
        self.sweep.look(force=True)
        self._status(self._hint())
        self._show(keep=self.table.branch)

    def action_filter(self) -> None:
        counts = self.sweep.counts()
        options = [("all", f"{FILTERS['all']} ({len(self.sweep.branches)})")]
        options += [(verdict, f"{FILTERS[verdict]} ({counts[verdict]})") for verdict in ORDER if counts[verdict]]
        self.app.push_screen(PickOne("Show only the branches that…", options), self.apply_filter)

    def apply_filter(self, choice: str | None) -> None:
        """`all` or a verdict (`fail`, `error`, `pass`, `running`)."""
        if choice is None or choice not in FILTERS:
            return
        self.only = choice
        self._show(keep=self.table.branch)

    def action_clear_filter(self) -> None:
        if self.only != "all":
            self.apply_filter("all")

    # -- a branch beside its parent ----------------------------------------------------------------------

    def action_open_branch(self) -> None:
        branch = self.table.branch
        if branch is None:
            self._status("no branch to open" + (f" (none {FILTERS[self.only].lower()})" if self.only != "all"
                                                else ""), problem=True)
            return
        path, why = self.sweep.branch_file(branch)
        if path is None:
            self._status(why, problem=True)
            return
        self._status(f"opening {branch_name(branch)}…")
        self.run_worker(lambda: self._load(branch, path), thread=True, exclusive=True, group="open-branch")

    def _load(self, branch: Branch, path: Path) -> None:
        """(A thread: a large cassette takes a moment to open.)"""
        try:
            parent = self._run(self.sweep.parent)
        except CassetteError as exc:
            self.app.call_from_thread(self._status, f"the parent: {exc}", problem=True)
            return
        try:
            run = self._run(path)
        except CassetteError as exc:
            self.app.call_from_thread(self._status, f"{branch_name(branch)}: {exc}", problem=True)
            return
        self.app.call_from_thread(self._opened, branch, parent, run)

    def _run(self, path: Path) -> Run:
        """The cassette at `path`, loaded once (again when the file changed: a sweep resumed rewrites it)."""
        try:
            stat = path.stat()
            seen = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            seen = (0, 0)  # the loader says what is wrong
        with self._runs_lock:
            held = self._runs.get(path)
            if held is not None and held[0] == seen:
                return held[1]
        run = Run.open(path)
        with self._runs_lock:
            self._runs[path] = (seen, run)
        return run

    def _opened(self, branch: Branch, parent: Run, run: Run) -> None:
        self._status(self._hint())
        self.blackbox.open_diff(parent, run, at=branch.divergence)
