"""Shared test helpers: the original tool's fixtures (copied byte for byte into tests/fixtures)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["tests.conftest_fakeapi", "tests.failing_disk", "tests.leak_check", "tests.report_text"]

# mcp's `stdio_client(server, errlog=sys.stderr)` binds its default when first imported: imported first inside a
# test that captures with capsys, every later stdio server of that worker (the frameworks' too) would get a
# stream with no file descriptor (`io.UnsupportedOperation: fileno`). Imported here, it binds a real one.
with contextlib.suppress(ImportError):  # the MCP tests skip without it
    import mcp.client.stdio  # noqa: F401

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


# Tests that CI must run, never skip: a missing tool there (tmux) would otherwise pass the build quietly.
# CI is set by CI services; .ci/run sets BLACKBOX_CI.
REQUIRED_IN_CI = ("tests/tui/test_e2e_tmux.py", "tests/test_export_mlflow.py")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    in_ci = bool(os.environ.get("CI") or os.environ.get("BLACKBOX_CI"))
    if report.skipped and in_ci and item.nodeid.startswith(REQUIRED_IN_CI):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} was skipped in CI ({report.longrepr}); CI must run it: install what "
                           "it needs (tmux for the terminal test, the otel-e2e extra for MLflow's)")
    return None


@pytest.fixture(autouse=True, scope="session")
def _scratch_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Temporary folders made by the code under test (and by agents a test kills before they clean up) go in
    pytest's own temporary tree, never the system's: a test run leaves no blackbox-* folders in /tmp."""
    scratch = tmp_path_factory.mktemp("tmpdir")
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = str(scratch)
