"""The Blackbox terminal UI: opens browse (one cassette) or diff (two), and every other screen through its door.

`SCREENS` lists each screen that opens from another (`.doors`): the app gives every screen the keys of the doors
that open from it and opens the screen behind a key (`action_open`), so the screens never open each other."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import get_current_worker

from .commands import ScreenActions
from .follow import Follower
from .keys import Keyed
from .messages import RunChanged, RunGrew
from .run import Run
from .screens.base import BlackboxModal, BlackboxScreen
from .screens.both_values import BothValues
from .screens.browse import BrowseScreen
from .screens.diff import DiffScreen
from .screens.fork import ForkScreen
from .screens.help import HelpScreen
from .screens.sweep import SweepScreen
from .screens.timeline import TimelineScreen
from .state import recall_theme, remember_theme

__all__ = ["SCREENS", "BlackboxApp", "load_runs"]

#: Every screen that opens from another, each through its `DOOR`; on a screen they open from, their keys come in
#: this order (after the screen's own).  A new screen: its module and one line here.
SCREENS: list[type[BlackboxScreen[Any]] | type[BlackboxModal[Any]]] = [
    DiffScreen, BothValues, BrowseScreen, ForkScreen, TimelineScreen,
]

# Seconds a background thread (reading a large file, checking a chain, searching) may hold the interpreter
# while the UI thread waits for it: Python's default, 5 ms, makes every key wait that long.
SWITCH_INTERVAL = 0.0005


def load_runs(paths: Sequence[str | os.PathLike[str]]) -> list[Run]:
    """Load cassettes in parallel threads; the first `CassetteError` (one clear line) propagates."""
    with ThreadPoolExecutor(max_workers=max(1, len(paths))) as pool:
        return list(pool.map(Run.open, paths))


class BlackboxApp(Keyed, App[None]):
    """`runs[0]` is browsed; with `diff=True` the diff of runs[0] and runs[1] opens on top of it; with `sweep`
    (a sweep's folder, and no runs) the sweep screen opens instead, and each branch's diff from it."""

    TITLE = "blackbox"
    BINDING_PREFIX = "app"
    COMMANDS: ClassVar = App.COMMANDS | {ScreenActions}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
    ]

    def __init__(self, runs: Sequence[Run], *, diff: bool = False, theme: str | None = None,
                 demo: bool = False, remember_theme: bool = False, follow: Follower | None = None,
                 agent_command: Sequence[str] = (), sweep: str | os.PathLike[str] | None = None) -> None:
        """`remember_theme`: start in the theme last chosen and keep the one chosen now (the CLI's UI; tests
        and snapshots leave it off so they never depend on the user's state).  `agent_command`: the agent the UI
        was opened with (`blackbox tui run.json -- python agent.py`), which the fork screen continues with."""
        super().__init__()
        if not runs and sweep is None:
            raise ValueError("BlackboxApp needs at least one run, or a sweep's folder")
        self.runs = list(runs)
        self.sweep = sweep
        self.open_with_diff = diff and len(self.runs) > 1
        self.demo = demo  # the built-in demo: its fork screen offers the demo agent
        self.agent_command = tuple(agent_command)
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
        if self.sweep is not None:
            self.push_screen(SweepScreen(self.sweep))
            return
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

    # -- routing: every screen opens through its door ----------------------------------------------------

    def add_doors(self, screen: BlackboxScreen[Any] | BlackboxModal[Any]) -> None:
        """Give `screen` the key of each door that opens from it (after its own keys: one of those wins)."""
        prefix = screen.BINDING_PREFIX
        bindings = screen._bindings.key_to_bindings
        for cls in SCREENS:
            door = cls.DOOR
            if door is None or prefix not in door.on:
                continue
            binding = Binding(door.key, f"app.open('{cls.BINDING_PREFIX}')", door.description, show=door.on[prefix],
                              key_display=door.key_display, tooltip=door.tooltip, id=f"{prefix}.{cls.BINDING_PREFIX}")
            for key in door.key.split(","):
                bindings.setdefault(key.strip(), []).append(binding)
        screen.refresh_bindings()

    def action_open(self, name: str) -> None:
        """Open the screen whose door is `name` (its `BINDING_PREFIX`) from the current screen."""
        origin: Screen[object] = self.screen
        here = origin.here() if isinstance(origin, BlackboxScreen | BlackboxModal) else None
        target = next((cls for cls in SCREENS if name == cls.BINDING_PREFIX), None)
        if here is not None and target is not None:
            target.open_from(self, here)

    def open_diff(self, a: Run, b: Run, *, at: int | None = None, replace: bool = False) -> None:
        """The diff of `a` and `b`, on `at` (else the first divergence); `replace`: instead of the current screen."""
        self.read_in_background(a)
        self.read_in_background(b)
        screen = DiffScreen(a, b, at=at)
        if replace:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))
