"""The cassette a command works on, refused when its hash chain is broken: a file changed after it was
recorded is no ground to replay, fork or continue from (exit 2, README "Exit codes"; `verify` says where)."""

from __future__ import annotations

from pathlib import Path

from blackbox.fork.agent_checks import broken_chain
from blackbox.format.cassette import Cassette, chain_break, load

__all__ = ["load_intact"]


def load_intact(path: Path, doing: str) -> Cassette:
    """The cassette at `path`; CassetteError (one line, no content) when it cannot be read or its chain breaks.

    `doing`: what the command would do with it ("replay", "fork"), for the message."""
    cassette = load(path)
    broken = chain_break(cassette)
    if broken is not None:
        raise broken_chain(path, broken, doing)
    return cassette
