"""Small tool-using agents (real SDK loops) that the session tests record and replay."""

from __future__ import annotations

import signal


def default_signals() -> None:
    """`preexec_fn` for agents the tests signal: Ctrl-C, SIGTERM and a hang-up must reach them with their default
    meaning even when pytest runs with them ignored (started in the background of a non-interactive shell, as
    some CI runners do, or under `nohup`, which a process must honour: Blackbox leaves an ignored signal
    ignored)."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
