"""Shared test helpers: the original tool's fixtures (copied byte for byte into tests/fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.conftest_fakeapi"]

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
