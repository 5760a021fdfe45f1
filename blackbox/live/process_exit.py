"""Never lose a run: close unfinished sessions when the process ends.

- normal exit, `sys.exit(n)`, `exit(n)`, `quit(n)`, `raise SystemExit(n)` (also `raise SystemExit("message")`,
  which exits 1): an `atexit` hook closes every open session with the exit code.  Python does not tell atexit
  hooks the code, so it is observed where the interpreter learns it: when a `SystemExit` escapes the main
  module, the interpreter reads the exception's `code` attribute (from C, with no Python frame on the stack)
  before it runs the atexit hooks.  `SystemExit.code` is replaced by a property that returns the same value
  and notes that top-level read (`_watch_system_exit`); a read by the program itself (`except SystemExit as
  e: e.code`) has a caller frame and is ignored, so a caught exit changes nothing.  `sys.exit` is wrapped to
  raise the same exception from Python (the C function can leave it unnormalized, and then the code is never
  read as an attribute), and every name already bound to the C function (`from sys import exit` in a module
  imported before the session) is bound to the wrapper too;
- the code noted is the status the process ends with (`exit_status.of_system_exit`: `sys.exit(256)` is 0,
  `-1` is 255); under `blackbox record` the launcher, which sees the child's real status, corrects the
  cassette's terminal step if this hook got it wrong (`exit_terminal`), so the hook is the fallback;
- an uncaught exception: `sys.excepthook` (chained) notes exit code 1 (130 for KeyboardInterrupt); one that
  says it is a line of its own (`one_line`: a refused recording) is printed as that line, not a traceback
  (under the launcher, which prints the session's error itself, not at all);
- SIGINT / SIGTERM / SIGHUP, when their handler is still Python's default (a signal the process inherited as
  ignored, as under `nohup`, stays ignored): the sessions are closed with exit code 128+n (further signals
  meanwhile are ignored), then the default handler is restored and the signal re-raised so the process dies
  of it (130/143/129).
- SIGKILL cannot be caught: the recorder's journal keeps the steps recorded so far (`recorder.recover`).

Hooks are installed once, on the first session that records or replays.
"""

from __future__ import annotations

import atexit
import ctypes
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, NoReturn, Protocol

from blackbox.live.exit_status import of_system_exit

__all__ = ["exit_code_of", "register", "unregister"]


class _Closable(Protocol):
    def close_at_exit(self, exit_code: int) -> None: ...


# Strong references: a session the agent dropped must still be closed at exit (its run is not lost).
_sessions: dict[int, _Closable] = {}
_state = {"installed": False, "exit_code": 0, "dying": 0}
_install_lock = threading.Lock()
_previous_excepthook = sys.excepthook
_original_exit: Callable[..., Any] = sys.exit
_SIGNALS: tuple[tuple[str, object], ...] = (
    ("SIGINT", signal.default_int_handler), ("SIGTERM", signal.SIG_DFL), ("SIGHUP", signal.SIG_DFL))


def register(session: _Closable) -> None:
    """Close `session` at process exit unless it finished before."""
    _install()
    _sessions[id(session)] = session


def unregister(session: _Closable) -> None:
    """The session finished on its own; nothing to do at exit."""
    _sessions.pop(id(session), None)


exit_code_of = of_system_exit  # the process's exit status for `SystemExit(code)`


def _close_all(exit_code: int) -> None:
    for key, session in list(_sessions.items()):
        _sessions.pop(key, None)
        try:
            session.close_at_exit(exit_code)
        except Exception as exc:  # one broken session must not keep the others from being written
            print(f"blackbox: could not close a session at exit: {exc}", file=sys.stderr)


def _at_exit() -> None:
    _close_all(_state["exit_code"])


def _exit(status: object = None) -> NoReturn:
    """`sys.exit`, raising its `SystemExit` from Python so that the exit code is observed like any other."""
    raise SystemExit(status)


def _noting_exit(status: object = None) -> NoReturn:
    """`sys.exit` where `SystemExit.code` cannot be watched: note the code, then exit (a caught exit is
    noted too)."""
    _state["exit_code"] = exit_code_of(status)
    _original_exit(status)
    raise SystemExit(status)  # not reached


def _watch_system_exit() -> bool:
    """Replace `SystemExit.code` by a property that notes the interpreter's own read of it (see the module
    docstring).  Returns False where the type cannot be changed (another Python implementation)."""
    member = SystemExit.__dict__.get("code")
    if member is None or not hasattr(member, "__set__"):
        return False

    def get(self: SystemExit) -> object:
        value = member.__get__(self, SystemExit)
        try:
            sys._getframe(1)
        except ValueError:  # read from C with no Python frame left: the interpreter deciding the exit status
            if threading.current_thread() is threading.main_thread():
                _state["exit_code"] = exit_code_of(value)
        return value

    def set_(self: SystemExit, value: object) -> None:
        member.__set__(self, value)

    try:
        namespace = gc.get_referents(SystemExit.__dict__)[0]
        if not isinstance(namespace, dict):
            return False
        namespace["code"] = property(get, set_, doc=getattr(member, "__doc__", None))
        ctypes.pythonapi.PyType_Modified(ctypes.py_object(SystemExit))
    except (AttributeError, TypeError, ValueError, IndexError):
        return False
    return True


def _rebind_exit(wrapper: Callable[..., Any]) -> None:
    """Bind `wrapper` to every module-level name that holds the C `sys.exit` (`from sys import exit` before
    the session began): that function can raise its `SystemExit` unnormalized, and then the code is never
    observed."""
    for module in list(sys.modules.values()):
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict) or names is globals():  # this module keeps the original
            continue
        for name, value in list(names.items()):
            if value is _original_exit:
                names[name] = wrapper


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    _state["exit_code"] = 130 if issubclass(exc_type, KeyboardInterrupt) else 1
    if getattr(exc, "one_line", False) is True:
        if not os.environ.get("BLACKBOX_REPORT"):  # the launcher reads the report and says it
            print(f"[blackbox] {exc}", file=sys.stderr)
        return
    _previous_excepthook(exc_type, exc, tb)


def _on_signal(signum: int, frame: Any) -> None:
    """Close the sessions, then die of the signal.  A second signal while they are written (a hang-up sent
    to the whole process group reaches the agent twice: from the terminal and forwarded by the launcher)
    must not kill the process mid-write: it is ignored, the process dies of the first."""
    if _state["dying"]:
        return
    _state["dying"] = signum
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
        sys.exit = _exit if _watch_system_exit() else _noting_exit
        _rebind_exit(sys.exit)
        if threading.current_thread() is not threading.main_thread():
            return
        for name, default in _SIGNALS:
            signum = getattr(signal, name, None)
            if signum is not None and signal.getsignal(signum) in (default, signal.SIG_DFL):
                signal.signal(signum, _on_signal)
