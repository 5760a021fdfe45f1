"""A transient progress bar on stderr (rich) for long work on a terminal; nothing elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from blackbox.cli.render import err_console
from blackbox.format.inert import inert

__all__ = ["Bar", "progress"]


class Bar:
    """`bar(done, total)` moves the bar; `bar.say(text)` shows what is happening now beside its label (a retry,
    a wait), so a terminal never sits silent."""

    def __init__(self, progress: Progress, task: TaskID, label: str) -> None:
        self._progress, self._task, self._label = progress, task, label

    def __call__(self, done: int, total: int) -> None:
        self._progress.update(self._task, completed=done, total=total)

    def say(self, text: str) -> None:
        self._progress.update(self._task, description=f"{self._label}: {inert(text)}")
        self._progress.refresh()  # now: the wait that follows is what the user must see explained


@contextmanager
def progress(label: str) -> Iterator[Bar]:
    """A bar labelled `label` (made inert), gone when the work is done."""
    label = inert(label)
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                  console=err_console(), transient=True) as bar:
        yield Bar(bar, bar.add_task(label, total=None), label)
