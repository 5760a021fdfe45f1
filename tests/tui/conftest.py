"""Fixtures of the UI tests: fixture cassettes as runs, a large synthetic cassette, and a way to settle."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from blackbox_tui.app import BlackboxApp, load_runs
from blackbox_tui.screens.browse import REST_DELAY
from tests.conftest import FIXTURES
from tests.tui.synthetic import write_synthetic

TRIAGE = FIXTURES / "fleet-triage" / "cassettes"
INCIDENT = TRIAGE / "triage-incident.json"
HYPOTHESIS = TRIAGE / "triage-hypothesis.json"
FIXED = TRIAGE / "triage-fixed.json"
PARENT = FIXTURES / "traces" / "fork-parent.v2.json"
CHILD = FIXTURES / "traces" / "fork-child.v2.json"
SIZE = (120, 36)


def make_app(*paths: Path, diff: bool = False, theme: str | None = None) -> BlackboxApp:
    return BlackboxApp(load_runs(paths), diff=diff, theme=theme)


async def settle(pilot: Pilot[object]) -> None:
    """Let workers (chain check, comparison) finish and the screen catch up."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(REST_DELAY * 3)  # the detail pane renders once the cursor rests
    await pilot.pause()


@pytest.fixture(scope="session")
def large_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 10,000-step cassette (two-call tool rounds, every seventh result an error)."""
    return write_synthetic(tmp_path_factory.mktemp("large") / "large.json", 10_000, trace_id="large")


@pytest.fixture
def tampered(tmp_path: Path) -> Path:
    """triage-incident with one tool result edited after recording: loads, but the chain breaks at 5."""
    text = INCIDENT.read_text(encoding="utf-8").replace('"value": "91"', '"value": "35"', 1)
    path = tmp_path / "tampered.json"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def anyio_backend() -> str:
    """Pilot tests run on asyncio (anyio's pytest plugin drives the `async def` tests)."""
    return "asyncio"


@pytest.fixture(autouse=True)
def private_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test remembers fork settings in its own state folder, never the user's."""
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state


@pytest.fixture
def incident_copy(tmp_path: Path) -> Path:
    """triage-incident copied to a temporary folder, so a fork (written beside it) never touches fixtures."""
    path = tmp_path / "runs" / "triage-incident.json"
    path.parent.mkdir()
    path.write_bytes(INCIDENT.read_bytes())
    return path


@pytest.fixture(scope="session")
def sweep_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One sweep's folder (`tests/tui/sweeps`: real what-if forks, which take a moment), written once; a test
    that changes it works on its own copy."""
    from tests.tui.sweeps import write_sweep_folder

    folder = tmp_path_factory.mktemp("sweeps") / "coolant"
    write_sweep_folder(folder)
    return folder
