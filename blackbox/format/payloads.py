"""The five neutral payload shapes a cassette's steps hold, as the live wing builds them.

`model_input` (a normalized request), `model_output` (a final answer or the model's tool calls), `tool_call`,
`tool_result` and `metadata` (the terminal step).  These are the shapes Blackbox writes; code that reads a
cassette from disk still checks what it finds (a hand-edited file may hold anything).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

__all__ = [
    "FinalAnswer",
    "Message",
    "Metadata",
    "ModelInput",
    "ModelOutput",
    "Part",
    "RunCompleted",
    "RunFailed",
    "SingleToolCall",
    "TextPart",
    "ToolCall",
    "ToolCalls",
    "ToolResult",
    "ToolResultPart",
    "ToolSpec",
    "ToolUsePart",
]


class ToolCall(TypedDict):
    """A `tool_call` step, and one call of a model output: Blackbox's `call-N` id, the tool, its input."""

    toolCallId: str
    toolName: str
    toolInput: Any


class ToolResult(TypedDict):
    """A `tool_result` step: the tool's JSON result, or its error text."""

    toolCallId: str
    toolName: str
    result: NotRequired[Any]
    error: NotRequired[str]


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ToolUsePart(TypedDict):
    type: Literal["tool_use"]
    toolCallId: str
    toolName: str
    toolInput: Any


class ToolResultPart(TypedDict):
    type: Literal["tool_result"]
    toolCallId: str
    toolName: str
    result: NotRequired[Any]
    error: NotRequired[str]


Part: TypeAlias = TextPart | ToolUsePart | ToolResultPart


class Message(TypedDict):
    role: Literal["user", "assistant"]
    content: str | list[Part]


class ToolSpec(TypedDict):
    name: str
    description: str
    inputSchema: NotRequired[Any]


class ModelInput(TypedDict):
    """A `model_input` step: the request as it matters to the model, provider ids mapped to `call-N`."""

    messages: list[Message]
    tools: list[ToolSpec]
    systemPrompt: NotRequired[str]
    model: NotRequired[Any]
    params: NotRequired[dict[str, Any]]


class FinalAnswer(TypedDict):
    type: Literal["final_answer"]
    text: str
    stop: NotRequired[Literal["length", "refusal"]]
    thoughts: NotRequired[list[dict[str, Any]]]  # Gemini: thought parts, kept for a later turn's history
    signatures: NotRequired[dict[str, str]]  # Gemini: thoughtSignature by where it was ("text" or a call-N)
    hollowFrame: NotRequired[str]  # Gemini, streamed: what a frame without content lacked (a replay sends one too)


class ToolCalls(TypedDict):
    type: Literal["tool_calls"]
    calls: list[ToolCall]
    text: NotRequired[str]
    stop: NotRequired[Literal["length", "end"]]  # "end": a chat turn that ended (`stop`) with tool calls
    thoughts: NotRequired[list[dict[str, Any]]]
    signatures: NotRequired[dict[str, str]]
    hollowFrame: NotRequired[str]


class SingleToolCall(TypedDict):
    """The one-call output shape older cassettes hold; read, never written."""

    type: Literal["tool_call"]
    toolCallId: str
    toolName: str
    toolInput: Any


#: A `model_output` step.
ModelOutput: TypeAlias = FinalAnswer | ToolCalls | SingleToolCall


class RunCompleted(TypedDict):
    event: Literal["run_completed"]
    status: Literal["success"]
    result: Any


class RunFailed(TypedDict):
    event: Literal["run_failed"]
    status: Literal["error"]
    reason: Literal["agent_error", "process_exit", "calls_in_flight"]
    message: NotRequired[str]
    exitCode: NotRequired[int]
    inFlight: NotRequired[int]


#: The terminal `metadata` step.
Metadata: TypeAlias = RunCompleted | RunFailed
