"""The cassette a command works on, refused when its hash chain is broken: a file changed after it was
recorded is no ground to replay, fork or continue from (exit 2, README "Exit codes"; `verify` says where)."""

from __future__ import annotations

from pathlib import Path

from blackbox.errors import CassetteError
from blackbox.format.cassette import Cassette, chain_break, load
from blackbox.format.inert import inert

__all__ = ["load_intact"]


def load_intact(path: Path, doing: str) -> Cassette:
    """The cassette at `path`; CassetteError (one line, no content) when it cannot be read or its chain breaks.

    `doing`: what the command would do with it ("replay", "fork"), for the message."""
    cassette = load(path)
    broken = chain_break(cassette)
    if broken is not None:
        raise CassetteError(f"{inert(str(path))}: hash chain broken at step {broken.index} ({broken.reason}); "
                            f"it changed after it was recorded, so there is nothing sound to {doing}: run "
                            "`blackbox verify` on it, or use the original")
    return cassette
