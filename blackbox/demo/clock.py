"""The demo's clock: milliseconds since the epoch, injectable so tests can freeze time."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock", "frozen", "wall_clock"]

Clock = Callable[[], int]


def wall_clock() -> int:
    """Now, in integer milliseconds (what the TypeScript Blackbox's `Date.now()` stamps)."""
    return time.time_ns() // 1_000_000


def frozen(ms: int = 0) -> Clock:
    """A clock that always says `ms`: with 0 it reproduces the TypeScript Blackbox's fixture cassettes."""
    return lambda: ms
