"""The steps of a cassette as the UI holds them: records whose payloads are decoded when a step is asked for
(the last few kept), and the facts the UI needs of the tool steps, gathered in one pass."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import overload

import msgspec

from blackbox.errors import CassetteError
from blackbox.format.cassette import Step
from blackbox.format.indexing import Batch, FileStep
from blackbox.format.lazy import LazyStep, decode_payload
from blackbox.format.typed import ToolCallView, ToolHead, ToolResultView, tool_head_json, view_of

__all__ = ["StepRecord", "Steps", "ToolFacts", "batch_facts", "decode_record", "is_error_result", "tool_facts_of",
           "tool_name"]


def tool_name(step: Step) -> str | None:
    """The tool a step is about (tool_call / tool_result), or None (another step, or one whose payload does
    not fit its shape)."""
    found = step.view()
    return found.toolName if isinstance(found, ToolCallView | ToolResultView) else None


def is_error_result(step: Step) -> bool:
    found = step.view()
    return isinstance(found, ToolResultView) and found.failed


class ToolFacts(msgspec.Struct):
    """What the UI needs of the tool steps' payloads: per step the tool name and whether it is an error
    result, and the tool calls' names in order (the outcome's tool sequence, `?` for a call that names none)."""

    names: list[str | None]
    errors: list[bool]
    calls: list[str]

    def extend(self, more: ToolFacts) -> None:
        self.names += more.names
        self.errors += more.errors
        self.calls += more.calls


def _head(kind: str, raw: msgspec.Raw) -> tuple[str | None, bool]:
    """(tool name, error result) of a tool step's undecoded payload, read into `ToolHead` (its input and result
    skipped); (None, False) for one that does not fit."""
    head = tool_head_json(raw)
    if head is None:  # text msgspec cannot read as it is (lone surrogates): decoded as `load` does
        found = view_of(kind, decode_payload(raw))
        if isinstance(found, ToolCallView | ToolResultView):
            return found.toolName, isinstance(found, ToolResultView) and found.failed
        return None, False
    if isinstance(head, ToolHead):
        return head.toolName, kind == "tool_result" and head.failed
    return None, False


def tool_facts_of(records: Sequence[LazyStep | FileStep], payload: Callable[[int], msgspec.Raw]) -> ToolFacts:
    """One pass over the tool steps, reading each payload's head (`payload(i)`: its JSON) and dropping it."""
    facts = ToolFacts([None] * len(records), [False] * len(records), [])
    for i, record in enumerate(records):
        if record.type in ("tool_call", "tool_result"):
            try:
                name, failed = _head(record.type, payload(i))
            except CassetteError:  # the file changed on disk since it was indexed: unreadable, as `decode_record`
                name, failed = None, False
            facts.names[i], facts.errors[i] = name, failed
            if record.type == "tool_call":
                facts.calls.append("?" if name is None else name)
    return facts


StepRecord = LazyStep | FileStep


class Steps(Sequence[Step]):
    """The steps of a lazily loaded cassette: each payload decoded when a step is asked for, the last few
    kept (the rows on screen and the detail pane ask again and again)."""

    def __init__(self, lazy: list[StepRecord], keep: int = 256) -> None:
        self.lazy = lazy
        self._keep = keep
        self._recent: OrderedDict[int, Step] = OrderedDict()

    def __len__(self) -> int:
        return len(self.lazy)

    def forget_from(self, index: int) -> None:
        """Drop the decoded steps from `index` on (those steps were replaced)."""
        for stale in [i for i in self._recent if i >= index]:
            del self._recent[stale]

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        index = range(len(self))[index]  # negative indices; IndexError past the end
        step = self._recent.get(index)
        if step is None:
            step = self._recent[index] = decode_record(self.lazy[index])
            if len(self._recent) > self._keep:
                self._recent.popitem(last=False)
        else:
            self._recent.move_to_end(index)
        return step

    def type(self, index: int) -> str:
        return self.lazy[index].type


def decode_record(record: StepRecord) -> Step:
    """A step with its payload decoded; a file changed on disk since it was indexed gives a step whose
    payload says so, rather than an error in the middle of drawing the screen."""
    try:
        return record.decoded()
    except CassetteError as exc:
        return Step(record.id, record.index, record.type, record.timestamp, f"(unreadable: {exc})",
                    record.prevHash, record.hash)


def batch_facts(batch: Batch) -> ToolFacts:
    """The tool facts of a batch's steps, from the payload bytes the indexer has just read."""
    return tool_facts_of(batch.steps, batch.payloads.__getitem__)
