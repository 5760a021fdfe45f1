"""One way for a test to run the CLI in process: the real entry point (`main`, with its last-resort handler),
as a user runs it, so every test that checks an exit code or a message checks the same thing."""

from __future__ import annotations

import pytest

from blackbox.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """Run `blackbox ARGS...`; return (exit code, stdout, stderr). A traceback in either stream fails the test."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), out, err
