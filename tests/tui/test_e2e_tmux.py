"""End to end in a real terminal: `blackbox tui` inside tmux, driven by send-keys, read with capture-pane."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from blackbox_tui.state import ForkSettings, remember_fork
from tests.tui.conftest import HYPOTHESIS, INCIDENT, TRIAGE

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

AGENT = Path(__file__).with_name("triage_agent.py")
REPLIES = TRIAGE.parent / "inputs" / "urgent-replies.json"
READING = TRIAGE.parent / "inputs" / "live-reading.json"


class Terminal:
    """One detached tmux session of 120×36 running a command."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.name = f"bbtui-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        shell = f"env -u COLUMNS -u LINES {exports} {shlex.join(command)}; echo EXITED $?; sleep 30"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "120", "-y", "36", shell], check=True)
        # without a client, some tmux versions keep the default 80×24: pin the size explicitly
        subprocess.run(["tmux", "set-option", "-t", self.name, "window-size", "manual"], check=False)
        subprocess.run(["tmux", "resize-window", "-t", self.name, "-x", "120", "-y", "36"], check=False)

    def screen(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-t", self.name, "-p"], capture_output=True,
                              text=True, check=False).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        for key in keys:
            subprocess.run(["tmux", "send-keys", "-t", self.name, *(["-l"] if literal else []), key], check=True)
            time.sleep(0.08)

    def wait_for(self, *texts: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if any(text in shown for text in texts):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"none of {texts!r} appeared; the screen shows:\n{shown}")
            time.sleep(0.2)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, check=False)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[callable]:
    opened: list[Terminal] = []
    env = {"TERM": "xterm-256color", "XDG_STATE_HOME": str(tmp_path / "state"), "PATH": os.environ["PATH"],
           "HOME": os.environ.get("HOME", str(tmp_path)), "NO_COLOR": ""}

    def start(*args: str) -> Terminal:
        term = Terminal([sys.executable, "-m", "blackbox", "tui", *args], env)
        opened.append(term)
        return term

    yield start
    for term in opened:
        term.close()


def test_browse_then_diff_in_a_real_terminal(terminal) -> None:
    term = terminal(str(INCIDENT))
    shown = term.wait_for("└─ Tool result: get_telemetry → ok")
    shown = term.wait_for("chain intact")
    assert "triage-incident" in shown and "17 steps" in shown
    term.keys("j", "j", "j", "j", "j")
    shown = term.wait_for("step 5 of 17")
    assert '"vehicle_id": "VAN-14"' in shown
    term.keys("d")
    term.wait_for("Compare with which cassette?")
    term.keys(str(HYPOTHESIS), literal=True)
    term.keys("Enter")
    shown = term.wait_for("first divergence at step 5")
    assert "same status, but the final answer changed" in shown
    assert "≠" in shown and "◀" in shown
    term.keys("q")
    assert "EXITED 0" in term.wait_for("EXITED", timeout=10)


def test_demo_opens_with_its_fork_beside_it(terminal) -> None:
    term = terminal("--demo")
    shown = term.wait_for("chain intact")
    assert "example-run-001" in shown and "15 steps" in shown
    term.keys("d")
    shown = term.wait_for("first divergence at step")
    assert "example-run-001" in shown


def test_fork_from_the_ui_then_see_the_divergence(terminal, tmp_path: Path, monkeypatch) -> None:
    """Fork the fleet-triage incident at step 5 from the fork screen, with the live reading typed in."""
    parent = tmp_path / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    remember_fork(parent, ForkSettings(command=f"{sys.executable} {AGENT}", continuation="script",
                                       script=str(REPLIES)))
    term = terminal(str(parent))
    term.wait_for("chain intact")
    term.keys("j", "j", "j", "j", "j", "f")
    term.wait_for("New tool result (JSON)")
    # select the whole recorded result (F7) and type the live reading in its place
    reading = json.dumps(json.loads(READING.read_text(encoding="utf-8")), separators=(",", ":"))
    term.keys("F7")
    term.keys(reading, literal=True)
    term.wait_for('"value":"124"')
    term.keys("C-r")
    shown = term.wait_for("first divergence at step 5", "error:", timeout=90)
    assert "first divergence at step 5" in shown, shown
    assert (tmp_path / "triage-incident-fork-at-5.json").is_file()
