"""Replay: a cursor over a recorded cassette that checks what the agent does against it.

The session hands the replayer each normalized model request and each wrapped tool call; the replayer
answers with the recorded `model_output` step or tool result, or raises `ReplayDivergenceError` with a
report (step, path, recorded and actual values masked and cut, a hint).  It never runs a tool
and never touches the network.

A "turn" is the run of `tool_call` / `tool_result` steps after a model output (or at the start of the run):
the agent may run those tools in any order, matched by name then arguments; every one must have run before
the next model call and before `finish()`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import msgspec

from blackbox.errors import ReplayDivergenceError
from blackbox.format.canonical import canonical_text
from blackbox.format.cassette import Cassette, Step
from blackbox.format.firstdiff import first_difference, format_value, json_equal
from blackbox.format.outcome import Outcome, last_metadata, outcome, terminal_outcome, turn_end
from blackbox.format.payloads import ModelInput
from blackbox.format.secrets import PROVIDER_ID_PATTERNS, mask_secrets
from blackbox.format.typed import ToolCallView, ToolResultView, calls_in
from blackbox.providers.neutral import CallIds

__all__ = ["ReplayedToolError", "Replayer", "ToolClaim", "divergence"]

_HINT = ("the agent sent a different request than the one recorded; if the difference is nondeterministic "
         "(a timestamp, a random id), rerun with --match sequence")


class ReplayedToolError(RuntimeError):
    """A wrapped tool's recorded error, raised again in replay (the tool itself does not run)."""


class ToolClaim(msgspec.Struct):
    """A recorded tool call handed to the agent: its id and its recorded result or error."""

    call_id: str
    name: str
    call_index: int
    result_index: int | None
    outcome: dict[str, Any] | None  # the result step's payload
    floats: tuple[str, ...] | None = None  # where the result held whole floats (the step's `origin.floats`)


class _TurnCall(msgspec.Struct):
    call_index: int
    result_index: int | None
    call: ToolCallView
    payload: dict[str, Any]  # as recorded, for the redaction policy to mask as it masks the live input
    claimed: bool = False


def divergence(step: int, path: str, recorded: str, actual: str, hint: str | None = None) -> ReplayDivergenceError:
    """The divergence report: `replay diverged at step i, path`, the two values (masked), and a hint."""
    lines = [f"replay diverged at step {step}, {path}", f"  recorded: {recorded}", f"  actual:   {actual}"]
    if hint:
        lines.append(f"  {hint}")
    return ReplayDivergenceError(mask_secrets("\n".join(lines)), step=step, path=path)


