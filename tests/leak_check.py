"""pytest plugin (loaded by tests/conftest.py): a leaked socket, file or transport fails the run.

An object left unclosed warns (`ResourceWarning`) from `__del__`, where no exception can propagate; the
`filterwarnings` of pyproject.toml make that warning an error, which pytest's unraisable-exception hook then
reports as a failure of the test during which the object was freed.  An object caught in a reference cycle is
freed only by the garbage collector, possibly after the last test, where nothing would report it (an xdist
worker exits silently): so the garbage is collected as the last test of a process ends, and such a leak fails
that test's teardown.  Run with `PYTHONTRACEMALLOC=20` to see where a reported object was made.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _garbage_collected_at_the_end() -> Iterator[None]:
    """Set up first, so torn down last: in the last test's teardown, where pytest still reports what it finds."""
    yield
    gc.collect()
