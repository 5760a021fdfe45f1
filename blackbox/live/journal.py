"""The crash journal beside a recording (`<out>.blackbox-journal`): what keeps a run when the process is killed.

Format: JSON lines.  Line 1 is a header `{"blackboxJournal": 1, "id", "createdAt", "out", "parentId"?,
"forkedFromStepId"?, "made"?}` (`made`: what made the run, docs/format.md "Origin").  Every further line is one of:

- a step exactly as in the cassette (chained: `index`, `prevHash`, `hash`), written in the cassette's order;
- a tool entry `{"blackboxTool": 1, "turn", "order", "toolCall", "callAt", "toolResult", "resultAt", "origin"}`: a
  wrapped tool that finished before an earlier call of its turn, journaled the moment it finished (its chained
  steps must wait for the earlier calls).  `turn` is the index of the `model_output` step whose turn it
  belongs to (null before any), `order` its place in the turn (`[0, position in the model's calls]`, or
  `[1, n]` for the n-th run the model did not ask for).  `journal_steps` puts such entries in the model's
  order after the chained steps; an entry whose call was chained later is already there and is ignored;
- a tool start `{"blackboxToolStart": 1, "turn", "order", "toolCall", "callAt"}`: a wrapped tool began (so a
  follower can show it running).  It records nothing the cassette keeps: `journal_steps` skips it, and a
  tool killed before it returned is lost, as without the line.

A torn last line (the process died mid-write) ends the readable part.

The journal is locked (`flock`, exclusive) for the recording's whole life, so a second recorder to the same
output refuses to start and a rescue never touches a live journal.  Nothing is written before the session
knows its keys: a key given only to the SDK client is seen with the first request, so until then lines are
held in memory (a tool run earlier that returned the key must not reach the disk).  Every write is checked
for every key known so far and for long pieces of them (`secrets.KeySearch`); when a new key becomes known,
what was written is checked again.  A leak empties the journal and stops it (the final write refuses).  A
failed write (a full disk) stops the journal too, without failing the run: recording goes on in memory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from blackbox.errors import SessionError
from blackbox.format.canonical import MAX_NESTING, decode_json
from blackbox.format.cassette import Step, StepChain
from blackbox.format.nesting import HOOK_SLACK
from blackbox.format.origin import Origin
from blackbox.format.secrets import KeySearch

__all__ = ["JOURNAL_SUFFIX", "Journal", "ToolEntry", "ToolStart", "journal_locked", "journal_path", "journal_steps"]

JOURNAL_SUFFIX = ".blackbox-journal"
# What a folder that cannot hold the journal says: the cassette could not be written there either.
_REFUSED = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.ENOENT, errno.ELOOP,
            errno.EEXIST, errno.ENAMETOOLONG}


def journal_path(out: str | os.PathLike[str]) -> Path:
    """Where the journal of a recording to `out` lives."""
    out = Path(out)
    return out.with_name(out.name + JOURNAL_SUFFIX)


def journal_locked(path: str | os.PathLike[str]) -> bool:
    """Whether a running recorder holds the journal at `path` (then nobody else may touch it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


class ToolEntry(msgspec.Struct):
    """A finished tool run journaled out of the model's order (see the module docstring)."""

    turn: int | None
    order: tuple[int, int]
    toolCall: dict[str, Any]
    callAt: int
    toolResult: dict[str, Any]
    resultAt: int
    blackboxTool: int = 1
    origin: Origin | None = None  # the result step's (docs/format.md "Origin": where the tool returned whole floats)


class ToolStart(msgspec.Struct):
    """A wrapped tool that began (see the module docstring): shown by `tui --follow`, skipped by recovery."""

    turn: int | None
    order: tuple[int, int]
    toolCall: dict[str, Any]
    callAt: int
    blackboxToolStart: int = 1


class Journal:
    """An append-only, locked file of JSON lines, one `write()` per append.

    A killed process loses nothing already written: the kernel holds it.  Not fsynced per line: that guards
    only against a machine crash and costs ~0.4 ms a step (3× the SDK's own time per call, bench_session).
    """

    def __init__(self, path: Path, header: bytes, search: Callable[[], KeySearch], *, hold: bool,
                 out: str) -> None:
        self.path = path
        self._search = search
        self._searched: KeySearch | None = None
        self._held: list[bytes] | None = [] if hold else None
        self._written = 0
        self.failure: str | None = None  # why the journal stopped being written (a full disk…)
        self.leaked = False
        self._fd: int | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK,
                         0o600)
        except OSError as exc:
            if exc.errno in _REFUSED:
                raise SessionError(f"cannot record to {out}: {exc.strerror or exc} ({path}); choose an output "
                                   "file in a folder you can write") from None
            self._fail(exc)
            return
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or a device there is never truncated or deleted
            os.close(fd)
            raise SessionError(f"cannot record to {out}: {path} is not a regular file; remove it or choose "
                               "another output file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise SessionError(f"another recording to {out} is running (its journal {path} is locked); wait "
                               "for it to finish, or record to another file") from None
        self._fd = fd
        try:
            os.ftruncate(fd, 0)
        except OSError as exc:
            self._fail(exc)
            return
        self.append([header])

    # -- writing -------------------------------------------------------------------------------------

    def append(self, lines: Sequence[bytes]) -> None:
        """Journal `lines` in one write (held while keys are unknown; dropped once the journal stopped)."""
        if self._fd is None or self.leaked or self.failure is not None:
            return
        if self._held is not None:
            self._held.extend(lines)
            return
        search = self._search()
        if search is not self._searched:
            self._searched = search
            if self._written and search and self._disk_leaks(search):
                return
        if search and any(search.found_in(line) for line in lines):
            self._wipe()
            return
        self._write(b"".join(line + b"\n" for line in lines))

    def release(self) -> None:
        """The session knows its keys now: write what was held (checked against them)."""
        if self._held is None:
            return
        held, self._held = self._held, None
        if held:
            self.append(held)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                n = self._os_write(self._fd, view)  # type: ignore[arg-type]
                self._written += n
                view = view[n:]
        except OSError as exc:
            self._fail(exc)

    _os_write = staticmethod(os.write)  # the one place bytes reach the disk (a full disk is tested here)

    def _disk_leaks(self, search: KeySearch) -> bool:
        """Check what is already on disk against a newly known key; a leak empties the journal."""
        try:
            data = os.pread(self._fd, self._written, 0)  # type: ignore[arg-type]
        except OSError:
            data = b""
        if search.found_in(data):
            self._wipe()
            return True
        return False

    def _wipe(self) -> None:
        """A line would hold a key: empty the journal and stop it, keeping the lock (the run is still live)."""
        self.leaked = True
        self._held = None
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)  # type: ignore[arg-type]

    def _fail(self, exc: OSError) -> None:
        self.failure = exc.strerror or str(exc)
        self._held = None
        print(f"[blackbox] the journal could not be written: {self.failure} ({self.path}); recording goes on "
              "in memory and the cassette is written at the end", file=sys.stderr)

    def discard(self) -> None:
        """Delete and close the journal (after a clean write, or when it must not hold a step).  Deleted before
        the lock is released, so no other process ever takes a journal that is going away."""
        self._held = None
        with contextlib.suppress(OSError):
            if self._fd is not None:
                self.path.unlink(missing_ok=True)
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


