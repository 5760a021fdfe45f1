"""An agent that dies before its Blackbox session starts: the CLI says so, with the agent's last error line,
and its stderr still reaches the terminal as it was written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.waiting import HANG_GUARD


def test_an_agent_that_dies_before_its_session_is_named_with_its_last_error(tmp_path: Path) -> None:
    agent = "import sys; print('warming up', file=sys.stderr); import anthropic_not_installed"
    done = subprocess.run([sys.executable, "-m", "blackbox", "record", "--out", str(tmp_path / "run.json"), "--",
                           sys.executable, "-c", agent], capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert "warming up" in lines and "Traceback (most recent call last):" in lines  # passed through
    assert lines[-1] == ("error: the agent exited with status 1 before starting a Blackbox session — its last "
                         "error line: ModuleNotFoundError: No module named 'anthropic_not_installed'; install the "
                         "SDKs the examples use: pip install 'blackbox-agent[examples]'")
    assert "ran no Blackbox session" not in done.stderr
    assert not (tmp_path / "run.json").exists()


def test_an_agent_that_exits_0_without_a_session_gets_the_how_to(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "blackbox", "record", "--out", str(tmp_path / "run.json"), "--",
                           sys.executable, "-c", "print('hi')"], capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 1
    assert "the command ran no Blackbox session" in done.stderr
