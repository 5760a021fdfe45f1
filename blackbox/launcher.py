"""Run an agent command under Blackbox: set BLACKBOX_*, run it, read the session's report.

The only module of the core that starts processes.  The child inherits stdio; the launcher survives SIGINT
while it runs (the child gets it from the terminal and writes its cassette), then exits with the child's
code (a signal n becomes 128+n).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import msgspec

from blackbox.errors import UsageError
from blackbox.report import SessionReport, read_report
from blackbox.secrets import PLACEHOLDER_KEYS
from blackbox.settings import ENV_PREFIX, ENV_REPORT, Settings

__all__ = ["PLACEHOLDER_KEYS", "LaunchResult", "agent_env", "run_agent", "shell_needed"]


class LaunchResult(msgspec.Struct):
    """How the agent ended, what its session reported (None when it ran no session) and the last non-blank
    line it wrote to stderr (what to quote when it died before starting a session)."""

    exit_code: int
    report: SessionReport | None
    last_error: str = ""


def shell_needed(command: Sequence[str]) -> bool:
    """One argument with spaces is a shell command line; anything else is an argv."""
    return len(command) == 1 and " " in command[0].strip()


def agent_env(settings: Mapping[str, str], *, placeholders: bool,
              base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: stale BLACKBOX_* cleared, then `settings`, then placeholder keys if asked."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith(ENV_PREFIX)}
    env.update(settings)
    if placeholders:
        for name, value in PLACEHOLDER_KEYS.items():
            if not env.get(name):
                env[name] = value
    return env


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _ignore(signum: int, frame: object) -> None:
    """The launcher outlives Ctrl-C; the agent, in the same process group, receives it and ends."""


def _start(command: Sequence[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    try:
        if shell_needed(command):
            return subprocess.Popen(command[0], shell=True, env=env, stderr=subprocess.PIPE)
        return subprocess.Popen(list(command), env=env, stderr=subprocess.PIPE)
    except FileNotFoundError:
        raise UsageError(f"cannot run {command[0]!r}: no such program; check the command after --") from None
    except PermissionError:
        raise UsageError(f"cannot run {command[0]!r}: permission denied") from None


def run_agent(command: Sequence[str], settings: Settings | Mapping[str, str], *,
              placeholders: bool = False) -> LaunchResult:
    """Run `command` with the session settings (or their BLACKBOX_* variables); return its exit code and the
    session's report."""
    variables = settings.to_env() if isinstance(settings, Settings) else settings
    with tempfile.TemporaryDirectory(prefix="blackbox-") as tmp:
        report_path = Path(tmp) / "report.json"
        env = agent_env({**variables, ENV_REPORT: str(report_path)}, placeholders=placeholders)
        # A handler, not SIG_IGN: exec resets handled signals to default in the child, but an ignored
        # SIGINT would be inherited, and Ctrl-C would no longer stop the agent or let it write its cassette.
        previous = signal.signal(signal.SIGINT, _ignore)
        last: list[bytes] = []
        try:
            proc = _start(command, env)
            pump = threading.Thread(target=_relay, args=(proc.stderr, last), daemon=True)
            pump.start()
            returncode = proc.wait()
            pump.join(timeout=5)
        finally:
            signal.signal(signal.SIGINT, previous)
        last_error = last[0].decode("utf-8", "replace").strip() if last else ""
        return LaunchResult(exit_code=_exit_code(returncode), report=read_report(report_path),
                            last_error=last_error)


def _relay(stream: IO[bytes] | None, last: list[bytes]) -> None:
    """Pass the agent's stderr through as it comes, to the same descriptor it would have inherited (fd 2),
    keeping its last non-blank line."""
    if stream is None:
        return
    for line in iter(stream.readline, b""):
        with contextlib.suppress(OSError):
            os.write(2, line)
        if line.strip():
            last[:] = [line]
    stream.close()
