"""Follow a recording in progress: read its journal (`<out>.blackbox-journal`) as the agent appends steps.

The journal's format is the recorder's (blackbox/live/journal.py): a header line, then chained step lines and, for
a tool that finished before an earlier call of its turn, a tool entry (`{"blackboxTool": 1, …}`) that is
chained only once the earlier calls finish.  The chained steps are shown as they come; the tool entries still
waiting are placed after them exactly as `journal_steps` (the rescue) would place them, and replaced by the
chained steps when those arrive, so the UI shows what a crash at that moment would keep.  A tool that began
(a `{"blackboxToolStart": 1, …}` line) and has not returned is shown after them as the bare `tool_call` the
recorder would write for it, marked running.  A line is taken only once its newline is written (a torn last
line is the agent mid-write), so the UI never shows half a step.

The journal is kept open once its header is read, so the lines written just before the recorder deletes it
(the last steps, in the same instant) are still read; then the recording has ended (the journal is gone, or no
longer locked by a recorder) and the final cassette, if it was written, replaces every step shown.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import IO, Any, NamedTuple

import msgspec

from blackbox.errors import CassetteError
from blackbox.format.canonical import step_hash
from blackbox.format.cassette import Step
from blackbox.format.lazy import LazyCassette, LazyStep, load_lazy
from blackbox.format.typed import ToolCallView
from blackbox.live.journal import JOURNAL_SUFFIX, ToolEntry, ToolStart, journal_locked, journal_path, journal_steps

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
    since chained, tools that were running), then append `steps`; `running` are the indices of the steps now
    shown for tools still running.  `final`: the steps are the written cassette's, replacing all."""

    steps: list[LazyStep]
    drop: int = 0
    running: frozenset[int] = frozenset()
    final: bool = False


def journal_for(path: Path) -> Path:
    """The journal of a recording to `path` (or `path` itself when it is a journal)."""
    return path if path.name.endswith(JOURNAL_SUFFIX) else journal_path(path)


def _lazy(step: Step) -> LazyStep:
    """A placed step as the UI holds steps (ASCII escapes keep lone surrogates, which msgspec cannot write)."""
    raw = msgspec.Raw(json.dumps(step.payload, ensure_ascii=True, separators=(",", ":")).encode())
    return LazyStep(step.id, step.index, step.type, step.timestamp, raw, step.prevHash, step.hash, step.tokens)


def _running_step(trace_id: str, index: int, prev: str | None, start: ToolStart) -> LazyStep:
    """The bare `tool_call` the recorder writes for a tool that has not returned, chained after `prev`."""
    payload: Any = start.toolCall
    return _lazy(Step(f"{trace_id}:{index}", index, "tool_call", start.callAt, payload, prev,
                      step_hash(index, "tool_call", start.callAt, payload, prev)))


def _call_id(step: LazyStep) -> str | None:
    """The id of a chained `tool_call` (None when its payload does not fit: no running tool is taken for it)."""
    found = step.view()
    return found.toolCallId if isinstance(found, ToolCallView) else None


