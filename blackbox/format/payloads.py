"""The five neutral payload shapes a cassette's steps hold, declared once for writers and readers.

`model_input` (a normalized request), `model_output` (a final answer or the model's tool calls), `tool_call`,
`tool_result` and `metadata` (the terminal step).  The TypedDicts below are what Blackbox writes (the live wing,
the providers, the fork family, the importers and the demo build these dicts, key order included: it is the
file's).  Readers get the same shapes as msgspec Structs (`format/payload_views`, generated from this module by
`python -m blackbox.format.view_maker > blackbox/format/payload_views.py`, held current by a test) and read them
through `format/typed`.  A file from disk may hold anything, so a reader is more lenient than a writer where
`Read` says so: the default a field takes when a hand-written payload lacks it, or the wider type it accepts.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple, NotRequired, TypeAlias, TypedDict

__all__ = [
    "SHAPES",
    "FinalAnswer",
    "Message",
    "Metadata",
    "ModelInput",
    "ModelOutput",
    "Part",
    "Read",
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

_ABSENT: Any = object()


class Read(NamedTuple):
    """How readers take a field: `default` when a payload lacks it (a required field otherwise), `as_type` the
    type they accept when wider than what writers write (a name, as the generated module spells it)."""

    default: Any = _ABSENT
    as_type: str | None = None


class ToolCall(TypedDict):
    """A `tool_call` step, and one call of a model output: Blackbox's `call-N` id, the tool, its input (a
    hand-written call without an id matches by name and input only)."""

    toolCallId: Annotated[str, Read(default="")]
    toolName: str
    toolInput: Annotated[Any, Read(default=None)]


class ToolResult(TypedDict):
    """A `tool_result` step: the tool's JSON result, or its error text."""

    toolCallId: Annotated[str, Read(default="")]
    toolName: str
    result: NotRequired[Any]
    error: NotRequired[Annotated[str, Read(as_type="Any")]]


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ToolUsePart(TypedDict):
    type: Literal["tool_use"]
    toolCallId: str
    toolName: str
    toolInput: Annotated[Any, Read(default=None)]


class ToolResultPart(TypedDict):
    type: Literal["tool_result"]
    toolCallId: str
    toolName: str
    result: NotRequired[Any]
    error: NotRequired[Annotated[str, Read(as_type="Any")]]


Part: TypeAlias = TextPart | ToolUsePart | ToolResultPart


class Message(TypedDict):
    role: Annotated[Literal["user", "assistant"], Read(as_type="str")]
    content: str | list[Part]


class ToolSpec(TypedDict):
    name: str
    description: Annotated[str, Read(default="")]
    inputSchema: NotRequired[Any]


class ModelInput(TypedDict):
    """A `model_input` step: the request as it matters to the model, provider ids mapped to `call-N`."""

    messages: list[Message]
    tools: Annotated[list[ToolSpec], Read(default=[])]
    systemPrompt: NotRequired[str]
    model: NotRequired[Any]
    params: NotRequired[dict[str, Any]]


class FinalAnswer(TypedDict):
    type: Literal["final_answer"]
    text: str
    stop: NotRequired[Annotated[Literal["length", "refusal"], Read(as_type="str")]]
    thoughts: NotRequired[list[dict[str, Any]]]  # Gemini: thought parts, kept for a later turn's history
    signatures: NotRequired[dict[str, str]]  # Gemini: thoughtSignature by where it was ("text" or a call-N)
    hollowFrame: NotRequired[str]  # Gemini, streamed: what a frame without content lacked (a replay sends one too)


class ToolCalls(TypedDict):
    type: Literal["tool_calls"]
    calls: list[ToolCall]
    text: NotRequired[str]
    stop: NotRequired[Annotated[Literal["length", "end"], Read(as_type="str")]]  # "end": a chat turn that ended
    thoughts: NotRequired[list[dict[str, Any]]]
    signatures: NotRequired[dict[str, str]]
    hollowFrame: NotRequired[str]


class SingleToolCall(TypedDict):
    """The one-call output shape older cassettes hold; read, never written by a recording (a fork's script
    may still give one)."""

    type: Literal["tool_call"]
    toolCallId: str
    toolName: str
    toolInput: Annotated[Any, Read(default=None)]


#: A `model_output` step.
ModelOutput: TypeAlias = FinalAnswer | ToolCalls | SingleToolCall


class RunCompleted(TypedDict):
    event: Literal["run_completed"]
    status: Annotated[Literal["success"], Read(default="", as_type="str")]
    result: Annotated[Any, Read(default=None)]


class RunFailed(TypedDict):
    """A run that failed: `reason` says how (docs/format.md, "metadata"); the demo loop's reasons carry
    `errorKind` (model_error), `maxSteps` (max_steps_exceeded) or the tool asked for (unknown_tool)."""

    event: Literal["run_failed"]
    status: Annotated[Literal["error"], Read(default="error", as_type="str")]
    reason: Annotated[Literal["agent_error", "process_exit", "calls_in_flight", "model_error", "max_steps_exceeded",
                              "unknown_tool"], Read(default=None, as_type="Any")]
    message: NotRequired[str]
    exitCode: NotRequired[int]
    inFlight: NotRequired[int]
    errorKind: NotRequired[str]
    maxSteps: NotRequired[int]
    toolName: NotRequired[str]  # unknown_tool: the tool the model asked for
    toolCallId: NotRequired[str]


#: The terminal `metadata` step.
Metadata: TypeAlias = RunCompleted | RunFailed

#: Each step type's shape, and the shapes it is built of, in the order the views are generated.
SHAPES: dict[str, Any] = {
    "tool_call": ToolCall, "tool_result": ToolResult, "text_part": TextPart, "tool_use_part": ToolUsePart,
    "tool_result_part": ToolResultPart, "message": Message, "tool_spec": ToolSpec, "model_input": ModelInput,
    "final_answer": FinalAnswer, "tool_calls": ToolCalls, "single_tool_call": SingleToolCall,
    "run_completed": RunCompleted, "run_failed": RunFailed,
}
