"""What `blackbox fork … -- <agent>` checks before it starts the agent, in one place: the command runs these checks,
and so does the UI's fork form before it offers to run that command, so both refuse the same forks in the same
words (docs/format.md, "Fork").

Each check raises the one-line error the command prints (a `UsageError`, a `BlackboxUnsupportedError`, or for a
broken chain a `CassetteError`); nothing is written or started.
"""

from __future__ import annotations

import os
from pathlib import Path

from blackbox.errors import CassetteError, UsageError
from blackbox.fork.engine import thinking_refusal, uses_thinking
from blackbox.fork.plan import check_fork_point, check_out_path, load_script, parse_script
from blackbox.format.cassette import Cassette, ChainBreak
from blackbox.format.inert import inert
from blackbox.live.launcher import check_out

__all__ = ["broken_chain", "check_agent_fork", "check_live_key"]


def broken_chain(path: str | os.PathLike[str], broken: ChainBreak, doing: str) -> CassetteError:
    """The refusal of a cassette whose hash chain breaks: it changed after it was recorded, so there is nothing
    sound to `doing` ("replay", "fork") from it."""
    return CassetteError(f"{inert(str(path))}: hash chain broken at step {broken.index} ({broken.reason}); it "
                         f"changed after it was recorded, so there is nothing sound to {doing}: run `blackbox verify` "
                         "on it, or use the original")


def check_live_key(parent: Cassette) -> None:
    """A live fork's agent sends its requests to the provider the run recorded: without that provider's key it
    would fail at its first request, and the fork would seem to blame the agent.  Say so before it runs."""
    from blackbox.fork.whatif import key_problem, recorded_provider

    found = recorded_provider(parent)
    problem = key_problem(found.name if found is not None else None)
    if problem is not None:
        raise UsageError(f"{problem}; export it, or continue from scripted replies (--script replies.json)")


def check_agent_fork(parent: Cassette, cassette: str | os.PathLike[str], at: int, out: str | os.PathLike[str],
                     script: str | os.PathLike[str] | None, *, replies: str | None = None) -> None:
    """Everything about a fork of `parent` (read from `cassette`) at step `at`, written to `out`, continued from
    the replies file `script` (None: live), that can be checked before the agent starts; `replies`: the text the
    caller will write to `script` (the UI's replies written in the form), checked as that file.  The value set
    at the fork point is the caller's to check (it comes as `--set` text or from an editor)."""
    check_fork_point(parent, at)
    check_out_path(out, cassette, script)
    if script is not None and replies is not None:
        parse_script(replies.encode("utf-8"), Path(script))
    elif script is not None:
        load_script(Path(script))
    elif uses_thinking(parent):
        raise thinking_refusal()
    else:
        check_live_key(parent)
    check_out(str(out))