class Replayer:
    """Consumes a cassette in order: model calls strictly in sequence, tool calls within their turn."""

    def __init__(self, cassette: Cassette, ids: CallIds, *, match: str = "strict",
                 redact: Callable[[str, Any], Any] | None = None) -> None:
        self.cassette = cassette
        self.match = match
        # The policy in force: both sides are compared as it lets them out, so a cassette redacted by it matches
        # the same data, and one recorded before the policy existed still matches too.
        self._redact = redact
        self._key_hint = _key_hint(cassette, redact)
        self._ids = ids
        self._steps = cassette.steps
        self._end = len(self._steps) - 1 if self._steps and self._steps[-1].type == "metadata" else len(self._steps)
        self._pos = 0  # the first step not consumed at turn level
        self._consumed = 0
        self._turn: list[_TurnCall] = []
        self._own_ids: dict[str, int] = {}  # `call-N` handed out where the cassette kept no provider id → its step
        self._open_turn()

    # -- where we are ------------------------------------------------------------------------------

    @property
    def ids(self) -> CallIds:
        """The session's call-id map, which a replayed answer teaches too (`engines.answer`)."""
        return self._ids

    @property
    def consumed(self) -> int:
        """How many recorded steps the agent has reproduced so far."""
        return self._consumed

    def model_calls_left(self) -> int:
        return sum(1 for s in self._steps[self._pos:self._end] if s.type == "model_input")

    def _open_turn(self) -> None:
        """Collect the tool steps that start at the cursor (they belong to the turn just answered)."""
        end = turn_end(self._steps, self._pos)
        self._turn_end = end
        steps = self._steps[self._pos:end]
        results = {found.toolCallId: s.index for s in reversed(steps)
                   if isinstance(found := s.view(), ToolResultView)}
        self._turn = [_TurnCall(s.index, results.get(found.toolCallId), found, s.payload) for s in steps
                      if isinstance(found := s.view(), ToolCallView)]

    def _unrun(self) -> _TurnCall | None:
        return next((call for call in self._turn if not call.claimed), None)

    # -- model calls -------------------------------------------------------------------------------

    def duration_ms(self, answer: Step) -> int:
        """How long the recorded call took: its `model_output` timestamp less its `model_input`'s."""
        start = self._steps[answer.index - 1].timestamp if answer.index > 0 else answer.timestamp
        return int(max(0, answer.timestamp - start))

    def claim_model_call(self, live: ModelInput) -> Step:
        """Check a normalized request against the recording; the recorded `model_output` step to answer with."""
        unrun = self._unrun()
        if unrun is not None:
            raise divergence(unrun.call_index, "tool_call", _describe_call(unrun.call),
                             "a model call: the agent moved on without running it")
        self._pos = self._turn_end
        step = self._steps[self._pos] if self._pos < len(self._steps) else None
        if step is None or step.type != "model_input":
            recorded_calls = sum(1 for s in self._steps if s.type == "model_input")
            recorded = "the end of the run" if step is None or step.type == "metadata" else f"a {step.type} step"
            raise divergence(self._pos, "(root)", recorded, "another model call",
                             f"the agent made another model call; the cassette records {recorded_calls}")
        if self.match == "strict":
            self._compare(step, live)
        answer = self._steps[self._pos + 1] if self._pos + 1 < len(self._steps) else None
        if answer is None or answer.type != "model_output" or not isinstance(answer.payload, dict):
            raise divergence(self._pos + 1, "(root)", "no recorded model output", "a model call waiting for one",
                             "the cassette ends after this request; re-record it")
        calls = calls_in(answer.view())  # none from an output that does not fit (verify reports it)
        kept = answer.origin.call_ids() if answer.origin is not None else []
        kept = kept if len(kept) == len(calls) else [None] * len(calls)
        for call, provider_id in zip(calls, kept, strict=True):
            self._ids.bind(call.toolCallId, call.toolCallId)
            self._ids.note_name(call.toolCallId, call.toolName)
            if provider_id is not None and self._ids.lookup(provider_id) in (None, call.toolCallId):
                self._ids.bind(provider_id, call.toolCallId)  # the agent was handed the provider's id again
            else:
                self._own_ids[call.toolCallId] = answer.index  # handed `call-N`: the recorded agent got another
        self._pos += 2
        self._consumed += 2
        self._open_turn()
        return answer

    def _recorded_input(self, call: _TurnCall) -> Any:
        """A recorded call's input as the live one is compared: masked by the policy when one is active."""
        return call.call.toolInput if self._redact is None else self._redact("tool_call", call.payload).get("toolInput")

    def _view(self, step_type: str, payload: Any) -> Any:
        return payload if self._redact is None else self._redact(step_type, payload)

    def _compare(self, step: Step, live: Any) -> None:
        diff = first_difference(self._view("model_input", step.payload), self._view("model_input", live))
        if diff is not None:
            raise divergence(step.index, diff.path, format_value(diff.old, diff.old_present),
                             format_value(diff.new, diff.new_present),
                             self._id_hint(diff.old, diff.new) or self._key_hint or _HINT)

    def _id_hint(self, recorded: Any, actual: Any) -> str | None:
        """Why a diverging value may hold another tool-call id than the recorded one: the agent put the id it was
        handed into what it sent (a log, a result, an answer), and replay handed it Blackbox's `call-N` because
        the cassette kept no provider id for that call (docs/format.md, "Origin")."""
        return id_hint(self._own_ids, recorded, actual)

    # -- tools -------------------------------------------------------------------------------------

    def claim_tool(self, name: str, tool_input: Any) -> ToolClaim:
        """The recorded call this tool run answers: same name, then same input (in call order for duplicates);
        under `--match sequence`, with no call of the same input, the first of the same name."""
        candidates = [c for c in self._turn if not c.claimed and c.call.toolName == name]
        if not candidates:
            where = self._unrun()
            step = where.call_index if where is not None else self._turn_end
            recorded = _describe_call(where.call) if where is not None else self._next_expected()
            asked = _describe_call(ToolCallView(toolName=name, toolInput=tool_input))
            raise divergence(step, f"tool {name}", recorded, asked,
                             "the agent ran a tool the recording did not run at this point")
        chosen = candidates[0]
        if self._redact is not None:
            tool_input = self._view("tool_call", {"toolCallId": chosen.call.toolCallId, "toolName": name,
                                                  "toolInput": tool_input}).get("toolInput")
        same = next((c for c in candidates if json_equal(self._recorded_input(c), tool_input)), None)
        if same is not None:  # concurrent calls of one tool may start in another order: each gets its own outcome
            chosen = same
        elif self.match == "strict":
                raise divergence(chosen.call_index, f"tool {name} input", format_value(chosen.call.toolInput),
                                 format_value(tool_input), self._id_hint(chosen.call.toolInput, tool_input)
                                 or "the agent called the tool with different arguments")
        chosen.claimed = True
        self._consumed += 1 if chosen.result_index is None else 2
        call_id = chosen.call.toolCallId
        self._ids.bind(call_id, call_id)
        self._ids.note_name(call_id, name)
        answered = self._steps[chosen.result_index] if chosen.result_index is not None else None
        result = answered.payload if answered is not None else None
        return ToolClaim(call_id, name, chosen.call_index, chosen.result_index,
                         _copied(result) if isinstance(result, dict) else None,
                         answered.origin.floats if answered is not None and answered.origin is not None else None)

    def _next_expected(self) -> str:
        step = self._steps[self._turn_end] if self._turn_end < len(self._steps) else None
        if step is None or step.type == "metadata":
            return "the end of the run"
        return "the next model call" if step.type == "model_input" else f"a {step.type} step"

    # -- the end -----------------------------------------------------------------------------------

    def finish(self, terminal: Any) -> Outcome:
        """End-of-run checks: everything consumed, then the same terminal payload as recorded."""
        unrun = self._unrun()
        if unrun is not None:
            raise divergence(unrun.call_index, "end of run", f"the agent runs {unrun.call.toolName}",
                             "finish()", "the agent finished without running a recorded tool call")
        left = self.model_calls_left()
        if left:
            raise divergence(self._turn_end, "end of run", f"{left} more model call{'s' if left != 1 else ''}",
                             "finish()", "the agent finished before making every recorded model call")
        recorded = last_metadata(self._steps)  # None for an incomplete recording
        if self._redact is not None:
            terminal = self._redact("metadata", terminal)
            recorded = self._redact("metadata", recorded) if recorded is not None else None
        if not json_equal(recorded, terminal):
            raise divergence(len(self._steps) - 1 if recorded is not None else len(self._steps), "outcome",
                             outcome(self.cassette).describe(), terminal_outcome(terminal).describe(),
                             self._id_hint(recorded, terminal) or "the run ended differently from the recording")
        self._consumed = len(self._steps)
        return outcome(self.cassette)


