"""Recording: append steps to a new cassette, keep a crash-proof journal, write a verified cassette.

The session hands the recorder neutral payloads (a model step = the normalized request and response); the
recorder chains them (`cassette.StepChain`), puts the wrapped tool calls of a turn in the model's call order
whatever order they finished in, and flushes them before the next model step.

While recording, every step is also appended to a journal beside the output (`journal.Journal`: locked
for the recording's life, one `write()` per step, per model call's pair or per tool's pair), so even `kill
-9` leaves the run recoverable with `recover(journal)`; a tool that finishes before an earlier call of its
turn is journaled at once, as a tool entry `recover` puts back in the model's order.  A clean write removes
the journal.  A step holding a known API key (or a long piece of one) is never journaled, and the final
write refuses.  The journal's format is described in `blackbox.live.journal`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from blackbox.errors import CassetteError, SessionError
from blackbox.format.canonical import decode_json, js_number, nesting_headroom
from blackbox.format.cassette import SCHEMA_VERSION, Cassette, Step, StepChain, chain_break
from blackbox.format.firstdiff import json_equal
from blackbox.format.inert import inert
from blackbox.format.origin import Origin
from blackbox.format.payloads import Metadata, ModelInput, ModelOutput, ToolCall
from blackbox.format.secrets import KeySearch, Secrets
from blackbox.format.tokens import Tokens
from blackbox.format.verify import verify
from blackbox.format.writing import atomic_write, dumps
from blackbox.live.journal import (
    JOURNAL_SUFFIX,
    Journal,
    ToolEntry,
    ToolStart,
    journal_locked,
    journal_path,
    journal_steps,
)
from blackbox.live.made import made_now, made_of
from blackbox.live.redaction import ACTIVE, chosen
from blackbox.live.refusal import beside, find_refusal, refuse
from blackbox.providers.neutral import CallIds, calls_of
from blackbox.redaction import redact_cassette
from blackbox.redaction.apply import Redactor

__all__ = ["JOURNAL_SUFFIX", "Recorder", "ToolSlot", "journal_path", "recover"]


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, float):
        return msgspec.Raw(js_number(obj).encode())
    raise TypeError(f"a {type(obj).__name__} is not a JSON value")


_LINE = msgspec.json.Encoder(enc_hook=_enc_hook)


def _line(entry: Any) -> bytes:
    """A journal line; a value nested deeper than Python's stack allows (the session accepted it: at most the
    readers' depth) is encoded again with room for it."""
    try:
        return _LINE.encode(entry)
    except RecursionError:
        with nesting_headroom():
            return _LINE.encode(entry)


class ToolSlot(msgspec.Struct):
    """One run of a wrapped tool while recording: its call id, input, and (once done) its outcome."""

    call_id: str
    name: str
    tool_input: Any
    started_at: int
    order: tuple[int, int]  # (0, position in the model's calls) or (1, start order) when the model did not ask
    outcome: dict[str, Any] | None = None  # {"result": …} or {"error": "…"}
    finished_at: int = 0
    written: bool = False
    # Fields a tool source adds beside the neutral ones (an MCP call's server, method and wire result; see
    # docs/format.md): hashed with the step, ignored by the TypeScript Blackbox's readers.
    call_extra: dict[str, Any] | None = None
    result_extra: dict[str, Any] | None = None
    origin: Origin | None = None  # the result step's unhashed origin: where the tool returned whole floats


