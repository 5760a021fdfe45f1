"""Reading a large file in the background: how far it has got, and the whole-file loader's verdict asked of a
child process (a whole-file load holds the interpreter for seconds; the UI must not wait on it)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from blackbox.format.indexing import Batch, Indexer

__all__ = ["Deliver", "Loading", "whole_file_problem"]


_VERDICT = """
import sys
from blackbox.errors import CassetteError
from blackbox.format.lazy import load_lazy
try:
    load_lazy(sys.argv[1])
except CassetteError as exc:
    sys.stdout.write(str(exc))
    sys.exit(3)
"""


def whole_file_problem(path: Path, closed: threading.Event) -> str | None:
    """The whole-file loader's one-line error for `path`, from a child process; "" if it loads, None if
    `closed` was set meanwhile (the child is then stopped)."""
    child = subprocess.Popen([sys.executable, "-c", _VERDICT, str(path)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    while True:
        try:
            out, _ = child.communicate(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            if closed.is_set():
                child.kill()
                child.wait()
                return None
    if child.returncode == 3:
        return out.decode("utf-8", "replace").strip() or f"{path}: cannot be read"
    return ""  # it loads (or the child could not run: the load here says)


class Loading:
    """A large file still being read in the background (`Run.read_rest`): how far it has got."""

    def __init__(self, indexer: Indexer, batches: Iterator[Batch]) -> None:
        self.indexer = indexer
        self.batches = batches
        self.started = False

    @property
    def fraction(self) -> float:
        return self.indexer.position / self.indexer.size if self.indexer.size else 1.0


# Hands a change to the UI thread to apply (without waiting for it); False once the UI is gone.
Deliver = Callable[[Callable[[], None]], bool]
