"""A timer that belongs to no screen: a hidden widget that posts a (coalescing) message every so often until
its work is done, so a screen only answers the message and never keeps a timer of its own."""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

__all__ = ["Ticker"]


class Ticker(Widget):
    """Posts `message()` every `every` seconds; after a tick at which `done()` holds, it stops."""

    DEFAULT_CSS = "Ticker { display: none; }"

    def __init__(self, every: float, message: Callable[[], Message], *, done: Callable[[], bool] = lambda: False,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.every = every
        self.message = message
        self.done = done
        self.timer: Timer | None = None

    def on_mount(self) -> None:
        if not self.done():
            self.timer = self.set_interval(self.every, self._tick)

    def _tick(self) -> None:
        self.post_message(self.message())
        if self.done():
            self.stop()

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None

    @property
    def running(self) -> bool:
        return self.timer is not None
