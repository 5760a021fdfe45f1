"""Never lose a run: close unfinished sessions when the process ends (SPEC §5.1 "Process exit").

- normal exit and `sys.exit(n)`: an `atexit` hook closes every open session with the exit code (`sys.exit`
  is wrapped to learn it; Python does not tell atexit hooks the code);
- an uncaught exception: `sys.excepthook` (chained) notes exit code 1 (130 for KeyboardInterrupt);
- SIGINT / SIGTERM, when their handler is still Python's default: the sessions are closed with exit code
  128+n, then the default handler is restored and the signal re-raised so the process dies of it (130/143).
- SIGKILL cannot be caught: the recorder's journal keeps the steps recorded so far (`recorder.recover`).

Hooks are installed once, on the first session that records or replays.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from types import TracebackType
from typing import Any, Protocol

__all__ = ["register", "unregister"]


class _Closable(Protocol):
    def close_at_exit(self, exit_code: int) -> None: ...


# Strong references: a session the agent dropped must still be closed at exit (its run is not lost).
_sessions: dict[int, _Closable] = {}
_state = {"installed": False, "exit_code": 0}
_install_lock = threading.Lock()
_previous_excepthook = sys.excepthook
_original_exit = sys.exit


def register(session: _Closable) -> None:
    """Close `session` at process exit unless it finished before."""
    _install()
    _sessions[id(session)] = session


def unregister(session: _Closable) -> None:
    """The session finished on its own; nothing to do at exit."""
    _sessions.pop(id(session), None)


def _close_all(exit_code: int) -> None:
    for key, session in list(_sessions.items()):
        _sessions.pop(key, None)
        try:
            session.close_at_exit(exit_code)
        except Exception as exc:  # one broken session must not keep the others from being written
            print(f"blackbox: could not close a session at exit: {exc}", file=sys.stderr)


def _at_exit() -> None:
    _close_all(_state["exit_code"])


def _exit(status: object = None) -> None:
    """`sys.exit`, noting the exit code the atexit hook will report."""
    if status is None:
        _state["exit_code"] = 0
    elif isinstance(status, int):
        _state["exit_code"] = int(status)  # sys.exit(False) exits 0 and sys.exit(True) exits 1, like 0 and 1
    else:
        _state["exit_code"] = 1  # sys.exit("message") prints it and exits 1
    _original_exit(status)


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    _state["exit_code"] = 130 if issubclass(exc_type, KeyboardInterrupt) else 1
    _previous_excepthook(exc_type, exc, tb)


def _on_signal(signum: int, frame: Any) -> None:
    _close_all(128 + signum)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install() -> None:
    global _previous_excepthook
    with _install_lock:
        if _state["installed"]:
            return
        _state["installed"] = True
        atexit.register(_at_exit)
        _previous_excepthook = sys.excepthook
        sys.excepthook = _excepthook
        sys.exit = _exit
        if threading.current_thread() is not threading.main_thread():
            return
        for signum, default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
            if signal.getsignal(signum) in (default, signal.SIG_DFL):
                signal.signal(signum, _on_signal)
