"""The Codex CLI and Gemini CLI importers (docs/format.md, "Codex CLI", "Gemini CLI") and the registry: the
fixtures written in the CLIs' shapes, each rule on small sessions written here, and hostile lines."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.outcome import outcome
from blackbox.format.verify import verify
from blackbox.format.writing import dumps
from blackbox.importers.codex import OBSERVED_TOOL_DESCRIPTION as CODEX_TOOLS
from blackbox.importers.codex import import_codex
from blackbox.importers.common import Progress, TranscriptError
from blackbox.importers.gemini import import_gemini
from blackbox.importers.registry import IMPORTERS, names, with_folder
from tests.conftest import FIXTURES

IMPORT = FIXTURES / "import"
T = "2026-11-30T10:00:{:02d}.000Z"


def kinds(cassette: Any) -> list[str]:
    return [s.type for s in cassette.steps]


# ---------------------------------------------------------------------------------------------------------
# fixtures in the real CLIs' shapes


# Each fixture importing to the cassette the format rules give (its `.expected.json`, built from the session's
# story, never from an importer's output): tests/test_import_rules.py.


def test_codex_steps_are_the_neutral_responses_steps() -> None:
    cassette = import_codex(IMPORT / "codex-tax.jsonl", "codex-tax")
    assert kinds(cassette) == ["model_input", "model_output", "tool_call", "tool_result"] * 4 + [
        "model_input", "model_output", "metadata"]
    first = cassette.steps[0].payload
    # the <environment_context> preamble is Codex's, not the user's; the model is the turn's
    assert first["messages"] == [{"role": "user", "content": "The VAT test in tests/test_tax.py fails. Find out why "
                                                             "and fix it."}]
    assert first["model"] == "gpt-5-codex"
    assert first["tools"][0] == {"name": "shell", "description": CODEX_TOOLS}
    assert cassette.steps[1].payload == {"type": "tool_calls", "calls": [{
        "toolCallId": "call-0", "toolName": "shell",
        "toolInput": {"command": ["bash", "-lc", "pytest -q tests/test_tax.py"], "workdir": "/home/dev/shop",
                      "timeout_ms": 120000}}]}
    assert cassette.steps[3].payload["result"]["metadata"]["exit_code"] == 1  # output JSON text → JSON
    patch = cassette.steps[9].payload["calls"][0]
    assert patch["toolName"] == "apply_patch"
    assert patch["toolInput"].startswith("*** Begin Patch\n*** Update File: tax.py")
    assert outcome(cassette).status == "success"
    assert "call_0" not in dumps(cassette).decode()  # Codex's call ids never reach the cassette


def test_a_long_codex_session_compacts_its_history() -> None:
    progress = Progress()
    cassette = import_codex(IMPORT / "codex-long-compacted.jsonl", "codex-long", progress)
    inputs = [s.payload for s in cassette.steps if s.type == "model_input"]
    sizes = [len(p["messages"]) for p in inputs]
    compacted = next(i for i in range(1, len(sizes)) if sizes[i] < sizes[i - 1])
    assert sizes[compacted - 1] > 40 and sizes[compacted] == 3
    assert inputs[compacted]["messages"][:2] == [
        {"role": "user", "content": "Add type hints to every public function in shop/."},
        {"role": "user", "content": "Added type hints to the public functions of the eight modules in shop/; each "
                                    "module was read with sed, checked with mypy and patched."}]
    calls = [s.payload["toolCallId"] for s in cassette.steps if s.type == "tool_call"]
    assert calls == [f"call-{n}" for n in range(48)]  # numbering goes on across the compaction
    assert progress.skipped == {"world_state": 1, "response_item.web_search_call": 1}
    assert len(cassette.steps) == 197 and outcome(cassette).status == "success"


def test_gemini_replays_the_log_last_record_wins_and_rewind_drops() -> None:
    progress = Progress()
    cassette = import_gemini(IMPORT / "gemini-tax-rewind.jsonl", "gemini-tax", progress)
    edits = [s.payload["toolInput"] for s in cassette.steps
             if s.type == "tool_call" and s.payload["toolName"] == "replace"]
    assert [e["new_string"] for e in edits] == ["RATE = 0.20"]  # the rewound edit is gone
    results = [s.payload for s in cassette.steps if s.type == "tool_result"]
    assert len(results) == 4  # each call's re-appended record (with its result) won over the first one
    assert results[0]["result"].startswith("Command: pytest -q tests/test_tax.py\n")
    assert cassette.steps[0].payload["model"] == "gemini-2.5-pro"
    assert progress.skipped == {"message.gemini_thought_stream": 1}
    assert cassette.createdAt == 1796038800001  # the session's startTime, 2026-11-30T11:40:00.001Z
    assert "thought" not in dumps(cassette).decode()


def test_a_gemini_checkpoint_imports_its_api_history(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint-tax.json"
    path.write_bytes((IMPORT / "gemini-checkpoint.foreign.json").read_bytes())
    os.utime(path, (1764500000, 1764500000))
    cassette = import_gemini(path, "checkpoint")
    assert cassette.createdAt == 1764500000000  # a checkpoint keeps no times: the file's
    assert cassette.steps[0].payload["messages"] == [
        {"role": "user", "content": "The VAT test in tests/test_tax.py fails. Find out why and fix it."}]
    assert [s.type for s in cassette.steps][-2:] == ["model_output", "tool_call"]  # the pending edit
    assert outcome(cassette).status == "incomplete" and outcome(cassette).tools == ("run_shell_command", "replace")
    assert verify(cassette, env={}).ok


def test_the_registry_is_the_one_list() -> None:
    assert names() == ("claude-code", "codex", "gemini", "chat-json", "otel")
    assert with_folder() == ("claude-code", "codex", "gemini")
    assert IMPORTERS["codex"].default_folder({"CODEX_HOME": "/x/codex"}) == Path("/x/codex/sessions")
    assert IMPORTERS["codex"].default_folder({}) == Path("~/.codex/sessions").expanduser()
    assert IMPORTERS["chat-json"].default_folder({}) is None
    schema = json.loads((FIXTURES.parent.parent / "docs/schemas/import.schema.json").read_text())
    enums = [v["properties"]["source"]["enum"] for v in schema["oneOf"]]
    assert enums == [list(names()), list(names()), list(with_folder()), list(with_folder())], \
        "docs/schemas/import.schema.json: the source values must be the registry's"


# ---------------------------------------------------------------------------------------------------------
# rules on small sessions


def codex(tmp_path: Path, *payloads: tuple[str, dict[str, Any]], name: str = "rollout.jsonl") -> Path:
    lines = [{"timestamp": T.format(0), "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}}]
    lines += [{"timestamp": T.format(i + 1), "type": kind, "payload": payload}
              for i, (kind, payload) in enumerate(payloads)]
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def user(text: str) -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def say(text: str) -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def call(call_id: str, name: str = "shell", arguments: str = '{"command": ["ls"]}') -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}


def output(call_id: str, text: Any = "ok") -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": "function_call_output", "call_id": call_id, "output": text}


def test_codex_items_of_one_response_are_one_turn_and_texts_join_with_a_blank_line(tmp_path: Path) -> None:
    path = codex(tmp_path, user("go"), ("response_item", {"type": "reasoning", "summary": []}), say("a"), say("b"),
                 call("c1"), call("c2"), output("c1"), output("c2", '{"n": 1.50}'), say("done"))
    cassette = import_codex(path)
    assert kinds(cassette) == ["model_input", "model_output", "tool_call", "tool_result", "tool_call", "tool_result",
                               "model_input", "model_output", "metadata"]
    assert cassette.steps[1].payload["text"] == "a\n\nb"
    assert [c["toolCallId"] for c in cassette.steps[1].payload["calls"]] == ["call-0", "call-1"]
    assert cassette.steps[5].payload["result"] == {"n": 1.5}


def test_codex_legacy_event_messages_count_only_without_items(tmp_path: Path) -> None:
    events = codex(tmp_path, ("event_msg", {"type": "user_message", "message": "hi"}),
                   ("event_msg", {"type": "agent_message", "message": "hello"}), name="old.jsonl")
    assert outcome(import_codex(events)).final_answer == "hello"
    both = codex(tmp_path, user("hi"), ("event_msg", {"type": "user_message", "message": "hi"}), say("hello"),
                 ("event_msg", {"type": "agent_message", "message": "hello"}))
    cassette = import_codex(both)
    assert cassette.steps[0].payload["messages"] == [{"role": "user", "content": "hi"}]
    assert cassette.steps[1].payload == {"type": "final_answer", "text": "hello"}


def test_an_aborted_codex_turn_is_an_unanswered_request(tmp_path: Path) -> None:
    path = codex(tmp_path, user("go"), say("working"), user("stop, do X"), ("event_msg", {"type": "turn_aborted"}))
    cassette = import_codex(path)
    assert kinds(cassette)[-1] == "model_input" and outcome(cassette).status == "incomplete"


def test_codex_custom_and_local_shell_calls_and_an_error_output(tmp_path: Path) -> None:
    path = codex(tmp_path, user("go"),
                 ("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch",
                                    "call_id": "p1"}),
                 ("response_item", {"type": "custom_tool_call_output", "call_id": "p1",
                                    "output": {"content": "patch failed", "success": False}}),
                 ("response_item", {"type": "local_shell_call", "call_id": "l1",
                                    "action": {"type": "exec", "command": ["pwd"]}}),
                 output("l1", [{"type": "input_text", "text": "/w"}]), say("ok"))
    steps = import_codex(path).steps
    assert steps[3].payload == {"toolCallId": "call-0", "toolName": "apply_patch", "error": "patch failed"}
    assert steps[6].payload == {"toolCallId": "call-1", "toolName": "local_shell",
                                "toolInput": {"type": "exec", "command": ["pwd"]}}
    assert steps[7].payload["result"] == "/w"


@pytest.mark.parametrize(("payloads", "message"), [
    ((user("go"), call("c1", arguments={"not": "a string"})),  # type: ignore[arg-type]
     "line 3: a function_call needs `arguments` as a JSON string"),
    ((user("go"), call("")), "line 3: a tool call needs a non-empty string `call_id`"),
    ((user("go"), call("c1"), call("c1")), "line 4: duplicate tool call id (first used on line 3)"),
    ((user("go"), output("nope")), "line 3: a tool output answers an unknown tool call id"),
    ((user("go"), call("c1"), user("more"), say("x")), "line 3: a tool call of this turn has no tool output, and the "
                                                      "session goes on after it"),
    ((("response_item", {"type": "message", "role": 7, "content": []}),), "line 2: a message needs `role` user, "
                                                                        "assistant, developer or system"),
    ((("turn_context", {"model": 5}),), "line 2: `payload.model` must be a string"),
    ((("compacted", {"window": 1}),), "line 2: a compacted record needs `message` (a string) or "
                                      "`replacement_history` (a list)"),
    ((("response_item", "not an object"),), "line 2: `payload` must be an object"),
    ((), "no messages in the file; is it a Codex CLI rollout?"),
])
def test_codex_refusals_name_the_line_and_the_field(tmp_path: Path, payloads: Any, message: str) -> None:
    with pytest.raises(TranscriptError) as info:
        import_codex(codex(tmp_path, *payloads))
    assert str(info.value) == message


def gemini_log(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "session-2026-11-30T10-00-abcd1234.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def g_user(mid: str, text: str, t: int = 1) -> dict[str, Any]:
    return {"id": mid, "timestamp": T.format(t), "type": "user", "content": [{"text": text}]}


def g_model(mid: str, text: str, calls: list[dict[str, Any]] | None = None, t: int = 2) -> dict[str, Any]:
    record: dict[str, Any] = {"id": mid, "timestamp": T.format(t), "type": "gemini", "content": text,
                              "model": "gemini-2.5-flash"}
    if calls is not None:
        record["toolCalls"] = calls
    return record


def g_call(cid: str, name: str = "list_directory", response: Any = None, status: str = "success") -> dict[str, Any]:
    call: dict[str, Any] = {"id": cid, "name": name, "args": {"path": "."}, "status": status}
    if response is not None:
        call["result"] = [{"functionResponse": {"id": cid, "name": name, "response": response}}]
    return call


def test_gemini_rewind_to_an_unknown_id_clears_all_and_set_can_replace_messages(tmp_path: Path) -> None:
    path = gemini_log(tmp_path, g_user("u1", "first"), g_model("m1", "one"), {"$rewindTo": "nope"},
                      g_user("u2", "second", 3), g_model("m2", "two", t=4))
    cassette = import_gemini(path)
    assert cassette.steps[0].payload["messages"] == [{"role": "user", "content": "second"}]
    replaced = {"$set": {"messages": [g_user("u9", "set"), g_model("m9", "x")]}}
    path = gemini_log(tmp_path, g_user("u1", "first"), replaced)
    assert outcome(import_gemini(path)).final_answer == "x"


def test_gemini_tool_errors_thoughts_and_results_sent_as_user_parts(tmp_path: Path) -> None:
    path = gemini_log(tmp_path, g_user("u1", "go"),
                      g_model("m1", [{"text": "hmm", "thought": True}, {"text": "Looking."}],
                              [g_call("c1", response={"error": "no such dir"}, status="error")]),
                      {"id": "m2", "timestamp": T.format(3), "type": "gemini", "content": [
                          {"functionCall": {"name": "read_file", "args": {"absolute_path": "/a"}}}]},
                      {"id": "u2", "timestamp": T.format(4), "type": "user", "content": [
                          {"functionResponse": {"name": "read_file", "response": {"output": "{\"k\": 1}"}}}]},
                      {"id": "i1", "timestamp": T.format(5), "type": "info", "content": "ui only"},
                      g_model("m3", "done", t=6))
    steps = import_gemini(path).steps
    assert steps[1].payload["text"] == "Looking."
    assert steps[3].payload == {"toolCallId": "call-0", "toolName": "list_directory", "error": "no such dir"}
    assert steps[7].payload["result"] == {"k": 1}
    assert outcome(import_gemini(path)).final_answer == "done"


@pytest.mark.parametrize(("records", "message"), [
    (({"id": "u", "type": "user", "content": "x"},), "line 1: `timestamp` is missing or not an ISO time"),
    (({"$rewindTo": 3},), "line 1: `$rewindTo` must be a message id (a string)"),
    (({"$set": []},), "line 1: `$set` must be an object"),
    ((g_user("u", "x"), g_model("m", "y", [g_call("c1"), g_call("c1")])),
     "line 2: toolCalls[1]: duplicate tool call id (first used on line 2)"),
    ((g_user("u", "x"), g_model("m", "y", [{"id": "c", "name": "ls", "args": [1]}])),
     "line 2: toolCalls[0]: `args` must be an object"),
    ((g_user("u", "x"), g_model("m", "y", [g_call("c1")]), g_user("u2", "z", 3), g_model("m2", "w", t=4)),
     "line 2: a tool call of this turn has no tool result, and the session goes on after it"),
    (({"id": "u", "timestamp": T.format(1), "type": "user",
       "content": [{"functionResponse": {"name": "ls", "response": {}}}]},),
     "line 1: parts[0]: a functionResponse answers no tool call of the turn before it"),
    (({"sessionId": "s", "startTime": T.format(0)},), "no user or gemini messages in the file; is it a Gemini CLI "
                                                     "session?"),
])
def test_gemini_refusals_name_the_line_and_the_field(tmp_path: Path, records: Any, message: str) -> None:
    with pytest.raises(TranscriptError) as info:
        import_gemini(gemini_log(tmp_path, *records))
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------------------
# hostile lines: one line, never a traceback


HOSTILE: list[tuple[bytes, str]] = [
    (b'{"timestamp": "2026-11-30T10:00:00Z", "type": "response_item", "payload": {"type": "message", "role": '
     b'"user", "content": "\xff\xfe"}}\n', "line 1: `payload` holds bytes that are not UTF-8 text"),
    (b"\xc3\x28 not even json\n", "line 1: not UTF-8 text, so the file is damaged"),
    (b"[1, 2]\n", "line 1: not a JSON object (each line must be one)"),
    (b'{"timestamp": 5, "type": "response_item", "payload": {}}\n', "line 1: `timestamp` is missing or not an ISO"),
    (b"[" * 100_000 + b"\n", "line 1: not "),
]


@pytest.mark.parametrize(("data", "expected"), HOSTILE)
@pytest.mark.parametrize("source", ["codex", "gemini"])
def test_hostile_lines_give_one_line(tmp_path: Path, source: str, data: bytes, expected: str) -> None:
    path = tmp_path / "session-x.jsonl"
    path.write_bytes(data)
    with pytest.raises(TranscriptError) as info:
        IMPORTERS[source].import_file(path)
    message = str(info.value)
    assert "\n" not in message
    if source == "codex" or not expected.startswith("line 1: `"):
        assert message.startswith(expected)


@pytest.mark.parametrize("source", ["codex", "gemini"])
def test_a_20_mb_line_imports_or_is_refused_in_one_line(tmp_path: Path, source: str) -> None:
    big = "x" * 20_000_000
    if source == "codex":
        lines = [{"timestamp": T.format(0), "type": "response_item", "payload": {"type": "message", "role": "user",
                                                                                "content": big}},
                 {"timestamp": T.format(1), "type": "response_item",
                  "payload": {"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": "ok"}]}}]
    else:
        lines = [g_user("u", big), g_model("m", "ok")]
    path = tmp_path / "session-big.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    cassette = IMPORTERS[source].import_file(path)
    assert len(cassette.steps[0].payload["messages"][0]["content"]) == 20_000_000
    truncated = tmp_path / "session-cut.jsonl"
    truncated.write_bytes(path.read_bytes()[:15_000_000])
    with pytest.raises(TranscriptError, match=r"^line 1: not valid JSON$"):
        IMPORTERS[source].import_file(truncated)


def test_unknown_record_types_are_skipped_and_counted(tmp_path: Path) -> None:
    path = codex(tmp_path, ("inter_agent_communication", {"x": 1}), ("token_usage_record", {}), user("go"),
                 ("response_item", {"type": "ghost_snapshot"}), ("realtime_item", {}), say("ok"))
    progress = Progress()
    assert outcome(import_codex(path, progress=progress)).status == "success"
    assert progress.skipped == {"inter_agent_communication": 1, "token_usage_record": 1, "realtime_item": 1,
                                "response_item.ghost_snapshot": 1}


@pytest.mark.parametrize("source", ["codex", "claude-code"])
def test_a_number_beyond_a_double_is_one_line_naming_its_line(tmp_path: Path, source: str) -> None:
    if source == "codex":
        path = codex(tmp_path, user("go"), call("c1", arguments='{"x": -1e400}'), output("c1"), say("ok"))
        where = "line 3"
    else:
        path = tmp_path / "cc.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in (
            {"type": "user", "timestamp": T.format(0), "message": {"role": "user", "content": "go"}},
            {"type": "assistant", "timestamp": T.format(1), "message": {"id": "m", "role": "assistant", "content": [
                {"type": "tool_use", "id": "t", "name": "X", "input": {"v": "placeholder"}}]}})).replace(
            '"placeholder"', "-1e400") + "\n")
        where = "line 2"
    with pytest.raises(TranscriptError) as info:
        IMPORTERS[source].import_file(path)
    assert str(info.value).startswith(f"{where}: a number JSON cannot write")
