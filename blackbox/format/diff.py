"""diff (docs/format.md, "Diff, assert, inspect and list"): where two cassettes diverge, what changed there, and what
it did to the outcome.

By default steps match when their hashes are equal (a fork and its parent); `semantic` matches type plus a
JSON-equal payload (two separate recordings); `agents` matches what the step did, whichever coding agent took it
(two imports of one task by different agents; `blackbox.format.agentview`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

from blackbox.format.agentview import same_actions, same_step
from blackbox.format.canonical import reading_room, with_headroom
from blackbox.format.cassette import Cassette, ChainBreak, Step, hash_break, link_break, paused_gc
from blackbox.format.firstdiff import Difference, join_path, json_equal, utf16_sorted
from blackbox.format.lazy import TOO_DEEP_RAW, LazyCassette, LazyStep, decode_payload
from blackbox.format.outcome import Outcome, outcome, step_label, summarize_step, terminal_outcome_of, tool_name
from blackbox.format.typed import tool_name_json

__all__ = [
    "ChangedValue",
    "DiffReport",
    "Verdict",
    "compare_rows",
    "diff",
    "diff_lazy",
    "lazy_chain_breaks",
    "lazy_outcome",
    "step_changes",
    "verdict_of",
]

Row = Literal["same", "changed", "only_a", "only_b"]
VALUE_KEYS = ("result", "toolInput", "calls", "text")
FIELD_LIMIT = 6


class ChangedValue(msgspec.Struct, frozen=True):
    """The value that changed at the divergence, when both steps carry it."""

    key: str
    old: Any
    new: Any


class Verdict(msgspec.Struct, frozen=True):
    kind: Literal["status_flipped", "answer_changed", "reason_changed", "path_changed", "no_change"]
    text: str


class DiffReport(msgspec.Struct):
    a_id: str
    b_id: str
    semantic: bool
    rows: list[Row]
    shared_prefix: int
    first_divergence: int | None
    step_a: Step | None
    step_b: Step | None
    changed_value: ChangedValue | None
    changed_fields: list[Difference]
    a_is_prefix: bool
    b_is_prefix: bool
    outcome_a: Outcome
    outcome_b: Outcome
    verdict: Verdict
    agents: bool = False  # compared across agents (what each step did), not by payload
    #: The diverging steps have the same type and payload: their hashes differ only through what else the hash
    #: covers, the time (two recordings of one run) — nothing the agent or the model did changed there.
    same_payload: bool = False

    @property
    def time_shift(self) -> tuple[Any, Any] | None:
        """(A's, B's) timestamp when the diverging steps differ only in their time, else None."""
        a, b = self.step_a, self.step_b
        if not self.same_payload or a is None or b is None or a.timestamp == b.timestamp:
            return None
        return a.timestamp, b.timestamp

    def same_payload_note(self) -> str | None:
        """What differs at a first divergence whose steps carry the same type and payload, in one sentence (the
        UI's diff says the same), or None."""
        if not self.same_payload:
            return None
        shift = self.time_shift
        if shift is None:
            return "same type, payload and time, different hash: only the stored hash differs"
        a, b = shift
        return (f"same type and payload, different hash: only the time differs ({_when(a)} → {_when(b)}); "
                "nothing in this step changed. The hash covers the time, so two separate recordings differ by "
                "hash at every step: compare them with --semantic")

    @property
    def mode(self) -> str:
        return "agents" if self.agents else "semantic" if self.semantic else "hash"

    def to_dict(self) -> dict[str, Any]:
        def side(step: Step | None) -> dict[str, Any] | None:
            if step is None:
                return None
            return {"index": step.index, "type": step.type, "label": step_label(step), "hash": step.hash,
                    "timestamp": step.timestamp, "summary": summarize_step(step)}

        return {
            "a": self.a_id, "b": self.b_id, "mode": self.mode,
            "sharedPrefix": self.shared_prefix, "firstDivergence": self.first_divergence,
            "stepA": side(self.step_a), "stepB": side(self.step_b),
            "changedValue": None if self.changed_value is None else msgspec.structs.asdict(self.changed_value),
            "changedFields": [msgspec.structs.asdict(f) for f in self.changed_fields],
            "samePayload": self.same_payload,
            "aIsPrefix": self.a_is_prefix, "bIsPrefix": self.b_is_prefix,
            "outcomeA": msgspec.structs.asdict(self.outcome_a), "outcomeB": msgspec.structs.asdict(self.outcome_b),
            "verdict": {"kind": self.verdict.kind, "text": self.verdict.text},
            "rows": list(self.rows),
        }


def _when(ms: Any) -> str:
    """A step's timestamp as a UTC time to the millisecond (the number itself when it is no time)."""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
    except (TypeError, ValueError, OverflowError, OSError):
        return f"{ms} ms"


def _same(a: Step, b: Step, semantic: bool, agents: bool = False) -> bool:
    if agents:
        return same_step(a.type, a.payload, b.type, b.payload)
    if semantic:
        return a.type == b.type and json_equal(a.payload, b.payload)
    return a.hash == b.hash


_ABSENT: Any = object()


def _leaf_changes(old: Any, new: Any, path: str, out: list[Difference], limit: int | None) -> None:
    if limit is not None and len(out) >= limit:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in utf16_sorted(old.keys() | new.keys()):
            _leaf_changes(old.get(key, _ABSENT), new.get(key, _ABSENT), join_path(path, key), out, limit)
        return
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            _leaf_changes(old[i] if i < len(old) else _ABSENT, new[i] if i < len(new) else _ABSENT,
                          join_path(path, i), out, limit)
        return
    if old is _ABSENT or new is _ABSENT or not json_equal(old, new):
        out.append(Difference(path or "(root)", None if old is _ABSENT else old, None if new is _ABSENT else new,
                               old is not _ABSENT, new is not _ABSENT))


def step_changes(a: Step | None, b: Step | None, limit: int | None = None) -> list[Difference]:
    """Every changed field between two steps' payloads, path by path (type first when it differs)."""
    out: list[Difference] = []
    if a is not None and b is not None and a.type != b.type:
        out.append(Difference("type", a.type, b.type))
    _leaf_changes(_ABSENT if a is None else a.payload, _ABSENT if b is None else b.payload, "", out, limit)
    return out if limit is None else out[:limit]


def _changed_value(a: Step | None, b: Step | None) -> ChangedValue | None:
    """The first of `VALUE_KEYS` both payloads carry, when its value differs (an equal one changed nothing)."""
    if a is None or b is None or not isinstance(a.payload, dict) or not isinstance(b.payload, dict):
        return None
    for key in VALUE_KEYS:
        if key in a.payload and key in b.payload:
            old, new = a.payload[key], b.payload[key]
            return None if json_equal(old, new) else ChangedValue(key, old, new)
    return None


def verdict_of(x: Outcome, y: Outcome) -> Verdict:
    """The outcome verdict (docs/format.md, "Diff") of a parent `x` and a child `y`."""
    if x.status != y.status:
        return Verdict("status_flipped", f"status flipped (parent {x.status} → child {y.status})")
    if x.status == "success" and x.final_answer != y.final_answer:
        return Verdict("answer_changed", "same status, but the final answer changed")
    if x.status == "error" and x.failure_reason != y.failure_reason:
        return Verdict("reason_changed",
                       f"same status, but the failure reason changed ({x.failure_reason} → {y.failure_reason})")
    if x.tools != y.tools:
        a_path, b_path = " → ".join(x.tools) or "(no tools)", " → ".join(y.tools) or "(no tools)"
        return Verdict("path_changed", f"same outcome, but the tool-call path changed: {a_path} vs {b_path}")
    return Verdict("no_change", "no behavioural change")


def compare_rows(len_a: int, len_b: int, same: Callable[[int], bool]) -> tuple[list[Row], int | None]:
    """One row per step index up to the longer run, and the first that is not `same`.

    `same(i)` decides a pair present on both sides: equal hashes, or equal types and payloads."""
    rows: list[Row] = []
    first: int | None = None
    for i in range(max(len_a, len_b)):
        if i >= len_a:
            rows.append("only_b")
        elif i >= len_b:
            rows.append("only_a")
        else:
            rows.append("same" if same(i) else "changed")
        if first is None and rows[-1] != "same":
            first = i
    return rows, first


@with_headroom
def diff(a: Cassette, b: Cassette, *, semantic: bool = False, agents: bool = False) -> DiffReport:
    """Walk both step lists by index and report the first divergence and the outcome verdict."""
    sa, sb = a.steps, b.steps
    rows, first = compare_rows(len(sa), len(sb), lambda i: _same(sa[i], sb[i], semantic, agents))
    step_a = sa[first] if first is not None and first < len(sa) else None
    step_b = sb[first] if first is not None and first < len(sb) else None
    report = _report(a.id, b.id, semantic, rows, first, (len(sa), len(sb)), (step_a, step_b),
                     (outcome(a), outcome(b)))
    if agents:
        _across_agents(report, [s.payload for s in sa if s.type == "tool_call"],
                       [s.payload for s in sb if s.type == "tool_call"])
    return report


def _across_agents(report: DiffReport, calls_a: list[Any], calls_b: list[Any]) -> None:
    """Across agents the tool path is compared by action: other tool names for the same commands, reads and
    edits are no change of path."""
    report.agents = True
    if report.verdict.kind == "path_changed" and same_actions(calls_a, calls_b):
        report.verdict = Verdict("no_change", "no behavioural change: the same actions, through each agent's tools")


def _report(a_id: str, b_id: str, semantic: bool, rows: list[Row], first: int | None, lengths: tuple[int, int],
            steps: tuple[Step | None, Step | None], outcomes: tuple[Outcome, Outcome]) -> DiffReport:
    (len_a, len_b), (step_a, step_b), (oa, ob) = lengths, steps, outcomes
    shared = first if first is not None else len(rows)
    fields = step_changes(step_a, step_b, FIELD_LIMIT) if first is not None and step_a and step_b else []
    same_payload = step_a is not None and step_b is not None and step_a.type == step_b.type and \
        json_equal(step_a.payload, step_b.payload)
    return DiffReport(
        a_id=a_id, b_id=b_id, semantic=semantic, rows=rows, shared_prefix=shared, first_divergence=first,
        step_a=step_a, step_b=step_b, changed_value=_changed_value(step_a, step_b), changed_fields=fields,
        a_is_prefix=first is not None and shared == len_a and len_b > len_a,
        b_is_prefix=first is not None and shared == len_b and len_a > len_b,
        outcome_a=oa, outcome_b=ob, verdict=verdict_of(oa, ob), same_payload=same_payload,
    )


def lazy_outcome(cassette: LazyCassette) -> Outcome:
    """`outcome` of a lazily loaded cassette, decoding only the tool names and the last step's payload."""
    tools = tuple(_tool_name(s) for s in cassette.steps if s.type == "tool_call")
    last = cassette.steps[-1] if cassette.steps else None
    return terminal_outcome_of(last.view() if last is not None and last.type == "metadata" else None, tools)


def _tool_name(step: LazyStep) -> str:
    name = tool_name_json(step.payload)  # the input stays undecoded
    return name if name is not None else tool_name(step.view())


def _lazy_same(a: LazyStep, b: LazyStep, semantic: bool, agents: bool = False) -> bool:
    if agents:
        return same_step(a.type, decode_payload(a.payload), b.type, decode_payload(b.payload))
    if not semantic:
        return a.hash == b.hash
    if a.type != b.type:
        return False
    if bytes(a.payload) == bytes(b.payload):  # the same text is the same value
        return True
    return json_equal(decode_payload(a.payload), decode_payload(b.payload))


@with_headroom
def diff_lazy(a: LazyCassette, b: LazyCassette, *, semantic: bool = False, agents: bool = False) -> DiffReport:
    """`diff` of two lazily loaded cassettes (`lazy.load_lazy`): by hash, no payload is decoded except
    the two diverging steps, the tool names and the last steps; semantic decodes one pair at a time, only
    where the payloads' texts differ.  The report equals `diff` of the decoded cassettes."""
    sa, sb = a.steps, b.steps
    rows, first = compare_rows(len(sa), len(sb), lambda i: _lazy_same(sa[i], sb[i], semantic, agents))
    step_a = sa[first].decoded() if first is not None and first < len(sa) else None
    step_b = sb[first].decoded() if first is not None and first < len(sb) else None
    report = _report(a.id, b.id, semantic, rows, first, (len(sa), len(sb)), (step_a, step_b),
                     (lazy_outcome(a), lazy_outcome(b)))
    if agents:
        _across_agents(report, [decode_payload(s.payload) for s in sa if s.type == "tool_call"],
                       [decode_payload(s.payload) for s in sb if s.type == "tool_call"])
    return report


_PLAIN = msgspec.json.Decoder()  # plain floats: the canonical writer prints them as JavaScript does


def _hashable(step: LazyStep) -> Step:
    """The step with its payload decoded for hashing only (plain floats, no per-number Python call)."""
    try:
        if step.payload is TOO_DEEP_RAW:
            raise msgspec.DecodeError
        with reading_room():
            payload = _PLAIN.decode(step.payload)
    except msgspec.DecodeError:  # lone surrogates, which only the standard library decodes; too deep to read
        payload = decode_payload(step.payload)
    return Step(step.id, step.index, step.type, step.timestamp, payload, step.prevHash, step.hash)


def _twins(x: LazyStep, y: LazyStep) -> bool:
    """Both steps hash the same bytes: their hashed fields are equal and their payloads the same text."""
    return (x.hash == y.hash and x.type == y.type and x.timestamp == y.timestamp and x.prevHash == y.prevHash
            and type(x.timestamp) is type(y.timestamp) and x.payload == y.payload)


def lazy_chain_breaks(a: LazyCassette, b: LazyCassette) -> tuple[ChainBreak | None, ChainBreak | None]:
    """The first broken link of each cassette's hash chain (as `chain_break` finds it), checked together.

    A fork and its parent share a prefix step for step: where both steps have the same hashed fields and
    the same payload text, one recomputed hash answers for both, so two such files cost about one chain
    check.  Payloads are decoded one at a time and dropped."""
    sides = (a.steps, b.steps)
    breaks: list[ChainBreak | None] = [None, None]
    previous: list[str | None] = [None, None]
    with paused_gc():
        for i in range(max(len(a.steps), len(b.steps))):
            present = [n for n in (0, 1) if breaks[n] is None and i < len(sides[n])]
            if not present:
                break
            for n in present:
                step = sides[n][i]
                breaks[n] = link_break(i, step.index, step.prevHash, previous[n])
            present = [n for n in present if breaks[n] is None]
            if len(present) == 2 and _twins(a.steps[i], b.steps[i]):
                broken, _ = hash_break(i, _hashable(a.steps[i]))
                breaks[0] = breaks[1] = broken
            else:
                for n in present:
                    breaks[n], _ = hash_break(i, _hashable(sides[n][i]))
            for n in present:
                previous[n] = sides[n][i].hash
    return breaks[0], breaks[1]
