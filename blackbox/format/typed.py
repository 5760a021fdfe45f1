"""Typed views of step payloads, for readers: the shapes `payloads` declares, as the tagged msgspec Structs
`payload_views` holds (generated from that one declaration, so what writers write and readers read agree).

A cassette's hash is computed over the payload exactly as it was read (`Step.payload`), so a view never
replaces it: `view(step)` converts a copy into the Struct its step type and tag name, or into `Odd` when
the payload does not fit (a hand-edited file, a future field's type, a damaged import).  A payload that does
not fit still loads, hashes and verifies as before; only the readers see `Odd` and say "unknown" or "?".
Fields `payloads` does not declare (an MCP call's `mcp`, a future version's) are ignored here and stay in the
raw payload; an MCP step's `mcp` is read apart, by `mcp_of`, only when asked, so an odd one never makes its
step odd.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from blackbox.format.canonical import JSFloat
from blackbox.format.payload_views import (
    FinalAnswerView,
    MessageView,
    MetadataView,
    ModelInputView,
    ModelOutputView,
    PartView,
    RunCompletedView,
    RunFailedView,
    SingleToolCallView,
    TextPartView,
    ToolCallsView,
    ToolCallView,
    ToolResultPartView,
    ToolResultView,
    ToolSpecView,
    ToolUsePartView,
)

__all__ = [
    "UNSET",
    "FinalAnswerView",
    "McpAudioBlock",
    "McpBlock",
    "McpExtraView",
    "McpImageBlock",
    "McpLinkBlock",
    "McpResource",
    "McpResourceBlock",
    "McpResultView",
    "McpTextBlock",
    "MessageView",
    "MetadataView",
    "ModelInputView",
    "ModelOutputView",
    "Odd",
    "PartView",
    "RequestHead",
    "RunCompletedView",
    "RunFailedView",
    "SingleToolCallView",
    "TextPartView",
    "ToolCallView",
    "ToolCallsView",
    "ToolHead",
    "ToolResultPartView",
    "ToolResultView",
    "ToolSpecView",
    "ToolUsePartView",
    "View",
    "calls_in",
    "mcp_block",
    "mcp_of",
    "mcp_result",
    "request_head",
    "tool_head_json",
    "tool_name_json",
    "view",
    "view_of",
    "view_of_json",
]


class RequestHead(msgspec.Struct, frozen=True, gc=False):
    """A `model_input`'s top level only, its messages left as JSON: for a reader that counts them (a
    summary of every step), which need not build a Struct per message of every request's history."""

    messages: list[Any]


class Odd(msgspec.Struct, frozen=True, gc=False):
    """A payload that does not fit its step type's shape; `tag` is its `type`/`event` when it names one
    (so a reader can still say "a tool_calls output"), `why` msgspec's reason (a path, never a value)."""

    tag: str | None
    why: str


View: TypeAlias = (ModelInputView | FinalAnswerView | ToolCallsView | SingleToolCallView | ToolCallView
                   | ToolResultView | RunCompletedView | RunFailedView | Odd)

_SHAPES: dict[str, Any] = {
    "model_input": ModelInputView,
    "model_output": ModelOutputView,
    "tool_call": ToolCallView,
    "tool_result": ToolResultView,
    "metadata": MetadataView,
}
_TAGS = {"model_output": "type", "metadata": "event"}
# The member of a tagged union each tag names: converting into the member is ~10× faster than into the union
# (msgspec builds a union's type information on every call; a Struct's is kept on its class).
_MEMBERS: dict[str, dict[Any, type]] = {
    "model_output": {"final_answer": FinalAnswerView, "tool_calls": ToolCallsView, "tool_call": SingleToolCallView},
    "metadata": {"run_completed": RunCompletedView, "run_failed": RunFailedView},
}


def view_of(step_type: str, payload: Any) -> View:
    """The typed view of one payload of a step of `step_type`; `Odd` when it does not fit."""
    shape = _SHAPES.get(step_type)
    if shape is None:
        return Odd(None, f"unknown step type {step_type!r}")
    key = _TAGS.get(step_type)
    tag = payload.get(key) if key is not None and isinstance(payload, dict) else None
    member = _MEMBERS[step_type].get(tag) if isinstance(tag, str) else None
    if member is not None:  # the member the union would pick by this tag; what does not fit it, the union judges
        try:
            found: View = msgspec.convert(payload, member, from_attributes=False)
            return found
        except (msgspec.ValidationError, UnicodeEncodeError):
            pass
    try:
        found = msgspec.convert(payload, shape, from_attributes=False)
    except (msgspec.ValidationError, UnicodeEncodeError) as exc:  # msgspec cannot hold a lone surrogate
        why = _where(exc) if isinstance(exc, msgspec.ValidationError) else "holds a lone surrogate"
        return Odd(tag if isinstance(tag, str) else None, why)
    return found


def request_head(payload: Any) -> RequestHead | None:
    """`RequestHead` of a `model_input` payload, None when it has no list of messages."""
    try:
        return msgspec.convert(payload, RequestHead)
    except (msgspec.ValidationError, UnicodeEncodeError):
        return None


_DECODERS = {kind: msgspec.json.Decoder(shape, float_hook=JSFloat) for kind, shape in _SHAPES.items()}


def view_of_json(step_type: str, raw: bytes | memoryview | msgspec.Raw) -> View | None:
    """The view of a payload still undecoded (a lazy step's), decoded straight into its Struct; None when
    msgspec cannot read the text itself (lone surrogates: decode it as `load` does, then `view_of`)."""
    decoder = _DECODERS.get(step_type)
    if decoder is None:
        return Odd(None, f"unknown step type {step_type!r}")
    try:
        found: View = decoder.decode(raw)
    except msgspec.ValidationError:
        return None  # the eager path finds the tag and the reason, so both paths give the same Odd
    except msgspec.DecodeError:
        return None
    return found


