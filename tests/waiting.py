"""Waiting in tests: for a condition, never for a clock.

A test waits for what it checks (a line, a file, a process's end, a screen showing every text it then
asserts).  `HANG_GUARD` is only there so that a hung test fails instead of hanging CI: it is far beyond what
any wait takes on a loaded machine, and no test's verdict depends on it.  Speed is measured in `bench/`.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["HANG_GUARD", "POLL", "ended", "pilot_until", "until"]

HANG_GUARD = 600.0  # seconds: a hang, not a slow machine
POLL = 0.02

T = TypeVar("T")


def until(condition: Callable[[], T], what: str, *, guard: float = HANG_GUARD) -> T:
    """Poll `condition` until it returns something truthy and return that; past the hang guard, fail naming
    `what` was awaited."""
    deadline = time.monotonic() + guard
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"hung: still waiting for {what} after {guard:.0f} s")
        time.sleep(POLL)


def ended(proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> int:
    """The process's return code once it has ended (a hang guard, not a time limit)."""
    return proc.wait(HANG_GUARD)


async def pilot_until(pilot: Any, condition: Callable[[], object], what: str) -> None:
    """Let a Textual app (its Pilot) run until `condition` holds; past the hang guard, fail naming `what`."""
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"hung: still waiting for {what} after {HANG_GUARD:.0f} s")
        await pilot.pause(0.05)
