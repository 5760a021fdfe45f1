"""A loaded cassette as the UI sees it: lazily computed summaries, tool-round nesting, search and JSON text.

Everything here is cheap per step and computed on demand, so a 10,000-step cassette opens at once; the
hash-chain check (which hashes every step) runs once, off the UI thread, through `check_chain`.  Payloads
stay undecoded (`load_lazy`: about the file's size in memory) and are decoded per step when shown.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from blackbox.errors import CassetteError
from blackbox.format.cassette import Cassette, ChainBreak, Step, chain_break, paused_gc
from blackbox.format.indexing import CHUNK, CassetteHeader, FileStep, Indexer, Unusual
from blackbox.format.inert import inert
from blackbox.format.lazy import LazyCassette, LazyStep, load_lazy
from blackbox.format.outcome import Outcome, summarize_step, terminal_outcome_of
from blackbox.format.typed import ToolCallView, ToolResultView, View
from blackbox.format.writing import pretty_json

from .mcp_view import mcp_origin, with_origin
from .reading import Deliver, Loading, whole_file_problem
from .run_steps import (
    StepRecord,
    Steps,
    ToolFacts,
    batch_facts,
    decode_record,
    is_error_result,
    tool_facts_of,
    tool_name,
)

__all__ = ["PROGRESSIVE_FROM", "Run", "format_time", "is_error_result", "pretty_json", "tool_name"]

PROGRESSIVE_FROM = 32 << 20  # bytes: a file this large opens with its first steps, the rest read meanwhile
FIRST_CHUNK = 256 << 10  # bytes of steps read before the first paint


def compact_json(value: Any) -> str:
    return pretty_json(value, indent=0)


def format_time(ms: float) -> str:
    """A millisecond timestamp in UTC (never local time: the same file must look the same everywhere)."""
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d} UTC"


_UNCHECKED = object()


class _Closed(Exception):
    """The run was closed while its chain was being checked."""


class Run:
    """One cassette open in the UI; summaries, nesting and the chain state are cached on first use.

    A large file (`PROGRESSIVE_FROM` bytes or more) opens with its first steps only; `read_rest`, run off the
    UI thread, indexes the rest and checks the chain, handing each change to the UI thread to apply."""

    def __init__(self, cassette: LazyCassette | CassetteHeader, path: Path | None = None, *,
                 steps: list[StepRecord] | None = None, loading: Loading | None = None) -> None:
        self.header: LazyCassette | CassetteHeader = cassette
        self.path = path
        records: list[StepRecord] = list(cassette.steps) if isinstance(cassette, LazyCassette) else []
        self.steps = Steps(steps if steps is not None else records)
        self._summaries: list[str | None] = [None] * len(self.steps)
        self._nesting: list[str] = []
        self._open_round: list[int] = []
        self._in_round = False
        self._tools: ToolFacts | None = None
        self._outcome: Outcome | None = None
        self._chain: Any = _UNCHECKED
        self.chain_progress = 0  # steps the chain check has passed
        self.loading = loading
        self.generation = 0  # counts the times the steps were replaced, not just added to
        self.problem = ""  # why the file could not be read to its end (the steps before stay shown)
        self.loaded = threading.Event()
        self.closed = threading.Event()
        self.searching = threading.Event()  # a search is running: the chain check waits for it
        self._chain_lock = threading.Lock()
        if loading is None:
            self.loaded.set()

    def append(self, steps: list[LazyStep], *, drop: int = 0) -> None:
        """Steps a recording in progress just wrote (`--follow`), after dropping its last `drop` steps (tool
        runs shown ahead of their turn, now chained): the per-run caches start over."""
        if drop:
            self.generation += 1
            keep = max(0, len(self.steps.lazy) - drop)
            del self.steps.lazy[keep:]
            del self._summaries[keep:]
            self.steps.forget_from(keep)
            self._nesting, self._open_round, self._in_round = [], [], False
        self.steps.lazy.extend(steps)
        self._summaries.extend([None] * len(steps))
        self._tools = None
        self._outcome = None
        self._chain = _UNCHECKED

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Run:
        """Load a cassette file (structure only; `CassetteError` with one clear line if it cannot be read).

        A large one is opened progressively: its fields and first steps now, the rest by `read_rest`."""
        path = Path(path)
        try:
            large = path.stat().st_size >= PROGRESSIVE_FROM and path.is_file()
        except OSError:
            large = False  # let the loader say what is wrong
        if large:
            indexer = Indexer(path, chunk=FIRST_CHUNK)
            try:
                header = indexer.start()
                batches = indexer.batches()
                first = next(batches)
            except Unusual:
                indexer.file.close()
            else:
                if indexer.failed:  # damaged within the first steps: the loader's one line, before any UI
                    indexer.file.close()
                    return cls(load_lazy(path), path)
                indexer.chunk = CHUNK
                run = cls(header, path, steps=[*first.steps], loading=Loading(indexer, batches))
                run._tools = batch_facts(first)
                if indexer.done:
                    run._finish(indexer)
                return run
        return cls(load_lazy(path), path)

    # -- reading the rest of a large file (off the UI thread) ----------------------------------------------

    def read_rest(self, deliver: Deliver, cancelled: Callable[[], bool]) -> None:
        """Index the rest of the file; every change is handed to `deliver`, which has the UI thread apply it,
        so the UI only ever sees whole batches.  A file the index does not read by itself is loaded whole."""
        loading = self.loading
        if loading is None:
            return
        try:
            for batch in loading.batches:
                facts = batch_facts(batch)
                if not deliver(partial(self._grow, batch.steps, facts)):
                    return
                if cancelled() or self.closed.is_set():
                    return
        except Unusual:
            self._read_whole(deliver)
            return
        except CassetteError as exc:
            deliver(partial(self._fail, str(exc)))
            return
        deliver(partial(self._finish, loading.indexer))

    def _read_whole(self, deliver: Deliver) -> None:
        """A file the index does not read by itself: the whole-file loader's result or one-line error.

        The loader is asked first in a child process: a whole-file load holds the interpreter for seconds,
        and the UI (and quitting) must not wait on it to learn that a damaged file is damaged.  Only a file
        that loads (an unusual layout) is then loaded here."""
        assert self.path is not None
        problem = whole_file_problem(self.path, self.closed)
        if problem is None:  # closed meanwhile
            return
        if problem:
            deliver(partial(self._fail, problem))
            return
        try:
            whole = load_lazy(self.path)
        except CassetteError as exc:
            deliver(partial(self._fail, str(exc)))
            return
        deliver(partial(self._replace, whole))

    def _grow(self, steps: list[FileStep], facts: ToolFacts) -> None:
        self.steps.lazy.extend(steps)
        self._summaries.extend([None] * len(steps))
        if self._tools is not None:
            self._tools.extend(facts)

    def _finish(self, indexer: Indexer) -> None:
        if indexer.header is not None:
            self.header = indexer.header
        self.loading = None
        self.loaded.set()

    def _replace(self, whole: LazyCassette) -> None:
        self.generation += 1
        self.header = whole
        self.steps = Steps(list(whole.steps))
        self._summaries = [None] * len(self.steps)
        self._nesting, self._open_round, self._in_round = [], [], False
        self._tools = None
        self.loading = None
        self.loaded.set()

    def _fail(self, message: str) -> None:
        """The file cannot be read to its end: the steps read stay shown, the chain counts as broken there."""
        self.problem = message
        self.loading = None
        self._chain = ChainBreak(len(self.steps), f"the file cannot be read from here on: {message}")
        self.loaded.set()

    @property
    def cassette(self) -> LazyCassette | CassetteHeader:
        """The cassette's own fields (id, createdAt, parentId, forkedFromStepId); steps are in `steps`."""
        return self.header

    def decoded(self) -> Cassette:
        """The whole cassette with every payload decoded (the diff needs it; costs about 3× the file)."""
        self.wait_loaded()
        h = self.header
        with paused_gc():
            steps = [record.decoded() for record in self.steps.lazy]
        return Cassette(h.version, h.id, h.createdAt, steps, h.parentId, h.forkedFromStepId)

    @property
    def name(self) -> str:
        """The file's name (or the id), made inert: it is shown on screen."""
        return inert(self.path.name if self.path else self.cassette.id)

    @property
    def label(self) -> str:
        """The cassette's id, made inert for the screen."""
        return inert(self.cassette.id)

    def __len__(self) -> int:
        return len(self.steps)

    def summary(self, index: int) -> str:
        """The step's one-line summary, inert: a tool's output may hold escape sequences."""
        cached = self._summaries[index]
        if cached is None:
            step = self.steps[index]
            cached = self._summaries[index] = inert(with_origin(summarize_step(step), self.origin(index, step)))
        return cached

    def origin(self, index: int, step: Step) -> tuple[str, str] | None:
        """The MCP server of a tool step; a result's is its call's, the step before it."""
        if step.type not in ("tool_call", "tool_result"):
            return None
        origin = mcp_origin(step)
        found = step.view() if origin is None and step.type == "tool_result" and index > 0 else None
        if isinstance(found, ToolResultView):
            call = self.steps[index - 1]
            called = call.view()
            same = isinstance(called, ToolCallView) and called.toolCallId == found.toolCallId
            origin = mcp_origin(call) if same else None
        return origin

    @property
    def outcome(self) -> Outcome:
        """`blackbox.outcome.outcome`, from the last step's payload and the tool calls' names (while a large
        file is still being read: incomplete, as far as it is known)."""
        if self.loading is not None:
            return Outcome("incomplete", f"not known yet: reading the file ({self.loading.fraction:.0%})")
        if self._outcome is None:
            self._outcome = terminal_outcome_of(self._ending(), tuple(self._tool_facts().calls))
        return self._outcome

    @property
    def ending(self) -> Outcome:
        """The outcome as its last step tells it, without the tool sequence `outcome` gathers from every tool
        step (the header shows it at the first paint: one step read, not all)."""
        if self.loading is not None or self._outcome is not None:
            return self.outcome
        return terminal_outcome_of(self._ending())

    def _ending(self) -> View | None:
        """The view of the terminal metadata step (the last step), or None when the run has none."""
        last = self.steps[-1] if len(self.steps) and self.steps.type(-1) == "metadata" else None
        return last.view() if last is not None else None

    def _tool_facts(self) -> ToolFacts:
        if self._tools is None:
            records = self.steps.lazy
            self._tools = tool_facts_of(records, lambda i: records[i].payload)
        return self._tools

    def is_error_result(self, index: int) -> bool:
        errors = self._tool_facts().errors
        return index < len(errors) and errors[index]

    # -- the hash chain ------------------------------------------------------------------------------------

    @property
    def chain_checked(self) -> bool:
        return self._chain is not _UNCHECKED

    @property
    def chain(self) -> ChainBreak | None:
        """The first broken link, or None; checks on first use (call `check_chain` from a thread first)."""
        return self.check_chain() if self._chain is _UNCHECKED else self._chain

    def check_chain(self) -> ChainBreak | None:
        """Check the whole chain (off the UI thread: it hashes every step), counting `chain_progress`.

        Waits for a large file to be read first; returns None unchecked if the run is closed meanwhile."""
        if not self.wait_loaded():
            return None
        with self._chain_lock:
            if self._chain is _UNCHECKED:
                self.chain_progress = 0

                def passed(step: Step, _: bytes) -> None:
                    self.chain_progress = step.index + 1
                    while self.searching.is_set() and not self.closed.is_set():
                        time.sleep(0.01)  # a search the user waits for goes first
                    if self.closed.is_set():
                        raise _Closed

                try:
                    self._chain = chain_break(self.steps.lazy, on_step=passed)
                except _Closed:
                    return None
        found: ChainBreak | None = self._chain
        return found

    def wait_loaded(self) -> bool:
        """Wait (off the UI thread) until a large file has been read; False if the run was closed first."""
        while not self.loaded.wait(0.1):
            if self.closed.is_set():
                return False
        return True

    def close(self) -> None:
        """Stop the background reading and checking (the app is quitting)."""
        self.closed.set()

    # -- tool rounds ---------------------------------------------------------------------------------------

    def nesting(self, index: int) -> str:
        """The tree glyph of a step: tool steps that follow a model output are its children."""
        if index >= len(self._nesting):
            self._extend_nesting()
        return self._nesting[index]

    def _extend_nesting(self) -> None:
        """Glyphs for the steps not yet seen; the round still open at the end stays open, so steps read
        later can join it (its last child is drawn └─ until then)."""
        glyphs = self._nesting
        children = self._open_round
        start = len(glyphs)
        glyphs.extend([""] * (len(self.steps) - start))
        for i in range(start, len(glyphs)):
            kind = self.steps.lazy[i].type
            if kind in ("tool_call", "tool_result") and self._in_round:
                children.append(i)
                continue
            self._close_round(glyphs, children)
            children.clear()
            self._in_round = kind == "model_output"
        self._close_round(glyphs, children)

    @staticmethod
    def _close_round(glyphs: list[str], children: list[int]) -> None:
        for position, i in enumerate(children):
            glyphs[i] = "└─ " if position == len(children) - 1 else "├─ "

    # -- finding steps -------------------------------------------------------------------------------------

    def matches(self, index: int, needle: str) -> bool:
        """Case-insensitive match of the summary, the type or the payload's JSON text.  Safe off the UI
        thread: it reads the step itself rather than through the cache the screen uses."""
        record = self.steps.lazy[index]
        if needle in record.type:
            return True
        step = decode_record(record)
        summary = self._summaries[index] or inert(summarize_step(step))
        return needle in summary.lower() or needle in compact_json(step.payload).lower()

    def tool_names(self) -> list[str]:
        return list(dict.fromkeys(name for name in self._tool_facts().names if name is not None))

    def step_types(self) -> list[str]:
        return list(dict.fromkeys(step.type for step in self.steps.lazy))

    def indices(self, test: str, value: str = "", *, start: int = 0) -> list[int]:
        """The steps (from `start` on) of one `type`, of one `tool` (name) or the `errors` (error results),
        without decoding every payload."""
        if test == "type":
            return [i for i in range(start, len(self.steps)) if self.steps.lazy[i].type == value]
        facts = self._tool_facts()
        if test == "tool":
            return [i for i in range(start, len(facts.names)) if facts.names[i] == value]
        return [i for i in range(start, len(facts.errors)) if facts.errors[i]]
