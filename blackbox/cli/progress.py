"""A transient progress bar on stderr (rich) for long work on a terminal; nothing elsewhere."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from blackbox.cli.render import err_console

__all__ = ["progress"]


@contextmanager
def progress(label: str) -> Iterator[Callable[[int, int], None]]:
    """`update(done, total)` moves a bar labelled `label`; the bar disappears when the work is done."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err_console(),
                  transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
