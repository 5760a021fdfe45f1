"""The browse screen's search: the box (`/` opens it) and the worker that finds the steps holding a text.

The worker runs off the UI thread, from the step the search started at to the end (waiting for the steps of a
large file still being read), then from the first step back to it, and posts what it has found so far every
`SEARCH_POST_EVERY` seconds (`SearchProgress`, which coalesces: a busy UI thread takes only the latest)."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events, work
from textual.widgets import Input
from textual.worker import get_current_worker

from ..messages import SearchClosed, SearchProgress
from ..run import Run

__all__ = ["SEARCH_POST_EVERY", "SearchBox"]

SEARCH_POST_EVERY = 0.15  # seconds between a search's reports of the matches found so far

class SearchBox(Input):
    """Hidden until `open`; enter submits (`Input.Submitted`), escape closes it (`SearchClosed`)."""

    DEFAULT_CSS = """
    SearchBox { border: round $accent; border-title-color: $text-muted; }
    """

    def __init__(self, run: Run, *, id: str | None = None) -> None:
        super().__init__(placeholder="search summaries and payloads (enter: find, escape: close)", id=id)
        self.run = run
        # what the keys do, on the border: the placeholder goes once something is typed, and the footer shows
        # no key while the box takes every printable one
        self.border_title = "search · enter: find · escape: close"

    def open(self, text: str) -> None:
        self.add_class("-visible")
        self.value = text
        self.screen.set_focus(self)  # now, not after the keys already typed: those belong in the box

    def close(self) -> None:
        self.remove_class("-visible")

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.close()
            self.post_message(SearchClosed())

    def find(self, needle: str, origin: int) -> None:
        """Search for `needle` (lower case) from step `origin`; an empty needle stops the search running."""
        if needle:
            self._search_worker(needle, origin)
        else:
            self.workers.cancel_group(self, "search")

    @work(thread=True, exclusive=True, group="search")
    def _search_worker(self, needle: str, origin: int) -> None:
        worker = get_current_worker()
        run = self.run
        run.searching.set()  # the chain check waits meanwhile: a search the user waits for goes first
        try:
            self._search_steps(needle, origin, lambda: worker.is_cancelled)
        finally:
            run.searching.clear()

    def _search_steps(self, needle: str, origin: int, cancelled: Callable[[], bool]) -> None:
        run = self.run
        found: list[int] = []
        posted = time.monotonic()
        for start, stop in [(origin, None), (0, origin)]:
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
                    self.post_message(SearchProgress(needle, sorted(found), done=False))
                    posted = time.monotonic()
        if not cancelled():
            self.post_message(SearchProgress(needle, sorted(found), done=True))
