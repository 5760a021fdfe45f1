"""How deep a JSON value may nest: every reader accepts the same depth, and walkers get room to judge it.

Imports nothing of Blackbox (the canonical module re-exports these names).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import ParamSpec, TypeVar

__all__ = ["MAX_NESTING", "NESTING_HEADROOM", "TOO_DEEP", "nesting_headroom", "reading_room", "with_headroom"]

# The original reads any depth (`JSON.parse` does not recurse) and hashes as deep as V8's stack lets its
# canonicalizer recurse: 2,600 to 4,200 levels.  Every reader here accepts MAX_NESTING levels, more than that,
# and refuses a deeper file in the same words, whatever the depth of the caller's own stack.
MAX_NESTING = 10_000
P = ParamSpec("P")
R = TypeVar("R")
TOO_DEEP = f"nested more than {MAX_NESTING:,} levels deep"

# The checks that walk a decoded value recursively (verify's scans, diff's field changes, msgspec's encoder)
# take a few frames per level: they run with this much room above the caller's frames.  Python-to-Python
# calls do not grow the C stack (3.11+), and msgspec's own recursion is shallow in C, so this is safe.
NESTING_HEADROOM = 4 * MAX_NESTING + 1_000


def _frames() -> int:
    """How deep the calling thread's Python stack is."""
    frame: FrameType | None = sys._getframe(1)
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


@contextmanager
def _recursion_limit(limit: int) -> Iterator[None]:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@contextmanager
def nesting_headroom() -> Iterator[None]:
    """Raise Python's recursion limit (never lower it) so a value any reader accepted can be walked."""
    limit = _frames() + NESTING_HEADROOM
    if sys.getrecursionlimit() >= limit:
        yield
        return
    with _recursion_limit(limit):
        yield


def with_headroom(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, run under `nesting_headroom` (for the readers' entry points that walk whole values)."""
    @functools.wraps(function)
    def walking(*args: P.args, **kwargs: P.kwargs) -> R:
        with nesting_headroom():
            return function(*args, **kwargs)
    return walking


@contextmanager
def reading_room() -> Iterator[None]:
    """While JSON is decoded: exactly room for MAX_NESTING levels (msgspec counts each level against Python's
    recursion limit) above the caller's stack, so every reader accepts and refuses the same depths."""
    with _recursion_limit(_frames() + MAX_NESTING + 8):
        yield