class _Named(msgspec.Struct):
    """What makes a `tool_call` payload fit `ToolCallView`, less its input, which is skipped undecoded."""

    toolName: str
    toolCallId: str = ""


_NAMED = msgspec.json.Decoder(_Named)


def tool_name_json(raw: bytes | memoryview | msgspec.Raw) -> str | None:
    """The tool an undecoded `tool_call` payload names (`?` when it does not fit, as `view_of` says), without
    decoding its input; None when msgspec cannot read the text (decode it and use `view_of`)."""
    try:
        return _NAMED.decode(raw).toolName
    except msgspec.ValidationError:
        return "?"
    except msgspec.DecodeError:
        return None


class ToolHead(msgspec.Struct, frozen=True, gc=False):
    """What the UI's facts need of a tool step (its tool, whether it is an error result), its input, result and
    error skipped undecoded; it fits exactly when `ToolCallView` / `ToolResultView` does."""

    toolName: str
    toolCallId: str = ""
    error: msgspec.Raw = msgspec.Raw(b"")

    @property
    def failed(self) -> bool:
        return len(self.error) > 0


_HEAD = msgspec.json.Decoder(ToolHead)


def tool_head_json(raw: bytes | memoryview | msgspec.Raw) -> ToolHead | Odd | None:
    """The `ToolHead` of an undecoded tool step's payload, `Odd` when it does not fit (as `view_of` says); None
    when msgspec cannot read the text (decode it and use `view_of`)."""
    try:
        return _HEAD.decode(raw)
    except msgspec.ValidationError as exc:
        return Odd(None, _where(exc))
    except msgspec.DecodeError:
        return None


# -- MCP tool steps (docs/format.md, "MCP tools") -------------------------------------------------------------


class McpExtraView(msgspec.Struct, frozen=True, gc=False):
    """An MCP step's `mcp` field: the server and method of a call; a failed call's result, the JSON-RPC error
    and the progress the server reported, on its result."""

    server: str | UnsetType = UNSET
    method: str | UnsetType = UNSET
    result: Any = UNSET
    error: Any = UNSET
    progress: list[Any] = []


class McpResultView(msgspec.Struct, frozen=True, gc=False):
    """A `tools/call` result: its content blocks (each read by `mcp_block`, so one odd block is shown as JSON
    among the others) and its structured content."""

    content: list[Any]
    structuredContent: Any = UNSET


class McpTextBlock(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="text"):
    text: str


class McpImageBlock(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="image"):
    data: str = ""
    mimeType: str = "?"


class McpAudioBlock(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="audio"):
    data: str = ""
    mimeType: str = "?"


class McpLinkBlock(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="resource_link"):
    uri: str = "?"
    name: str = ""


class McpResource(msgspec.Struct, frozen=True, gc=False):
    uri: str = "?"
    text: str | UnsetType = UNSET


class McpResourceBlock(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag="resource"):
    resource: McpResource


McpBlock: TypeAlias = McpTextBlock | McpImageBlock | McpAudioBlock | McpLinkBlock | McpResourceBlock


def _fit(value: Any, shape: Any) -> Any:
    """`value` as `shape`, or None when it does not fit."""
    try:
        return msgspec.convert(value, shape, from_attributes=False)
    except (msgspec.ValidationError, UnicodeEncodeError):
        return None


class _McpField(msgspec.Struct, frozen=True, gc=False):
    mcp: McpExtraView | UnsetType = UNSET


def mcp_of(payload: Any) -> McpExtraView | None:
    """The `mcp` field of a tool step's payload, None when it has none or an odd one."""
    found = _fit(payload, _McpField)
    return None if found is None or found.mcp is UNSET else found.mcp


def mcp_result(value: Any) -> McpResultView | None:
    """A value as a `tools/call` result, None when it is none."""
    return None if value is UNSET else _fit(value, McpResultView)


_BLOCKS: dict[Any, type] = {"text": McpTextBlock, "image": McpImageBlock, "audio": McpAudioBlock,
                             "resource_link": McpLinkBlock, "resource": McpResourceBlock}


def mcp_block(value: Any) -> McpBlock | None:
    """One content block, None for a kind this version does not know or one that does not fit its kind (read
    into the member its `type` names: a union's conversion is the slower, as `_MEMBERS` says)."""
    kind = value.get("type") if isinstance(value, dict) else None
    member = _BLOCKS.get(kind) if isinstance(kind, str) else None
    return None if member is None else _fit(value, member)


def _where(exc: msgspec.ValidationError) -> str:
    """msgspec's reason without the value it quotes (`Invalid value 'x'`): the path is enough."""
    message = str(exc)
    path = message.rsplit(" - at `", 1)[1].rstrip("`") if " - at `" in message else "$"
    return f"does not fit its shape at {path}"


def view(step: Any) -> View:
    """The typed view of a step's payload (a `cassette.Step`, or anything with `type` and `payload`)."""
    return view_of(step.type, step.payload)


def calls_in(found: View) -> list[ToolCallView]:
    """The tool calls a view asks for: a model output's calls (either shape) or a tool_call step's one."""
    if isinstance(found, ToolCallsView):
        return found.calls
    if isinstance(found, SingleToolCallView):
        return [ToolCallView(toolName=found.toolName, toolCallId=found.toolCallId, toolInput=found.toolInput)]
    if isinstance(found, ToolCallView):
        return [found]
    return []
