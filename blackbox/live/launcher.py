"""Run an agent command under Blackbox: set BLACKBOX_*, run it, read the session's report.

The only module of the core that starts processes.  The child inherits stdio and the launcher's process
group; the launcher survives SIGINT while it runs (the child gets it from the terminal and writes its
cassette).  SIGTERM and SIGHUP sent to the launcher alone are forwarded: to its whole process group when the
launcher leads it (its own job: itself, the agent and the agent's children), else to the agent; the launcher
then waits for the agent, removes its temporary folder and exits like the agent (a signal n becomes 128+n).
The agent's real exit status is the truth about how a run closed at exit ended: a cassette whose terminal
step says otherwise is corrected (`exit_terminal`).

`check_out` refuses an output the agent could never write, before the agent starts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import msgspec

from blackbox.errors import BlackboxError, UsageError
from blackbox.format.inert import inert
from blackbox.format.secrets import PLACEHOLDER_KEYS, replay_placeholders
from blackbox.live.exit_status import of_returncode
from blackbox.live.journal import journal_locked, journal_path
from blackbox.live.report import SessionReport, read_report
from blackbox.live.settings import ENV_PREFIX, ENV_REDACT_KEY, ENV_REPORT, Settings

__all__ = ["PLACEHOLDER_KEYS", "LaunchResult", "agent_env", "check_out", "run_agent", "shell_needed"]


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
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if not k.startswith(ENV_PREFIX) or k == ENV_REDACT_KEY}  # the redaction key is the user's, not stale
    env.update(settings)
    if placeholders:
        env.update(replay_placeholders(env))
    return env


def check_out(out: str, flag: str = "--out") -> None:
    """Refuse, in one line, an output file the agent's session could not write: a name that is not UTF-8, a
    folder, something that is not a regular file (a device, a FIFO), a path under a file, a folder that cannot
    be written, or a file another recording is writing now."""
    shown = inert(out)
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{flag} {shown} is not a valid UTF-8 name; choose a file name in UTF-8") from None
    path = Path(out)
    if not path.name or out.endswith(os.sep):
        raise UsageError(f"{flag} {shown} names a folder; give a file path such as {inert(str(path / 'run.json'))}")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except NotADirectoryError:
        mode = None
    except OSError as exc:
        raise UsageError(f"{flag} {shown}: {exc.strerror or exc}; choose another {flag}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise UsageError(f"{flag} {shown} is a folder; give a file path such as {inert(str(path / 'run.json'))}")
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"{flag} {shown} is not a regular file (a device, a FIFO or a socket); Blackbox writes "
                         f"only regular files: choose another {flag}")
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(f"{flag} {shown} is under {inert(str(folder))}, which is a file, not a folder; "
                         f"choose another {flag}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {shown}: cannot write in {inert(str(folder))} (read-only or permission "
                         f"denied); choose another {flag}")
    if journal_locked(journal_path(path)):
        raise UsageError(f"another recording to {shown} is running (its journal is locked); wait for it to "
                         f"finish, or choose another {flag}")


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


@contextmanager
def _forwarding(child: list[subprocess.Popen[bytes]]) -> Iterator[tuple[list[int], Callable[[], None]]]:
    """While the agent runs: ignore SIGINT (the terminal sends it to the agent too), forward SIGTERM and
    SIGHUP.  Yields the list of signals received and `started()`, called once the agent is in `child`: a
    signal that came before that (the agent may be running before `Popen` has returned here, on a busy
    machine) is forwarded then, instead of lost with the launcher waiting forever for an agent never told."""
    received: list[int] = []
    missed: list[int] = []  # received before the agent was in `child` (a launcher outside its own group)

    def forward(signum: int, frame: object) -> None:
        if signum in received:
            return  # our own forwarded copy, delivered to the whole group
        received.append(signum)
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpgrp(), signum)  # the agent, once forked, is in the group already
        elif not child:
            missed.append(signum)
        elif child[0].poll() is None:
            child[0].send_signal(signum)

    def started() -> None:
        while missed:  # a signal now finds the agent in `child`: none is added here after this
            signum = missed.pop(0)
            if child[0].poll() is None:
                child[0].send_signal(signum)

    # A handler, not SIG_IGN: exec resets handled signals to default in the child, but an ignored
    # SIGINT would be inherited, and Ctrl-C would no longer stop the agent or let it write its cassette.
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, _ignore)}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        previous[signum] = signal.signal(signum, forward)
    try:
        yield received, started
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_agent(command: Sequence[str], settings: Settings, *, placeholders: bool = False) -> LaunchResult:
    """Run `command` with the session settings (as BLACKBOX_* variables); return its exit code and the
    session's report."""
    variables = settings.to_env()
    with tempfile.TemporaryDirectory(prefix="blackbox-") as tmp:
        report_path = Path(tmp) / "report.json"
        env = agent_env({**variables, ENV_REPORT: str(report_path)}, placeholders=placeholders)
        child: list[subprocess.Popen[bytes]] = []
        last: list[bytes] = []
        with _forwarding(child) as (received, started):
            child.append(_start(command, env))
            started()
            pump = threading.Thread(target=_relay, args=(child[0].stderr, last), daemon=True)
            pump.start()
            returncode = child[0].wait()
            pump.join(timeout=5)
        status = of_returncode(returncode)
        code = 128 + received[0] if received and status == 0 else status  # a handled signal: still a killed run
        last_error = last[0].decode("utf-8", "replace").strip() if last else ""
        return LaunchResult(exit_code=code, report=_closed_as_it_ended(read_report(report_path), status),
                            last_error=last_error)


def _closed_as_it_ended(report: SessionReport | None, status: int) -> SessionReport | None:
    """A run the session closed at exit gets the terminal step of the status the agent really ended with
    (see `exit_terminal`); the report then tells the corrected steps and status."""
    if report is None or report.finished or not report.written or report.mode not in ("record", "fork") \
            or not report.path:
        return report
    from blackbox.format.outcome import outcome
    from blackbox.live.exit_terminal import restamp_exit

    try:
        fixed = restamp_exit(report.path, status, int(time.time() * 1000))
    except (BlackboxError, OSError):
        return report  # the cassette as the session wrote it (it verified then)
    if fixed is None:
        return report
    return msgspec.structs.replace(report, steps=len(fixed.steps), status=outcome(fixed).status)


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
