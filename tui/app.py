"""The Blackbox terminal UI: opens browse (one cassette) or diff (two) and routes between the screens."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.worker import get_current_worker

from .commands import ScreenActions
from .follow import Follower
from .keys import Keyed
from .messages import RunChanged, RunGrew
from .run import Run
from .screens.browse import BrowseScreen
from .screens.diff import DiffScreen
from .screens.help import HelpScreen
from .state import recall_theme, remember_theme

__all__ = ["BlackboxApp", "load_runs"]

# Seconds a background thread (reading a large file, checking a chain, searching) may hold the interpreter
# while the UI thread waits for it: Python's default, 5 ms, makes every key wait that long.
SWITCH_INTERVAL = 0.0005


def load_runs(paths: Sequence[str | os.PathLike[str]]) -> list[Run]:
    """Load cassettes in parallel threads; the first `CassetteError` (one clear line) propagates."""
    with ThreadPoolExecutor(max_workers=max(1, len(paths))) as pool:
        return list(pool.map(Run.open, paths))


class BlackboxApp(Keyed, App[None]):
    """`runs[0]` is browsed; with `diff=True` the diff of runs[0] and runs[1] opens on top of it."""

    TITLE = "blackbox"
    BINDING_PREFIX = "app"
    COMMANDS: ClassVar = App.COMMANDS | {ScreenActions}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
    ]

    def __init__(self, runs: Sequence[Run], *, diff: bool = False, theme: str | None = None,
                 demo: bool = False, remember_theme: bool = False, follow: Follower | None = None) -> None:
        """`remember_theme`: start in the theme last chosen and keep the one chosen now (the CLI's UI; tests
        and snapshots leave it off so they never depend on the user's state)."""
        super().__init__()
        if not runs:
            raise ValueError("BlackboxApp needs at least one run")
        self.runs = list(runs)
        self.open_with_diff = diff and len(self.runs) > 1
        self.demo = demo  # the built-in demo: its fork screen offers the demo agent
        self.remember_theme = remember_theme
        self.follow = follow
        self._reading: list[Run] = []
        self._frame_up = False  # the first frame is up (Textual's `Ready`)
        self._exit_asked: int | None = None  # an exit asked before then
        remembered = recall_theme() if remember_theme else ""
        if theme or remembered in self.available_themes:
            self.theme = theme or remembered

    def on_mount(self) -> None:
        sys.setswitchinterval(SWITCH_INTERVAL)
        if self.remember_theme:
            self.theme_changed_signal.subscribe(self, lambda theme: remember_theme(theme.name))
        companion = self.runs[1] if len(self.runs) > 1 else None
        self.push_screen(BrowseScreen(self.runs[0], companion=companion, follow=self.follow))
        if self.open_with_diff and companion is not None:
            self.open_diff(self.runs[0], companion)

    def exit_when_ready(self, code: int) -> None:
        """Exit with `code`, now if the first frame is up, else as soon as it is: an exit asked while the
        screens mount removes their widgets under their own mount handlers (a traceback, exit status 1)."""
        if self._frame_up:
            self.exit(None, code)
        else:
            self._exit_asked = code

    def on_ready(self) -> None:
        self._frame_up = True
        if self._exit_asked is not None:
            self.exit(None, self._exit_asked)

    # -- large files, read in the background -------------------------------------------------------------

    def read_in_background(self, run: Run) -> None:
        """Start reading the rest of a large file (once); each screen showing it hears of every change."""
        loading = run.loading
        if loading is None or loading.started:
            return
        loading.started = True
        self._reading.append(run)
        self.run_worker(lambda: self._read_rest(run), thread=True, group="read", name=f"read {run.name}")

    def _read_rest(self, run: Run) -> None:
        worker = get_current_worker()
        run.read_rest(lambda change: self.post_message(RunChanged(run, change)), lambda: worker.is_cancelled)

    def on_run_changed(self, message: RunChanged) -> None:
        """Apply the change, then tell every screen (`RunGrew`: a burst of changes redraws a screen once)."""
        message.change()
        for screen in self.screen_stack:
            screen.post_message(RunGrew(message.run))

    def on_unmount(self) -> None:
        for run in [*self.runs, *self._reading]:
            run.close()
        if self.follow is not None:
            self.follow.close()

    # -- routing -------------------------------------------------------------------------------------------

    def open_diff(self, a: Run, b: Run, *, at: int | None = None) -> None:
        self.read_in_background(a)
        self.read_in_background(b)
        self.push_screen(DiffScreen(a, b, at=at))

    def open_fork(self, run: Run, index: int) -> None:
        from .screens.fork import ForkScreen

        self.push_screen(ForkScreen(run, index, demo=self.demo))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

