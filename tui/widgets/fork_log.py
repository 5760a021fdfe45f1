"""What a running fork shows: its status line (running, an error, done) and the log of its output."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Log, Static

from blackbox.format.inert import inert

__all__ = ["ForkLog", "ForkStatus"]


class ForkStatus(Static):
    """One line (or a few) about the run; `kind` "error" or "ok" colours it."""

    def show(self, text: str, kind: str = "") -> None:
        self.set_class(kind == "error", "-error")
        self.set_class(kind == "ok", "-ok")
        self.update(Content(inert(text, keep_newlines=True)))


class ForkLog(Log):
    """The fork's output, line by line; hidden until a run starts."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, highlight=False)

    def start(self) -> None:
        self.clear()
        self.add_class("-shown")
