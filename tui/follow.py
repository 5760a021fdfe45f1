"""Follow a recording in progress: read its journal (`<out>.blackbox-journal`) as the agent appends steps.

The journal's format is the recorder's (blackbox/journal.py): a header line, then chained step lines and, for
a tool that finished before an earlier call of its turn, a tool entry (`{"blackboxTool": 1, …}`) that is
chained only once the earlier calls finish.  The chained steps are shown as they come; the tool entries still
waiting are placed after them exactly as `journal_steps` (the rescue) would place them, and replaced by the
chained steps when those arrive, so the UI shows what a crash at that moment would keep.  A line is taken only
once its newline is written (a torn last line is the agent mid-write), so the UI never shows half a step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import msgspec

from blackbox.cassette import Step
from blackbox.journal import JOURNAL_SUFFIX, ToolEntry, journal_path, journal_steps
from blackbox.lazy import LazyCassette, LazyStep

__all__ = ["Follower", "Update", "journal_for"]


class _Header(msgspec.Struct):
    id: str
    createdAt: int
    blackboxJournal: int = 1
    out: str = ""
    parentId: str | None = None
    forkedFromStepId: str | None = None


class Update(NamedTuple):
    """What changed since the last poll: drop the last `drop` steps shown (tool entries the recorder has
    since chained), then append `steps`."""

    steps: list[LazyStep]
    drop: int = 0


def journal_for(path: Path) -> Path:
    """The journal of a recording to `path` (or `path` itself when it is a journal)."""
    return path if path.name.endswith(JOURNAL_SUFFIX) else journal_path(path)


def _lazy(step: Step) -> LazyStep:
    """A placed step as the UI holds steps (ASCII escapes keep lone surrogates, which msgspec cannot write)."""
    raw = msgspec.Raw(json.dumps(step.payload, ensure_ascii=True, separators=(",", ":")).encode())
    return LazyStep(step.id, step.index, step.type, step.timestamp, raw, step.prevHash, step.hash)


class Follower:
    """New steps of a journal since the last `poll`; `cassette()` once the header has been read."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        self.offset = 0
        self.header: _Header | None = None
        self.problem = ""
        self._lines: list[bytes] = []  # the readable lines after the header, for `journal_steps`
        self._chained: list[LazyStep] = []
        self._entries: list[ToolEntry] = []
        self._given = 0  # chained steps already handed out
        self._placed = 0  # placed tool-entry steps handed out after them (replaced on the next change)
        self._stopped = False  # an unreadable complete line: nothing after it is taken

    @property
    def out(self) -> Path:
        """The cassette the recording will write."""
        if self.header is not None and self.header.out:
            return Path(self.header.out)
        return self.journal.with_name(self.journal.name.removesuffix(JOURNAL_SUFFIX))

    def poll(self) -> Update:
        """What the journal gained since the last call (nothing while it does not exist)."""
        try:
            with self.journal.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return Update([])
        end = data.rfind(b"\n")
        if end < 0 or self._stopped:
            return Update([])
        self.offset += end + 1
        for line in data[:end].split(b"\n"):
            if not line.strip():
                continue
            try:
                self._take(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                self.problem = f"{self.journal}: a line cannot be read ({exc}); showing the steps before it"
                self._stopped = True
                break
        placed = self._place()
        update = Update(self._chained[self._given:] + placed, self._placed)
        self._given, self._placed = len(self._chained), len(placed)
        return update

    def _take(self, line: bytes) -> None:
        if self.header is None:
            self.header = msgspec.json.decode(line, type=_Header)
            return
        try:
            self._chained.append(msgspec.json.decode(line, type=LazyStep))
        except msgspec.ValidationError:
            self._entries.append(msgspec.json.decode(line, type=ToolEntry))
        self._lines.append(line)

    def _place(self) -> list[LazyStep]:
        """The steps the waiting tool entries of the current turn make, chained after the chained steps."""
        if self.header is None or not self._entries:
            return []
        last_model = next((s for s in reversed(self._chained) if s.type in ("model_output", "model_input")), None)
        if last_model is not None and last_model.type != "model_output":
            return []  # a model call began: its turn's tools were all chained
        turn = None if last_model is None else last_model.index
        if all(entry.turn != turn for entry in self._entries):
            return []  # (the common case: no whole-journal decode)
        steps = journal_steps(self._lines, self.header.id)
        return [_lazy(step) for step in steps[len(self._chained):]]

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
