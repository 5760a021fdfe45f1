"""The chat-JSON importer (docs/format.md, "Import"): the original's fixture, the strict round structure, positional
errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import chain_break
from blackbox.format.outcome import outcome
from blackbox.format.writing import dumps
from blackbox.importers.chat_json import import_chat_json, import_chat_json_value
from blackbox.importers.common import TranscriptError
from tests.conftest import FIXTURES

SECRET = "hunter2-classified-content"


def foreign() -> dict[str, Any]:
    return json.loads((FIXTURES / "external/chat-tool-use.foreign.json").read_text())


def call(name: str, arguments: str) -> list[dict[str, Any]]:
    return [{"id": "call_x", "type": "function", "function": {"name": name, "arguments": arguments}}]


def small() -> dict[str, Any]:
    return {"messages": [
        {"role": "user", "timestamp": 10, "content": "Add 2 and 3"},
        {"role": "assistant", "timestamp": 20, "content": None, "tool_calls": call("add", '{"a": 2, "b": 3}')},
        {"role": "tool", "timestamp": 30, "content": "5"},
        {"role": "assistant", "timestamp": 40, "content": "5"},
    ]}


def error_of(document: Any) -> str:
    with pytest.raises(TranscriptError) as info:
        import_chat_json_value(document)
    return str(info.value)


def test_fixture_converts_to_the_originals_bytes() -> None:
    cassette = import_chat_json(FIXTURES / "external/chat-tool-use.foreign.json", "external-chat-tool-use")
    assert dumps(cassette) == (FIXTURES / "external/chat-tool-use.converted.v2.json").read_bytes()
    assert len(cassette.steps) == 11


def test_rounds_use_the_single_call_shape_and_timestamps_of_their_messages() -> None:
    cassette = import_chat_json_value(small())
    assert [s.type for s in cassette.steps] == ["model_input", "model_output", "tool_call", "tool_result",
                                                "model_input", "model_output", "metadata"]
    assert cassette.steps[1].payload == {"type": "tool_call", "toolCallId": "call-0", "toolName": "add",
                                         "toolInput": {"a": 2, "b": 3}}
    assert [s.timestamp for s in cassette.steps] == [20, 20, 20, 30, 40, 40, 40]
    assert cassette.steps[3].payload["result"] == 5  # tool content parsed as JSON
    assert cassette.createdAt == 10
    assert cassette.id == "imported"
    assert cassette.steps[0].payload["tools"] == []
    assert outcome(cassette).status == "success"
    assert chain_break(cassette) is None


def test_non_json_tool_content_stays_a_string_and_tools_default_description() -> None:
    document = small()
    document["messages"][2]["content"] = "five, I think"
    document["tools"] = [{"type": "function", "function": {"name": "add"}}]
    cassette = import_chat_json_value(document)
    assert cassette.steps[3].payload["result"] == "five, I think"
    assert cassette.steps[0].payload["tools"] == [{"name": "add", "description": ""}]


def test_no_tool_rounds_is_a_direct_answer() -> None:
    document = {"messages": [{"role": "user", "timestamp": 1, "content": "Hi"},
                             {"role": "assistant", "timestamp": 1, "content": "Hello"}]}
    cassette = import_chat_json_value(document)
    assert [s.type for s in cassette.steps] == ["model_input", "model_output", "metadata"]


def test_other_fields_are_ignored() -> None:
    document = small()
    document["model"] = "gpt-x"
    document["messages"][1]["tool_calls"][0]["id"] = "call_abcdefghijklmnopqrstuvwxyz"
    document["messages"][2]["tool_call_id"] = "something-else"
    assert dumps(import_chat_json_value(document)) == dumps(import_chat_json_value(small()))


def mutate(path: str, value: Any) -> dict[str, Any]:
    """`small()` with the value at a `messages.3.content`-style path replaced, appended, or deleted (`...`)."""
    document = copy.deepcopy(small())
    *parents, last = path.split(".")
    target: Any = document
    for key in parents:
        target = target[int(key)] if key.isdigit() else target[key]
    key: Any = int(last) if last.isdigit() else last
    if value is ...:
        del target[key]
    elif isinstance(target, list) and key == len(target):
        target.append(value)
    else:
        target[key] = value
    return document


@pytest.mark.parametrize(("document", "expected"), [
    ([], "the top level must be an object with `messages`"),
    ({"messages": []}, "`messages` must be a non-empty array"),
    (mutate("messages.2.timestamp", 15), "messages[2].timestamp is earlier than messages[1].timestamp; "
     "timestamps must not decrease"),
    (mutate("messages.1.timestamp", 20.5), "messages[1].timestamp must be an integer (milliseconds since the "
     "epoch)"),
    (mutate("messages.1.timestamp", True), "messages[1].timestamp must be an integer (milliseconds since the "
     "epoch)"),
    (mutate("messages.0.timestamp", ...), "messages[0].timestamp must be an integer (milliseconds since the "
     "epoch)"),
    (mutate("messages.0.role", "system"), "messages[0].role must be 'user' (the user's prompt)"),
    (mutate("messages.0.content", ""), "messages[0].content must be a non-empty string"),
    (mutate("messages.1.tool_calls", call("add", "{") * 2), "messages[1].tool_calls must hold exactly one tool "
     "call"),
    (mutate("messages.1.tool_calls", call("add", f"{{{SECRET}")), "messages[1].tool_calls[0].function.arguments "
     "is not valid JSON"),
    (mutate("messages.1.tool_calls", [{"function": {"name": "add", "arguments": {"a": 1}}}]),
     "messages[1].tool_calls[0].function.arguments must be a JSON string"),
    (mutate("messages.1.tool_calls", [{"function": {"arguments": "{}"}}]),
     "messages[1].tool_calls[0].function.name must be a non-empty string"),
    (mutate("messages.2.role", "assistant"), "messages[2].role must be 'tool' (the tool's result)"),
    (mutate("messages.2.content", {"x": 1}), "messages[2].content must be a string"),
    (mutate("messages.3", ...), "the transcript ends after messages[2]; expected an assistant message at "
     "messages[3]"),
    (mutate("messages.3.content", None), "messages[3].content must be a string (the final answer)"),
    (mutate("messages.4", {"role": "user", "timestamp": 50, "content": "more"}),
     "messages[4]: nothing may follow the final assistant answer at messages[3]"),
    (mutate("tools", [{"function": {"name": ""}}]), "tools[0].function.name must be a non-empty string"),
    (mutate("tools", [{"function": {"name": "a", "parameters": [SECRET]}}]),
     "tools[0].function.parameters must be an object"),
])
def test_errors_name_positions_never_values(document: Any, expected: str) -> None:
    message = error_of(document)
    assert message == expected
    assert SECRET not in message


def test_not_json_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{\n  "messages": [\n    {"content": ' + SECRET + "}\n  ]\n}")
    with pytest.raises(TranscriptError) as info:
        import_chat_json(path)
    assert str(info.value) == "not JSON: invalid at line 3, column 17"


def test_truncated_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"messages": [')
    with pytest.raises(TranscriptError, match="not JSON: invalid at the end of the file"):
        import_chat_json(path)


def test_fixture_has_foreign_fields_the_import_drops() -> None:
    text = dumps(import_chat_json_value(foreign())).decode()
    for dropped in ("call_a1B2c3", "msg_0001", "system_fingerprint", "usage", "finish_reason", "conv_9f3c"):
        assert dropped not in text
