"""Import a chat-JSON transcript (`{tools?, messages}`, OpenAI-style tool calls) into a cassette (docs/format.md,
"Import").

The structure is strict: a user prompt, then rounds of one assistant tool call and its `tool` message, then a
final assistant text; timestamps are integer milliseconds that never decrease.  Each round is written in the
single-call `tool_call` output shape.  Every other field is ignored.  Errors name the position
(`messages[3].tool_calls[0].function.arguments`), never the value.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeGuard

from blackbox.format.cassette import Cassette, StepChain
from blackbox.importers.common import (
    DEFAULT_TRACE_ID,
    Importer,
    Reading,
    TranscriptError,
    default_trace_id,
    json_numbers,
    json_or_text,
)
from blackbox.importers.decoding import decode_document, decode_string

__all__ = ["ChatJson", "import_chat_json", "import_chat_json_value"]

_WHAT = "a chat-JSON transcript"


def _is_int(value: Any) -> TypeGuard[int]:
    """An integer, not a bool (JSON's true is no number); a TypeGuard so a checked value is typed `int`."""
    return isinstance(value, int) and not isinstance(value, bool)


def _tools(document: dict[str, Any]) -> list[dict[str, Any]]:
    tools = document.get("tools")
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise TranscriptError("`tools` must be an array")
    out = []
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict):
            raise TranscriptError(f"tools[{i}].function must be an object")
        name, description, parameters = function.get("name"), function.get("description"), function.get("parameters")
        if not isinstance(name, str) or not name:
            raise TranscriptError(f"tools[{i}].function.name must be a non-empty string")
        if description is not None and not isinstance(description, str):
            raise TranscriptError(f"tools[{i}].function.description must be a string")
        if parameters is not None and not isinstance(parameters, dict):
            raise TranscriptError(f"tools[{i}].function.parameters must be an object")
        entry: dict[str, Any] = {"name": name, "description": description or ""}
        if parameters is not None:
            entry["inputSchema"] = parameters
        out.append(entry)
    return out


def _messages(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages, each an object with a non-decreasing integer `timestamp`."""
    messages = document.get("messages")
    if not isinstance(messages, list) or not messages:
        raise TranscriptError("`messages` must be a non-empty array")
    previous: int | None = None
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TranscriptError(f"messages[{i}] must be an object")
        timestamp = message.get("timestamp")
        if not _is_int(timestamp):
            raise TranscriptError(f"messages[{i}].timestamp must be an integer (milliseconds since the epoch)")
        if previous is not None and timestamp < previous:
            raise TranscriptError(f"messages[{i}].timestamp is earlier than messages[{i - 1}].timestamp; "
                                  "timestamps must not decrease")
        previous = timestamp
    return messages


def _role(messages: list[dict[str, Any]], i: int, role: str, what: str) -> dict[str, Any]:
    if i >= len(messages):
        raise TranscriptError(f"the transcript ends after messages[{i - 1}]; expected {what} at messages[{i}]")
    message = messages[i]
    if message.get("role") != role:
        raise TranscriptError(f"messages[{i}].role must be {role!r} ({what})")
    return message


def _tool_call(message: dict[str, Any], i: int) -> tuple[str, Any]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or len(calls) != 1:
        raise TranscriptError(f"messages[{i}].tool_calls must hold exactly one tool call")
    function = calls[0].get("function") if isinstance(calls[0], dict) else None
    where = f"messages[{i}].tool_calls[0].function"
    if not isinstance(function, dict):
        raise TranscriptError(f"{where} must be an object")
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not name:
        raise TranscriptError(f"{where}.name must be a non-empty string")
    if not isinstance(arguments, str):
        raise TranscriptError(f"{where}.arguments must be a JSON string")
    return name, decode_string(arguments, f"{where}.arguments", _WHAT)


def import_chat_json_value(document: Any, trace_id: str = DEFAULT_TRACE_ID) -> Cassette:
    """The cassette of a decoded chat-JSON transcript."""
    if not isinstance(document, dict):
        raise TranscriptError("the top level must be an object with `messages`")
    tools = _tools(document)
    messages = _messages(document)
    prompt = _role(messages, 0, "user", "the user's prompt").get("content")
    if not isinstance(prompt, str) or not prompt:
        raise TranscriptError("messages[0].content must be a non-empty string")
    chain = StepChain(trace_id)
    history: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    i = 1
    while True:
        assistant = _role(messages, i, "assistant", "an assistant message")
        at = assistant["timestamp"]
        chain.append("model_input", at, {"messages": list(history), "tools": tools})
        if assistant.get("tool_calls") in (None, []):
            break
        name, tool_input = _tool_call(assistant, i)
        call_id = f"call-{(i - 1) // 2}"
        call = {"toolCallId": call_id, "toolName": name, "toolInput": tool_input}
        chain.append("model_output", at, {"type": "tool_call", **call})
        chain.append("tool_call", at, call)
        tool = _role(messages, i + 1, "tool", "the tool's result")
        content = tool.get("content")
        if not isinstance(content, str):
            raise TranscriptError(f"messages[{i + 1}].content must be a string")
        result = {"toolCallId": call_id, "toolName": name, "result": json_or_text(content)}
        chain.append("tool_result", tool["timestamp"], result)
        history.append({"role": "assistant", "content": [{"type": "tool_use", **call}]})
        history.append({"role": "user", "content": [{"type": "tool_result", **result}]})
        i += 2
    answer = assistant.get("content")
    if not isinstance(answer, str):
        raise TranscriptError(f"messages[{i}].content must be a string (the final answer)")
    if i != len(messages) - 1:
        raise TranscriptError(f"messages[{i + 1}]: nothing may follow the final assistant answer at messages[{i}]")
    chain.append("model_output", at, {"type": "final_answer", "text": answer})
    chain.append("metadata", at, {"event": "run_completed", "status": "success", "result": answer})
    return chain.cassette(messages[0]["timestamp"])


def import_chat_json(path: str | os.PathLike[str], trace_id: str | None = None) -> Cassette:
    """The cassette of a chat-JSON file; TranscriptError naming the position when it cannot be one."""
    return import_chat_json_value(decode_document(Path(path).read_bytes(), _WHAT), trace_id or default_trace_id(path))


class ChatJson(Importer):
    name = "chat-json"
    description = "{tools?, messages} with one OpenAI-style tool call per assistant message"
    patterns = ("*.json",)

    def import_file(self, path: str | os.PathLike[str], trace_id: str | None = None,
                    progress: Reading = None) -> Cassette:
        with json_numbers():
            return import_chat_json(path, trace_id)
