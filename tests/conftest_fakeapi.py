"""pytest plugin with the `fake_api` fixture (load it with `pytest_plugins = ["tests.conftest_fakeapi"]`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakeapi import FakeAPI


@pytest.fixture
def fake_api() -> Iterator[FakeAPI]:
    """A running fake Anthropic/OpenAI API on 127.0.0.1; stopped after the test.

    A brain that raised fails the test at teardown, so a broken script never passes silently.
    """
    fake = FakeAPI().start()
    try:
        yield fake
    finally:
        fake.close()
    if fake.brain_errors:
        first = fake.brain_errors[0]
        raise AssertionError(f"the fake API's brain failed: {first!r}") from first
