"""Nothing Blackbox makes is left in the temp dir: importing the fuzz targets and running them (in a process
that ends without atexit, as an xdist worker or libFuzzer does), and `blackbox tui --demo` ended by a closed
terminal (SIGHUP) or a kill (SIGTERM)."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.waiting import HANG_GUARD

ROOT = Path(__file__).resolve().parent.parent


def test_the_fuzz_targets_leave_no_folder_at_import_or_after_a_run(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code = ("import os, sys\nimport fuzz.targets as t\n"
            "assert not os.listdir(os.environ['TMPDIR']), os.listdir(os.environ['TMPDIR'])\n"
            "for name, target in t.TARGETS.items():\n"
            "    for seed in t.seeds(name)[:2]:\n"
            "        target(seed)\n"
            "sys.stdout.flush()\nos._exit(0)\n")  # no atexit, as an xdist worker or libFuzzer ends
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD,
                          env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in scratch.iterdir()) == []


def _drain(fd: int) -> None:
    while True:
        try:
            if not os.read(fd, 65536):
                return
        except OSError:  # EIO: the child closed the terminal
            return


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
def test_the_demo_ui_removes_its_scratch_folder_when_its_terminal_goes(signum: int, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "blackbox", "tui", "--demo"], stdin=child, stdout=child,
                            stderr=child, cwd=ROOT, env={**os.environ, "TMPDIR": str(scratch),
                                                        "TERM": "xterm-256color",
                                                        "XDG_STATE_HOME": str(tmp_path / "state")})
    os.close(child)
    threading.Thread(target=_drain, args=(main,), daemon=True).start()
    try:
        while not list(scratch.glob("blackbox-demo-*/*.json")):  # the demo run is written: the UI is up
            assert proc.poll() is None, "the UI ended before it opened"
            time.sleep(0.05)
        proc.send_signal(signum)
        assert proc.wait(timeout=HANG_GUARD) == 128 + signum
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    assert list(scratch.glob("blackbox-demo-*")) == []
