"""The payload shapes as readers hold them, generated from `format/payloads` by `format/view_maker`: do not
edit.

`python -m blackbox.format.view_maker > blackbox/format/payload_views.py` writes it again (tests/test_typed.py
holds it current).  Read payloads through `format/typed`, which picks the view of a step type and says why a
payload does not fit.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "FinalAnswerView",
    "MessageView",
    "MetadataView",
    "ModelInputView",
    "ModelOutputView",
    "PartView",
    "RunCompletedView",
    "RunFailedView",
    "SingleToolCallView",
    "TextPartView",
    "ToolCallView",
    "ToolCallsView",
    "ToolResultPartView",
    "ToolResultView",
    "ToolSpecView",
    "ToolUsePartView",
]


class ToolCallView(msgspec.Struct, frozen=True, gc=False):
    """A `tool_call` step, and one call of a model output: Blackbox's `call-N` id, the tool, its input (a
    hand-written call without an id matches by name and input only)."""
    toolName: str
    toolCallId: str = ""
    toolInput: Any = None


class ToolResultView(msgspec.Struct, frozen=True, gc=False):
    """A `tool_result` step: the tool's JSON result, or its error text."""
    toolName: str
    toolCallId: str = ""
    result: Any = UNSET
    error: Any = UNSET

    @property
    def failed(self) -> bool:
        """Whether the tool raised: the step holds its error (a recorded `null` result is None, not UNSET)."""
        return self.error is not UNSET


class TextPartView(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="text"):
    text: str


class ToolUsePartView(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="tool_use"):
    toolCallId: str
    toolName: str
    toolInput: Any = None


class ToolResultPartView(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="tool_result"):
    toolCallId: str
    toolName: str
    result: Any = UNSET
    error: Any = UNSET


class MessageView(msgspec.Struct, frozen=True, gc=False):
    role: str
    content: str | list[TextPartView | ToolUsePartView | ToolResultPartView]


class ToolSpecView(msgspec.Struct, frozen=True, gc=False):
    name: str
    description: str = ""
    inputSchema: Any = UNSET


class ModelInputView(msgspec.Struct, frozen=True, gc=False):
    """A `model_input` step: the request as it matters to the model, provider ids mapped to `call-N`."""
    messages: list[MessageView]
    tools: list[ToolSpecView] = []
    systemPrompt: str | UnsetType = UNSET
    model: Any = UNSET
    params: dict[str, Any] | UnsetType = UNSET


class FinalAnswerView(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="final_answer"):
    text: str
    stop: str | UnsetType = UNSET
    thoughts: list[dict[str, Any]] | UnsetType = UNSET
    signatures: dict[str, str] | UnsetType = UNSET
    hollowFrame: str | UnsetType = UNSET


class ToolCallsView(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="tool_calls"):
    calls: list[ToolCallView]
    text: str | UnsetType = UNSET
    stop: str | UnsetType = UNSET
    thoughts: list[dict[str, Any]] | UnsetType = UNSET
    signatures: dict[str, str] | UnsetType = UNSET
    hollowFrame: str | UnsetType = UNSET


class SingleToolCallView(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="tool_call"):
    """The one-call output shape older cassettes hold; read, never written by a recording (a fork's script
    may still give one)."""
    toolCallId: str
    toolName: str
    toolInput: Any = None


class RunCompletedView(msgspec.Struct, frozen=True, gc=False, tag_field="event", tag="run_completed"):
    status: str = ""
    result: Any = None


class RunFailedView(msgspec.Struct, frozen=True, gc=False, tag_field="event", tag="run_failed"):
    """A run that failed: `reason` says how (docs/format.md, "metadata"); the demo loop's reasons carry
    `errorKind` (model_error), `maxSteps` (max_steps_exceeded) or the tool asked for (unknown_tool)."""
    status: str = "error"
    reason: Any = None
    message: str | UnsetType = UNSET
    exitCode: int | UnsetType = UNSET
    inFlight: int | UnsetType = UNSET
    errorKind: str | UnsetType = UNSET
    maxSteps: int | UnsetType = UNSET
    toolName: str | UnsetType = UNSET
    toolCallId: str | UnsetType = UNSET


PartView: TypeAlias = TextPartView | ToolUsePartView | ToolResultPartView

ModelOutputView: TypeAlias = FinalAnswerView | ToolCallsView | SingleToolCallView

MetadataView: TypeAlias = RunCompletedView | RunFailedView
