"""Shared test helpers: the original tool's fixtures (copied byte for byte into tests/fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.conftest_fakeapi"]

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(autouse=True, scope="session")
def _scratch_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Temporary folders made by the code under test (and by agents a test kills before they clean up) go in
    pytest's own temporary tree, never the system's: a test run leaves no blackbox-* folders in /tmp."""
    import os
    import tempfile

    scratch = tmp_path_factory.mktemp("tmpdir")
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = str(scratch)
