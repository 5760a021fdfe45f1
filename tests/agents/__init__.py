"""Small tool-using agents (real SDK loops) that the session tests record and replay."""

from __future__ import annotations

import signal


def default_signals() -> None:
    """Ctrl-C, SIGTERM and a hang-up with their default meaning, for agents the tests signal, even when pytest
    runs with them ignored (started in the background of a non-interactive shell, as some CI runners do, or
    under `nohup`, which a process must honour: Blackbox leaves an ignored signal ignored).  Called by the agent
    itself before its session starts (`AGENT_SIGNALS=default`, tests/agents/kill_agent.py), or as `preexec_fn`
    (which runs Python in a forked copy of the threaded test process: the agent's own call is the safe one)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # what Python installs at start (SIG_DFL after exec)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
