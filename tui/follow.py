"""Follow a recording in progress: read its journal (`<out>.blackbox-journal`) as the agent appends steps.

The journal's first line is a header (id, createdAt, out, the fork link); every further line is one step as
the cassette will hold it.  A line is taken only once its newline is written (a torn last line is the agent
mid-write), so the UI never shows half a step.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from blackbox.lazy import LazyCassette, LazyStep
from blackbox.recorder import JOURNAL_SUFFIX, journal_path

__all__ = ["Follower", "journal_for"]


class _Header(msgspec.Struct):
    id: str
    createdAt: int
    blackboxJournal: int = 1
    out: str = ""
    parentId: str | None = None
    forkedFromStepId: str | None = None


def journal_for(path: Path) -> Path:
    """The journal of a recording to `path` (or `path` itself when it is a journal)."""
    return path if path.name.endswith(JOURNAL_SUFFIX) else journal_path(path)


class Follower:
    """New steps of a journal since the last `poll`; `cassette()` once the header has been read."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        self.offset = 0
        self.header: _Header | None = None
        self.problem = ""

    @property
    def out(self) -> Path:
        """The cassette the recording will write."""
        if self.header is not None and self.header.out:
            return Path(self.header.out)
        return self.journal.with_name(self.journal.name.removesuffix(JOURNAL_SUFFIX))

    def poll(self) -> list[LazyStep]:
        """The complete step lines written since the last call (none while the journal does not exist)."""
        try:
            with self.journal.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        steps: list[LazyStep] = []
        for line in data[:end].split(b"\n"):
            if not line.strip():
                continue
            try:
                if self.header is None:
                    self.header = msgspec.json.decode(line, type=_Header)
                    continue
                steps.append(msgspec.json.decode(line, type=LazyStep))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                self.problem = f"{self.journal}: a line cannot be read ({exc}); showing the steps before it"
                break
        return steps

    def cassette(self) -> LazyCassette | None:
        if self.header is None:
            return None
        h = self.header
        return LazyCassette(version=2, id=h.id, createdAt=h.createdAt, steps=[], parentId=h.parentId,
                            forkedFromStepId=h.forkedFromStepId)

    @property
    def finished(self) -> bool:
        """The journal is gone: the recording ended (its cassette written, or discarded)."""
        return self.header is not None and not self.journal.exists()