_OWN_ID = re.compile(r"\bcall-\d+\b")


def id_hint(own: dict[str, int], recorded: Any, actual: Any) -> str | None:
    """The hint for a divergence whose actual side names a `call-N` replay handed out in place of a provider id
    (`own`: those ids → the step of the output that asked for them) while the recorded side does not."""
    try:
        text, was = canonical_text(actual), canonical_text(recorded)
    except Exception:  # a value with no JSON form (NaN): no hint, the divergence says the rest
        return None
    handed = next((found for found in _OWN_ID.findall(text) if found in own and found not in was), None)
    if handed is None:
        return None
    seen = next((label for label, pattern in PROVIDER_ID_PATTERNS if pattern.search(was)), "the provider's id")
    return (f"the agent used the tool-call id {handed} that replay handed it for the call step {own[handed]} asked "
            f"for, where the recorded run was handed {seen}: this cassette keeps no provider id for that call "
            "(recorded before Blackbox kept them, imported, or scripted), so replay hands out Blackbox's own; "
            "re-record the run to keep the provider's ids")


def _key_hint(cassette: Cassette, redact: Any) -> str | None:
    """When the cassette's masked values were made with another key than this replay's: say so (a masked
    value can only match under the key that made it)."""
    made = cassette.redaction.get("key") if isinstance(cassette.redaction, dict) else None
    now = getattr(redact, "key_id", "unkeyed" if redact is None else None)
    if not isinstance(made, str) or made == now:
        return None
    return (f"the cassette's masked values were made with redaction key {made}, this replay has "
            f"{now or 'none'}: set BLACKBOX_REDACT_KEY (or the policy's key-file) as when it was recorded")


def _describe_call(call: ToolCallView) -> str:
    return f"{call.toolName} {format_value(call.toolInput)}"


def _copied(value: Any) -> Any:
    """A copy the agent may change; a result as deep as the readers accept is copied with room for it."""
    try:
        return copy.deepcopy(value)
    except RecursionError:
        from blackbox.format.canonical import nesting_headroom

        with nesting_headroom():
            return copy.deepcopy(value)
