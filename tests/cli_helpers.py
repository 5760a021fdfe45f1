"""One way for a test to run the CLI in process: the real entry point (`main`, with its last-resort handler),
as a user runs it, so every test that checks an exit code or a message checks the same thing."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from blackbox.cli import main
from tests.waiting import HANG_GUARD


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """Run `blackbox ARGS...`; return (exit code, stdout, stderr). A traceback in either stream fails the test."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), out, err


def invoke(app: Any, args: Sequence[object], env: Mapping[str, str] | None = None) -> Result:
    """The typer app through click's runner (the path past the light dispatcher), where an exception the CLI
    did not turn into an exit fails the test instead of passing for exit code 1."""
    result = CliRunner().invoke(app, [str(a) for a in args], env=dict(env) if env is not None else None)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"blackbox {' '.join(map(str, args))} crashed") from result.exception
    return result


def on_terminal(args: Sequence[object], env: Mapping[str, str]) -> tuple[int, bytes, bytes]:
    """Run `python -m blackbox ARGS...` with stderr on a pseudo-terminal (where progress bars show); return
    (exit code, stdout, everything the terminal received)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "blackbox", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=slave, env=dict(env))
    stdout, _ = proc.communicate(timeout=HANG_GUARD)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return proc.returncode, stdout, seen