class Recorder:
    """Builds one cassette step by step; `write()` verifies it and writes it atomically."""

    def __init__(
        self,
        out: str | os.PathLike[str],
        trace_id: str,
        created_at: int,
        ids: CallIds,
        *,
        secrets: Secrets | None = None,
        prefix: list[Step] | None = None,
        parent_id: str | None = None,
        forked_from_step_id: str | None = None,
        journal: bool = True,
        redactor: Redactor | None = None,
    ) -> None:
        self.out = Path(out)
        self.created_at = created_at
        self.parent_id = parent_id
        self.forked_from_step_id = forked_from_step_id
        self._ids = ids
        # The keys, and when they are known (a session's: at its first request).
        self._secrets = secrets if secrets is not None else Secrets.known()
        # The policy applies before anything is hashed or journaled (docs/format.md, "Redaction").
        self._redact = redactor
        self._chain = StepChain(trace_id, prefix=prefix, redact=redactor,
                                redaction=redactor.info if redactor is not None else None)
        # When the recording started and with which versions (docs/format.md, "Origin"): the SDKs an agent uses
        # are loaded by the time it starts its session.
        self.made = made_now()
        self._turn_calls: list[dict[str, Any]] = []
        self._turn: int | None = None  # the index of the model_output step whose turn the tools answer
        self._slots: list[ToolSlot] = []
        self._unasked = 0
        self._journal: Journal | None = None
        self._journal_failure: str | None = None  # kept once the journal is discarded
        if journal:
            header: dict[str, Any] = {"blackboxJournal": 1, "id": trace_id, "createdAt": created_at,
                                      "out": str(self.out)}
            if parent_id is not None:
                header["parentId"] = parent_id
                header["forkedFromStepId"] = forked_from_step_id
            header["made"] = self.made  # what `recover` says made the run
            rescue_journal(self.out)
            self._journal = Journal(journal_path(self.out), _LINE.encode(header), self._secrets.search,
                                    hold=not self._secrets.requests_seen, out=str(self.out))
            self._journal_steps(*self._chain.steps)

    # -- state ---------------------------------------------------------------------------------------

    @property
    def steps(self) -> list[Step]:
        return self._chain.steps

    @property
    def trace_id(self) -> str:
        return self._chain.trace_id

    @property
    def journal_error(self) -> str | None:
        """Why the journal stopped being written (e.g. "No space left on device"), or None."""
        return self._journal.failure if self._journal is not None else self._journal_failure

    def keys_known(self) -> None:
        """The session has seen its first request's key headers: write the journal lines held until now."""
        if self._journal is not None and self._secrets.requests_seen:
            self._journal.release()

    # -- appending -----------------------------------------------------------------------------------

    def _append(self, type_: Any, timestamp: int, payload: Any) -> Step:
        step = self._chain.append(type_, timestamp, payload)
        self._journal_steps(step)
        return step

    def _journal_steps(self, *steps: Step) -> None:
        """Journal the steps in one write (the journal drops them, and stops, if one holds a key)."""
        if self._journal is not None and steps:
            self.keys_known()
            self._journal.append([_line(step) for step in steps])

    def model_step(self, model_input: ModelInput, started_at: int, model_output: ModelOutput, arrived_at: int,
                   tokens: Tokens | None = None, origin: Origin | None = None) -> None:
        """A model call: flush the previous turn's tools, then append its input and output (one journal
        write for both: a killed process leaves both lines, neither, or a torn last one).  `tokens` and `origin`
        go on the output step, beside its hashed fields."""
        self.flush_tools(force=True)
        first = self._chain.append("model_input", started_at, model_input)
        try:
            second = self._chain.append("model_output", arrived_at, model_output, tokens, origin)
        except BaseException:  # an output with no JSON form: the journal still mirrors the chain
            self._journal_steps(first)
            raise
        self._journal_steps(first, second)
        self._turn_calls = calls_of(model_output) if isinstance(model_output, dict) else []
        self._turn = second.index
        self._slots = []
        self._unasked = 0

    def resume_turn(self, model_output: Any, written: list[Any]) -> None:
        """Continue a turn whose first tool steps are already in the chain (a fork's copied prefix): `written`
        are their `tool_call` payloads, so the turn's other calls keep their ids and their call order."""
        self._turn_calls = calls_of(model_output) if isinstance(model_output, dict) else []
        self._turn = next((s.index for s in reversed(self.steps) if s.type == "model_output"), None)
        positions = {str(call.get("toolCallId")): i for i, call in enumerate(self._turn_calls)}
        self._slots = []
        self._unasked = 0
        for call in written:
            call_id = str(call.get("toolCallId"))
            if call_id in positions:
                order = (0, positions[call_id])
            else:
                order, self._unasked = (1, self._unasked), self._unasked + 1
            self._slots.append(ToolSlot(call_id, str(call.get("toolName")), call.get("toolInput"), 0, order,
                                        outcome={}, written=True))

    def tool_started(self, name: str, tool_input: Any, at: int, *, call_id: str | None = None) -> ToolSlot:
        """Claim the model's call this tool run answers (`call_id` when the caller already knows it, else same
        name and input, else same name), or a fresh id."""
        claimed = {slot.order for slot in self._slots}
        open_calls = [(i, call) for i, call in enumerate(self._turn_calls)
                      if (0, i) not in claimed and call.get("toolName") == name
                      and (call_id is None or call.get("toolCallId") == call_id)]
        match = next((c for c in open_calls if json_equal(c[1].get("toolInput"), tool_input)), None)
        match = match or (open_calls[0] if open_calls else None)
        if match is not None:
            slot = ToolSlot(match[1]["toolCallId"], name, tool_input, at, (0, match[0]))
        else:
            slot = ToolSlot(self._ids.fresh(), name, tool_input, at, (1, self._unasked))
            self._unasked += 1
        self._ids.note_name(slot.call_id, name)
        self._slots.append(slot)
        if self._journal is not None:  # so `tui --follow` shows it running; recovery skips the line
            self.keys_known()
            call = self._redacted("tool_call", dict(self._call_payload(slot)))
            self._journal.append([_line(ToolStart(self._turn, slot.order, call, at))])
        return slot

    def tool_finished(self, slot: ToolSlot, outcome: dict[str, Any], at: int) -> None:
        """Store a tool's result or error; write every slot whose turn order now allows it.  A result that
        must wait for earlier calls is journaled at once as a tool entry: the agent is about to receive it, so a
        kill from now on must not lose it."""
        slot.outcome = outcome
        slot.finished_at = at
        self.flush_tools(force=False)
        if not slot.written and self._journal is not None:
            self.keys_known()
            entry = ToolEntry(self._turn, slot.order, self._redacted("tool_call", dict(self._call_payload(slot))),
                              slot.started_at, self._redacted("tool_result", self._result_payload(slot)), at,
                              origin=slot.origin)
            self._journal.append([_line(entry)])

    def flush_tools(self, *, force: bool) -> None:
        """Write finished tool steps in the model's call order.

        Without `force`, stop at the first call not finished yet (it may still come); with it (before the
        next model step or the end), write every finished one, and a bare `tool_call` for any still running.
        """
        steps: list[Step] = []
        for slot in sorted((s for s in self._slots if not s.written), key=lambda s: s.order):
            if not force:
                if slot.outcome is None:
                    break
                asked, position = slot.order
                written = self._written_asked()
                if (asked == 0 and position != written) or (asked == 1 and written < len(self._turn_calls)):
                    break
            steps.extend(self._write_slot(slot))
        self._journal_steps(*steps)  # one write: a kill leaves a call with its result, or neither

    def _written_asked(self) -> int:
        """How many of the model's calls, from the first, have been written without a gap."""
        done = {s.order[1] for s in self._slots if s.written and s.order[0] == 0}
        n = 0
        while n in done:
            n += 1
        return n

    def _write_slot(self, slot: ToolSlot) -> list[Step]:
        """Chain the slot's steps (the caller journals them)."""
        steps = [self._chain.append("tool_call", slot.started_at, self._call_payload(slot))]
        if slot.outcome is not None:
            steps.append(self._chain.append("tool_result", slot.finished_at, self._result_payload(slot),
                                            origin=slot.origin))
        slot.written = True
        return steps

    def _redacted(self, step_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        return payload if self._redact is None else self._redact(step_type, payload)

    @staticmethod
    def _call_payload(slot: ToolSlot) -> ToolCall:
        payload: ToolCall = {"toolCallId": slot.call_id, "toolName": slot.name, "toolInput": slot.tool_input}
        return {**payload, **slot.call_extra} if slot.call_extra else payload  # type: ignore[typeddict-item]

    @staticmethod
    def _result_payload(slot: ToolSlot) -> dict[str, Any]:
        return {"toolCallId": slot.call_id, "toolName": slot.name, **(slot.outcome or {}), **(slot.result_extra or {})}

    def terminal(self, payload: Metadata, at: int) -> None:
        """The run's terminal metadata step, after every tool step of the last turn."""
        self.flush_tools(force=True)
        self._append("metadata", at, payload)

    # -- writing -------------------------------------------------------------------------------------

    def cassette(self) -> Cassette:
        return self._chain.cassette(self.created_at, parent_id=self.parent_id,
                                    forked_from_step_id=self.forked_from_step_id, made=self.made)

    def write(self, extra_secrets: Iterable[str] = ()) -> Cassette:
        """Verify, check for secrets, write atomically and drop the journal.  A step holding what no cassette
        may is refused (`RecordingRefused`, one line): the run before it is kept beside the output (`refusal`)."""
        self.flush_tools(force=True)
        cassette = self.cassette()
        secrets = list(dict.fromkeys((*self._secrets.values(), *extra_secrets)))
        detectors = {r.detector.name for r in self._redact.policy.rules if r.detector is not None} \
            if self._redact is not None else set()
        data = dumps(cassette)
        refusal = find_refusal(cassette, secrets, detectors, data=data)
        if refusal is not None:
            self.discard_journal()  # it may hold the refused value: the kept run is the cassette beside
            raise refuse(cassette, self.out, refusal, secrets, detectors)
        try:
            atomic_write(self.out, data)
        except OSError as exc:  # a full disk, a folder gone read-only: say what happened to both files
            journal = self.journal_error
            kept = (f"; the journal could not be written either: {journal}" if journal is not None
                    else f"; the run so far is in the journal {journal_path(self.out)}")
            raise SessionError(f"the cassette could not be written: {exc.strerror or exc} ({self.out}){kept}"
                               ) from None
        self.discard_journal()
        return cassette

    def discard_journal(self) -> None:
        if self._journal is not None:
            self._journal_failure = self._journal.failure
            self._journal.discard()
            self._journal = None


def _verify_failure(cassette: Cassette, secrets: list[str]) -> str | None:
    """The first verify check that fails, as one line, or None."""
    report = verify(cassette, extra_secrets=secrets)
    failure = report.failure
    if failure is None:
        return None
    where = f" at step {failure.step}" if failure.step is not None else ""
    return f"verify {failure.name} failed{where}: {failure.detail}; {report.advice}"


# ---------------------------------------------------------------------------------------------------------
# recovery


class JournalError(CassetteError):
    """The file is a Blackbox journal, but one whose header or content cannot make a valid cassette."""


def _header_fields(header: dict[str, Any], p: Path) -> tuple[str, int, str | None, str | None]:
    """The journal header's id, createdAt, parentId and forkedFromStepId, checked: a cassette made of wrong
    types would be written, reported as recovered, and then refused by every command."""
    trace_id = header.get("id")
    if trace_id is None or trace_id == "":
        trace_id = "run"
    if not isinstance(trace_id, str):
        raise JournalError(f"{p}: the journal header's `id` is not a string; the journal is damaged")
    created = header.get("createdAt", 0)
    if created is None:
        created = 0
    if isinstance(created, bool) or not isinstance(created, int | float) or created != created \
            or created in (float("inf"), float("-inf")) or created != int(created):
        raise JournalError(f"{p}: the journal header's `createdAt` is not a whole number of milliseconds; the "
                           "journal is damaged")
    links: list[str | None] = []
    for field in ("parentId", "forkedFromStepId"):
        value = header.get(field)
        if value is not None and not isinstance(value, str):
            raise JournalError(f"{p}: the journal header's `{field}` is not a string; the journal is damaged")
        links.append(value)
    return trace_id, int(created), links[0], links[1]


def recover(path: str | os.PathLike[str], redactor: Any = ACTIVE) -> Cassette:
    """Turn a journal left by a killed recording into a cassette (incomplete: it has no terminal step
    unless the run got that far).  A torn last line is dropped; a broken chain is cut where it breaks.

    `CassetteError` when it is not a journal; `JournalError` when it is one whose header is damaged."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise CassetteError(f"{p}: cannot read the journal: {exc.strerror or exc}") from None
    if not data.strip():
        raise CassetteError(f"{p}: the journal is empty: its recording was stopped before its first model "
                            "request, so there is no step to recover; record the run again")
    lines = data.split(b"\n")
    try:
        header = decode_json(lines[0])
    except (msgspec.DecodeError, ValueError):
        header = None
    if not isinstance(header, dict) or header.get("blackboxJournal") != 1:
        raise CassetteError(f"{p}: not a Blackbox journal (no header line)")
    trace_id, created_at, parent_id, forked_from = _header_fields(header, p)
    steps = journal_steps(lines[1:], trace_id)
    cassette = Cassette(version=SCHEMA_VERSION, id=trace_id, createdAt=created_at, steps=steps, parentId=parent_id,
                        forkedFromStepId=forked_from, made=made_of(header.get("made")))
    broken = chain_break(cassette)
    if broken is not None:
        cassette.steps = cassette.steps[: broken.index]
    redact = chosen(redactor)  # a journal of a recording without the policy: redacted now, before it is written
    return redact_cassette(cassette, redact) if redact is not None else cassette


def key_refusal(cassette: Cassette, data: bytes) -> str | None:
    """Why a recovered run may not be written (`data`, its bytes): it holds an API key of the environment or a
    piece of one (the key check every writer of a cassette makes), or None."""
    where = KeySearch.of_environment().step_holding(cassette, data)
    return None if where is None else (f"{where} holds an API key from the environment (or a piece of one, also "
                                       "split by spaces, line ends or escapes)")


def recovered_path(out: str | os.PathLike[str]) -> Path:
    """Where a rescued run of `out` goes: beside it, `<name>.recovered.json` (then `.recovered-2.json`, …).
    A name taken by anything, a dangling symlink included, is skipped."""
    return beside(out, "recovered")


def rescue_journal(out: str | os.PathLike[str]) -> Path | None:
    """Before a new recording to `out` starts its journal, save the run a killed process left there.

    The old journal would be truncated; instead it becomes a verified, incomplete cassette beside `out`
    (see `recovered_path`) and is removed only once that is written.  A journal that cannot make a cassette
    that verifies is kept, renamed `<journal>.unrecoverable` (nothing is deleted; the new recording can
    start).  A failed write (full disk) raises `WriteError` and leaves the journal where it was.  Returns the
    cassette's path, or None when there was nothing.
    """
    journal = journal_path(out)
    if not journal.is_file() or journal_locked(journal):
        return None  # nothing to rescue (or not a file: a FIFO would block the read), or a live recording's
    data = b""
    try:
        cassette = recover(journal)
        failure = _verify_failure(cassette, []) if cassette.steps else None
        if failure is None and cassette.steps:
            data = dumps(cassette)
            failure = key_refusal(cassette, data)
    except JournalError as exc:
        failure = str(exc).removeprefix(f"{journal}: ")
    except CassetteError:
        return None  # not a journal of ours: _Journal replaces it, as before
    if failure is not None:
        aside = journal.with_name(journal.name + ".unrecoverable")
        n = 2
        while os.path.lexists(aside):
            aside = journal.with_name(f"{journal.name}.unrecoverable-{n}")
            n += 1
        os.replace(journal, aside)
        print(f"[blackbox] the journal of an interrupted recording of {inert(str(out))} cannot be recovered "
              f"({inert(failure)}); it was kept as {inert(str(aside))}", file=sys.stderr)
        return None
    target = recovered_path(out)
    if cassette.steps:
        atomic_write(target, data)
    journal.unlink(missing_ok=True)
    if not cassette.steps:
        return None
    print(f"[blackbox] an interrupted recording of {inert(str(out))} was recovered into {inert(str(target))} "
          f"({len(cassette.steps)} steps)", file=sys.stderr)
    return target
