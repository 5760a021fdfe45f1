"""The session's report to the launcher: a JSON file (at BLACKBOX_REPORT) written atomically when the session
starts and again when it ends, read by `blackbox record|replay|fork -- <command>` once the agent exits.

    {"version": 1, "mode": "record", "path": "run.json", "steps": 17, "status": "running" | "success" |
     "error" | "incomplete" | "diverged", "finished": true (finish() was called), "written": true (a
     cassette was written), "settings": {"mode", "out", "cassette", "traceId", "forkAt", "forkSet",
     "continue", "script", "match"}, "error": null | "<the error, secrets masked>", "errorType": null | "<class>",
     "step": null | <divergence step>, "pid": <process id>, "journalError": null | "<why the crash journal
     stopped being written, e.g. No space left on device>", "authStatus": null | 401 | 403 (a model call
     was refused for its key: the launcher says so)}
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import msgspec

from blackbox.errors import ReplayDivergenceError
from blackbox.format.canonical import canonical_text
from blackbox.format.writing import atomic_write
from blackbox.live.settings import Settings

__all__ = ["ReportSettings", "SessionReport", "read_report", "write_report"]


class ReportSettings(msgspec.Struct, frozen=True):
    """The settings the session actually used (the launcher checks them against what it asked for)."""

    mode: str | None = None
    out: str | None = None
    cassette: str | None = None
    traceId: str | None = None
    forkAt: int | None = None
    forkSet: Any = None
    continue_: str | None = msgspec.field(default=None, name="continue")
    script: str | None = None
    match: str | None = None

    @classmethod
    def of(cls, s: Settings) -> ReportSettings:
        return cls(mode=s.mode, out=s.out, cassette=s.cassette, traceId=s.trace_id, forkAt=s.fork_at,
                   forkSet=s.fork_set if s.has_fork_set else None, continue_=s.continue_with, script=s.script,
                   match=s.match)


class SessionReport(msgspec.Struct, frozen=True):
    """How the agent's session went, as the launcher learns it."""

    version: int = 1
    mode: str = "off"
    path: str | None = None
    steps: int = 0
    status: str = "incomplete"
    finished: bool = False
    written: bool = False
    settings: ReportSettings = msgspec.field(default_factory=ReportSettings)
    error: str | None = None
    errorType: str | None = None
    step: int | None = None
    pid: int = 0
    journalError: str | None = None
    authStatus: int | None = None

    @classmethod
    def of(cls, settings: Settings, *, steps: int, status: str | None, finished: bool, written: bool,
           exc: BaseException | None, mask: Callable[[str], str],
           journal_error: str | None = None, auth_status: int | None = None) -> SessionReport:
        """The report of a session with `settings`; without a status, `exc` decides it (a divergence or an
        error); the error's text is masked."""
        if status is None:
            status = "diverged" if isinstance(exc, ReplayDivergenceError) else "error"
        return cls(mode=settings.mode,
                   path=settings.out if settings.mode in ("record", "fork") else settings.cassette,
                   steps=steps, status=status, finished=finished, written=written,
                   settings=ReportSettings.of(settings), error=mask(str(exc)) if exc is not None else None,
                   errorType=type(exc).__name__ if exc is not None else None, step=getattr(exc, "step", None),
                   pid=os.getpid(), journalError=journal_error, authStatus=auth_status)


def write_report(path: str, report: SessionReport) -> None:
    """Write the report atomically; an unwritable report must not break the run (the launcher then says no
    session ran)."""
    bare = msgspec.structs.replace(report, settings=msgspec.structs.replace(report.settings, forkSet=None))
    data = msgspec.to_builtins(bare)
    data["settings"]["forkSet"] = report.settings.forkSet  # a JSON value as the session holds it (JSFloat…)
    with contextlib.suppress(OSError):
        atomic_write(path, canonical_text(data).encode())


def read_report(path: str | os.PathLike[str]) -> SessionReport | None:
    """The report at `path`, or None when there is none (no session ran) or it is not one."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:  # none, or something the agent left there that is not a file
        return None
    try:
        return msgspec.json.decode(data, type=SessionReport)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
