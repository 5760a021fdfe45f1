"""SVG snapshots at 80×24 of the screens test_snapshots.py leaves at 120×36 (browse, diff, both values, help, the
fork and the timeline have theirs there): a search, the what-if fork, the fork continued by the agent the UI was
opened with, the fork of an MCP text result, a recording followed, and a tool result's fork refused by the
agent's checks.  Update with `--snapshot-update`, then look at them."""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from blackbox.live.recorder import journal_path
from blackbox_tui.app import BlackboxApp, load_runs
from blackbox_tui.follow import Follower
from blackbox_tui.run import Run
from blackbox_tui.state import ForkSettings, remember_fork
from tests.tui.conftest import INCIDENT, TRIAGE, make_app, settle
from tests.tui.test_follow import line, recording
from tests.tui.test_fork_mcp_text import mcp_run
from tests.tui.test_snapshots import REPO, steady

SMALL = (80, 24)
REPLIES = TRIAGE.parent / "inputs" / "urgent-replies.json"


@pytest.fixture(autouse=True)
def repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths are shown relative to the working directory: make it the same everywhere."""
    monkeypatch.chdir(REPO)


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A folder under the repository's tests/ (paths shown relative, the same on every machine), removed after."""
    folder = REPO / "tests" / "tui" / f"runs-{zlib.crc32(tmp_path.name.encode()):08x}"  # short, one per test
    folder.mkdir()
    yield folder
    for path in sorted(folder.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    folder.rmdir()


def test_search_80x24(snap_compare) -> None:
    app = make_app(INCIDENT)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.screen.search("VAN-14")
        await steady("n")(pilot)

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_search_box_80x24(snap_compare) -> None:
    app = make_app(INCIDENT)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("slash")
        await settle(pilot)
        pilot.app.screen.query_one("#search", Input).value = "coolant"
        await steady()(pilot)

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_whatif_fork_80x24(snap_compare, runs: Path) -> None:
    parent = runs / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    remember_fork(parent, ForkSettings(runner="whatif", continuation="inline",
                                       replies='[{"type": "final_answer", "text": "Stop the van."}]'))
    app = make_app(parent)
    assert snap_compare(app, terminal_size=SMALL, run_before=steady("j", "j", "j", "j", "j", "f"))


def test_agent_fork_80x24(snap_compare, runs: Path) -> None:
    """`blackbox tui run.json -- python triage_agent.py`: the agent chosen and its command filled in."""
    parent = runs / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    remember_fork(parent, ForkSettings(continuation="script", script=str(REPLIES.relative_to(REPO))))
    app = BlackboxApp(load_runs([parent]), agent_command=["python", "tests/tui/triage_agent.py"])
    assert snap_compare(app, terminal_size=SMALL, run_before=steady("j", "j", "j", "j", "j", "f", "tab"))


def test_agent_fork_refused_80x24(snap_compare, runs: Path) -> None:
    """A replies file the command would refuse: the form says so in the command's words, Run stays off."""
    parent = runs / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    bad = runs / "replies.json"
    bad.write_text('[{"type": "final_answer"}]', encoding="utf-8")
    remember_fork(parent, ForkSettings(runner="agent", command=f"{Path(sys.executable).name} agent.py",
                                       continuation="script", script=str(bad.relative_to(REPO))))
    app = make_app(parent)
    assert snap_compare(app, terminal_size=SMALL, run_before=steady("j", "j", "j", "j", "j", "f"))


def test_mcp_text_fork_80x24(snap_compare, runs: Path) -> None:
    app = make_app(mcp_run(runs / "mcp.json"))
    assert snap_compare(app, terminal_size=SMALL, run_before=steady("j", "j", "j", "f"))


def test_follow_80x24(snap_compare, runs: Path) -> None:
    recorded = json.loads(INCIDENT.read_text(encoding="utf-8"))
    out = runs / "run.json"
    journal = journal_path(out)
    header = {"blackboxJournal": 1, "id": recorded["id"], "createdAt": recorded["createdAt"], "out": str(out)}
    with recording(journal):
        journal.write_bytes(line(header) + b"".join(line(s) for s in recorded["steps"][:6]))
        follower = Follower(journal)
        first = follower.poll()
        run = Run(follower.cassette(), out)
        run.append(first.steps)
        app = BlackboxApp([run], follow=follower)
        assert snap_compare(app, terminal_size=SMALL, run_before=steady("G"))
