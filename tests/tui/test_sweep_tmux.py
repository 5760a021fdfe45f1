"""`blackbox tui SWEEP-FOLDER/` in a real terminal (tmux): the pass-rate table and the branches by verdict, a
failed branch opened beside the parent at its first divergence, and back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.tui.sweeps import write_sweep_folder
from tests.tui.test_e2e_tmux import terminal  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_a_sweep_folder_in_a_real_terminal(terminal, tmp_path: Path) -> None:  # noqa: F811 (the fixture)
    write_sweep_folder(tmp_path / "coolant")
    term = terminal("coolant")
    term.wait_for_all("Sweep coolant", "8 of 9 branches done: 4 fail, 1 error, 3 pass", "67%", "21%–94%",
                      "✗ fail  baseline #3", "! error search-timeout #1", "… todo  search-timeout #3")
    term.keys("j", "Enter")  # no hotels, repeat 1: it gave up without booking
    term.wait_for_all("example-run-001  ↔  sweep-no-hotels-0", "first behavioural divergence at step 5",
                      "B success, result \"No hotels that weekend", "A  parent.json", "B  no-hotels-0.json",
                      "step 5: behaviour changed here")  # the changes pane: the cursor is on step 5
    term.keys("Escape")
    term.wait_for_all("Sweep coolant", "✗ fail  no-hotels #1")
    term.keys("q")
    assert "EXITED 0" in term.wait_for("EXITED")
