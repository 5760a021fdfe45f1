"""Small tool-using agents (real SDK loops) that the session tests record and replay."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """`preexec_fn` for agents the tests signal: Ctrl-C must work even when pytest runs with SIGINT ignored
    (started in the background of a non-interactive shell, as some CI runners do)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
