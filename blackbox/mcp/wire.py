"""MCP requests and answers as tool steps, and back: pure functions over JSON-RPC values (no `mcp` import).

A `tools/call` is the step of the tool it names (`toolName` = the MCP tool name, `toolInput` = its
arguments); every other request is the step `mcp:<server>:<method>` whose input is its params less `_meta`.
The `tool_call` step carries `"mcp": {"server", "method"}`.  The `tool_result` holds what the client received:

- a result: `{"result": <the JSON-RPC result>}`;
- a `tools/call` result with `isError`: `{"error": <its text>, "mcp": {"result": <the result>}}`;
- a JSON-RPC error, a read timeout, a closed connection: `{"error": <message>, "mcp": {"error": {code, message,
  data?}}}` (the timeout and the closed connection with the codes the client itself raises);
- `"mcp": {"progress": [...]}` when the server reported progress for the call.

docs/format.md states the same for people.
"""

from __future__ import annotations

from typing import Any

from blackbox.format.canonical import canonical_text

__all__ = [
    "CONNECTION_CLOSED",
    "REQUEST_TIMEOUT",
    "answer_of",
    "closed_error",
    "error_text",
    "step_input",
    "step_name",
    "timeout_error",
]

# The codes the MCP client raises itself (mcp_types): a read timeout and a connection that closed.
REQUEST_TIMEOUT = -32001
CONNECTION_CLOSED = -32000
INTERNAL_ERROR = -32603

Outcome = tuple[dict[str, Any], dict[str, Any]]  # (the outcome: result or error, the `mcp` extra of the result)


def step_name(server: str, method: str, params: dict[str, Any] | None) -> str:
    """The step's `toolName`: the tool a `tools/call` names (the model's name for it), else `mcp:<server>:<method>`."""
    if method == "tools/call" and isinstance(params, dict) and isinstance(params.get("name"), str):
        return str(params["name"])
    return f"mcp:{server}:{method}"


def step_input(method: str, params: dict[str, Any] | None) -> Any:
    """The step's `toolInput`: a call's arguments, else the params without `_meta` (ids, progress tokens, stamps)."""
    params = params if isinstance(params, dict) else {}
    if method == "tools/call":
        arguments = params.get("arguments")
        return {} if arguments is None else arguments
    return {key: value for key, value in params.items() if key != "_meta"}


def _block_text(block: Any) -> str:
    if isinstance(block, dict) and block.get("type") == "text":
        return str(block.get("text", ""))
    kind = block.get("type") if isinstance(block, dict) else None
    return f"[{kind or 'content'} block]"


def error_text(result: dict[str, Any]) -> str:
    """An `isError` result as the `error` string: its blocks' text."""
    content = result.get("content")
    text = "\n".join(_block_text(b) for b in content) if isinstance(content, list) else ""
    return text or "the tool reported an error (isError) with no text"


def result_outcome(method: str, result: dict[str, Any]) -> Outcome:
    """A JSON-RPC result as the step's outcome and `mcp` extra."""
    if method == "tools/call" and result.get("isError") is True:
        return {"error": error_text(result)}, {"result": result}
    return {"result": result}, {}


def error_outcome(error: dict[str, Any]) -> Outcome:
    """A JSON-RPC error object (`code`, `message`, `data`?) as the step's outcome and `mcp` extra."""
    kept = {key: error[key] for key in ("code", "message", "data") if key in error and error[key] is not None}
    return {"error": str(error.get("message") or f"MCP error {error.get('code')}")}, {"error": kept}


def timeout_error(method: str) -> dict[str, Any]:
    """The error the client raises when its read timeout elapses (the same code and message)."""
    return {"code": REQUEST_TIMEOUT, "message": f"Request {method!r} timed out"}


def closed_error() -> dict[str, Any]:
    """The error the client raises when the connection closes under a request."""
    return {"code": CONNECTION_CLOSED, "message": "Connection closed"}


def call_result(value: Any, template: Any = None) -> dict[str, Any]:
    """A value set at a fork point as a `tools/call` result: an object with a `content` list is one already; a
    string becomes one text block; any other value one text block of its JSON, and an object is also the
    structured content (which a tool with an output schema must return).  The other fields of the recorded
    result (`template`: `resultType`, `_meta`, which a newer protocol requires) are kept."""
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return value
    text = value if isinstance(value, str) else canonical_text(value)
    kept = ({k: v for k, v in template.items() if k not in ("content", "structuredContent", "isError")}
            if isinstance(template, dict) else {})
    result: dict[str, Any] = {**kept, "content": [{"type": "text", "text": text}], "isError": False}
    if isinstance(value, dict):
        result["structuredContent"] = value
    return result


def answer_of(method: str, outcome: dict[str, Any] | None, template: Any = None) -> tuple[str, dict[str, Any]]:
    """What the client gets for a recorded outcome: ("result", result) or ("error", error object); `template` is
    the recorded result a value set at a fork point replaces."""
    outcome = outcome or {}
    found = outcome.get("mcp")
    extra: dict[str, Any] = found if isinstance(found, dict) else {}
    if "error" in outcome:
        if isinstance(extra.get("result"), dict):
            return "result", extra["result"]
        if isinstance(extra.get("error"), dict):
            return "error", extra["error"]
        message = str(outcome["error"])  # a plain error (set at a fork point): the tool failed
        if method == "tools/call":
            return "result", {**call_result(message, template), "isError": True}
        return "error", {"code": INTERNAL_ERROR, "message": message}
    value = outcome.get("result")
    if method == "tools/call":
        return "result", call_result(value, template)
    if isinstance(value, dict):
        return "result", value
    return "error", {"code": INTERNAL_ERROR, "message": f"[blackbox] the recorded answer to {method} is not an "
                                                        "object; set an object at this fork point"}


def progress_of(outcome: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The progress notifications recorded for a call, oldest first."""
    extra = (outcome or {}).get("mcp")
    progress = extra.get("progress") if isinstance(extra, dict) else None
    return [p for p in progress if isinstance(p, dict)] if isinstance(progress, list) else []
