"""pytest plugin (loaded by tests/conftest.py): a leaked socket, file or transport fails the test that leaked it.

An object left unclosed warns (`ResourceWarning`) from `__del__`, where no exception can propagate; the
`filterwarnings` of pyproject.toml make that warning an error, which pytest's unraisable-exception hook then
reports as a failure of the test during which the object was freed.  An object caught in a reference cycle is
freed only by the garbage collector, whenever it next runs: in whichever later test of the worker that is, or
after the last one, where nothing would report it (an xdist worker exits silently).  So the garbage a test
made is collected in its own teardown, after its fixtures are gone, where pytest reports what the collection
finds as that test's error: the test that leaked fails, no other.

A full collection walks every object of the process (~0.1-0.5 s with the SDKs imported): far too slow for each
of thousands of tests.  So the objects that exist when a test starts are frozen (`gc.freeze`: moved aside,
ignored by collections), the collection at its end walks only what the test made, and they are thawed again
after it.  What was older than the test and died in it (a module fixture's client) is left to the collections
that follow, and to the full one after the last test.
Run with `PYTHONTRACEMALLOC=20` to see where a reported object was made.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _garbage_collected_at_the_end() -> Iterator[None]:
    """Set up first, so torn down last: in the last test's teardown, where pytest still reports what it finds
    (what was older than any test, and a module or session fixture's own garbage)."""
    yield
    gc.collect()


@pytest.fixture(autouse=True)
def _garbage_collected_after_each_test() -> Iterator[None]:
    """Set up before the test's own fixtures (an autouse fixture of a plugin), so torn down after them, in its
    teardown: pytest reports what the collection finds as that test's error."""
    gc.freeze()  # what exists now is not the test's
    try:
        yield
    finally:
        try:
            gc.collect()
        finally:
            gc.unfreeze()