# ---------------------------------------------------------------------------------------------------------
# reading


def journal_steps(lines: Iterable[bytes], trace_id: str) -> list[Step]:
    """The steps the journal lines after the header hold, in the cassette's order.

    The chained step lines as written, up to the first unreadable one (a torn last line); then the tool entries
    of the last turn that were never chained, in the model's call order, chained after them.  Nothing is placed
    after a terminal step or after a model step that began a new turn."""
    steps: list[Step] = []
    entries: list[ToolEntry] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            value = decode_json(line, levels=MAX_NESTING + 1 + HOOK_SLACK)  # a step: its payload and itself
            if isinstance(value, dict) and value.get("blackboxToolStart") == 1:
                continue  # a tool began: nothing to recover until it returns
            if isinstance(value, dict) and value.get("blackboxTool") == 1:
                entries.append(msgspec.convert(value, ToolEntry))
            else:
                steps.append(msgspec.convert(value, Step))
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
            break  # the line being written when the process died (ValueError covers a lone surrogate in a
            # field msgspec checks, UnicodeEncodeError)
    return _place(steps, entries, trace_id)


def _place(steps: list[Step], entries: list[ToolEntry], trace_id: str) -> list[Step]:
    if not entries or (steps and steps[-1].type == "metadata"):
        return steps
    at = next((i for i in range(len(steps) - 1, -1, -1) if steps[i].type in ("model_output", "model_input")), None)
    if at is not None and steps[at].type != "model_output":
        return steps  # a model call began (its output never came): the turn's tools were all chained
    turn = None if at is None else steps[at].index
    chained = {str(s.payload.get("toolCallId")) for s in steps[(at or 0):]
               if s.type == "tool_call" and isinstance(s.payload, dict)}
    missing = sorted((e for e in entries if e.turn == turn and str(e.toolCall.get("toolCallId")) not in chained),
                     key=lambda e: e.order)
    if not missing:
        return steps
    chain = StepChain(trace_id, prefix=steps)
    for entry in missing:
        chain.append("tool_call", entry.callAt, entry.toolCall)
        chain.append("tool_result", entry.resultAt, entry.toolResult, origin=entry.origin)
    return chain.steps