class Follower:
    """New steps of a journal since the last `poll`; `cassette()` once the header has been read."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        self.offset = 0
        self.header: _Header | None = None
        self.problem = ""
        self.ended = False  # the recording ended: nothing more will come
        self._handle: IO[bytes] | None = None
        self._lines: list[bytes] = []  # the readable lines after the header, for `journal_steps`
        self._chained: list[LazyStep] = []
        self._entries: list[ToolEntry] = []
        self._starts: list[ToolStart] = []
        self._given = 0  # chained steps already handed out
        self._placed = 0  # provisional steps handed out after them (replaced on the next change)
        self._running: frozenset[int] = frozenset()
        self._stopped = False  # an unreadable complete line: nothing after it is taken

    @property
    def out(self) -> Path:
        """The cassette the recording will write."""
        if self.header is not None and self.header.out:
            return Path(self.header.out)
        return self.journal.with_name(self.journal.name.removesuffix(JOURNAL_SUFFIX))

    def poll(self) -> Update:
        """What the journal gained since the last call (nothing while it does not exist); once the recording
        ended, the written cassette in place of everything shown."""
        if self.ended:
            return Update([])
        data = self._read()
        end = -1 if data is None or self._stopped else data.rfind(b"\n")
        if data is not None and end >= 0:
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
        if self._recording_ended():
            self.ended = True
            self.close()
            self._running = frozenset()  # a tool still "running" now never returned
            final = self._final()
            if final is not None:
                return Update(final, self._given + self._placed, final=True)
        if end < 0 and not self.ended:
            return Update([], running=self._running)
        provisional, running = self._provisional()
        if self.ended:
            running = frozenset()
        update = Update(self._chained[self._given:] + provisional, self._placed, running)
        self._given, self._placed, self._running = len(self._chained), len(provisional), running
        return update

    def _read(self) -> bytes | None:
        """The bytes after `offset`, from the journal held open once its header is read (so what the recorder
        wrote just before deleting it is still there)."""
        if self._handle is None or self.header is None:
            self.close()
            try:
                self._handle = self.journal.open("rb")
            except OSError:
                return None
        self._handle.seek(self.offset)
        return self._handle.read()

    def _recording_ended(self) -> bool:
        """The journal is gone (the cassette written, or the run discarded), replaced, or left unlocked by a
        recorder that exited without writing."""
        if self.header is None or self._handle is None:
            return False
        try:
            here = self.journal.stat()
        except OSError:
            return True
        held = os.fstat(self._handle.fileno())
        return (here.st_ino, here.st_dev) != (held.st_ino, held.st_dev) or not journal_locked(self.journal)

    def _final(self) -> list[LazyStep] | None:
        """The written cassette's steps, if the recording wrote it (and it is this recording's)."""
        try:
            written = load_lazy(self.out)
        except (CassetteError, OSError):
            return None
        return list(written.steps) if self.header is not None and written.id == self.header.id else None

    def _take(self, line: bytes) -> None:
        if self.header is None:
            self.header = msgspec.json.decode(line, type=_Header)
            return
        try:
            self._chained.append(msgspec.json.decode(line, type=LazyStep))
        except msgspec.ValidationError:
            if b'"blackboxToolStart"' in line:
                self._starts.append(msgspec.json.decode(line, type=ToolStart))
                return  # nothing `journal_steps` reads
            self._entries.append(msgspec.json.decode(line, type=ToolEntry))
        self._lines.append(line)

    def _provisional(self) -> tuple[list[LazyStep], frozenset[int]]:
        """The steps not chained yet, after the chained ones: the current turn's waiting tool entries (placed
        as `journal_steps` places them), then its tools still running; and the indices of the running ones."""
        if self.header is None or (self._chained and self._chained[-1].type == "metadata"):
            return [], frozenset()
        at = next((i for i in range(len(self._chained) - 1, -1, -1)
                   if self._chained[i].type in ("model_output", "model_input")), None)
        if at is not None and self._chained[at].type != "model_output":
            return [], frozenset()  # a model call began: its turn's tools were all chained
        turn = None if at is None else self._chained[at].index
        entries = [entry for entry in self._entries if entry.turn == turn]
        starts = [start for start in self._starts if start.turn == turn]
        if not entries and not starts:
            return [], frozenset()  # (the common case: no whole-journal decode)
        placed = [_lazy(step) for step in journal_steps(self._lines, self.header.id)[len(self._chained):]] \
            if entries else []
        done: set[str | None] = {str(entry.toolCall.get("toolCallId")) for entry in entries}
        done |= {_call_id(step) for step in self._chained[(at or 0):] if step.type == "tool_call"}
        steps = self._chained + placed
        running: list[int] = []
        for start in sorted(starts, key=lambda s: s.order):
            if str(start.toolCall.get("toolCallId")) in done:
                continue
            prev = steps[-1].hash if steps else None
            steps.append(_running_step(self.header.id, len(steps), prev, start))
            running.append(len(steps) - 1)
        return steps[len(self._chained):], frozenset(running)

    def close(self) -> None:
        """Let go of the journal (the app is quitting, or the recording ended)."""
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None

    def cassette(self) -> LazyCassette | None:
        if self.header is None:
            return None
        h = self.header
        return LazyCassette(version=2, id=h.id, createdAt=h.createdAt, steps=[], parentId=h.parentId,
                            forkedFromStepId=h.forkedFromStepId)

    @property
    def running(self) -> frozenset[int]:
        """The indices of the steps shown for tools still running."""
        return self._running

    @property
    def finished(self) -> bool:
        """The recording ended (its cassette written, or not): nothing more will come."""
        return self.ended
