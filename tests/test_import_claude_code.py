"""The Claude Code importer (docs/format.md, "Import"): every rule on small transcripts written here, and the
original's fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import Cassette, chain_break
from blackbox.format.outcome import outcome
from blackbox.format.writing import dumps
from blackbox.importers.claude_code import OBSERVED_TOOL_DESCRIPTION, import_claude_code
from blackbox.importers.common import TranscriptError
from tests.conftest import FIXTURES

T0 = "2026-01-02T03:04:05.000Z"
T0_MS = 1767323045000


def at(seconds: int) -> str:
    return f"2026-01-02T03:04:{5 + seconds:02d}.000Z"


def ms(seconds: int) -> int:
    return T0_MS + seconds * 1000


def user(text: Any, t: int = 0, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "timestamp": at(t), "uuid": f"u{t}", "sessionId": "s-1",
            "message": {"role": "user", "content": text}, **extra}


def assistant(message_id: str, blocks: list[dict[str, Any]], t: int = 0, **extra: Any) -> dict[str, Any]:
    return {"type": "assistant", "timestamp": at(t), "uuid": f"a{t}", "requestId": "req_011CZ",
            "message": {"id": message_id, "role": "assistant", "model": "claude-x", "content": blocks,
                        "usage": {"input_tokens": 3}, "stop_reason": None}, **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(tool_id: str, name: str, tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def result(tool_id: str, content: Any, t: int = 0, *, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return user([block], t)


def write(tmp_path: Path, lines: list[Any], name: str = "session.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def run(tmp_path: Path, lines: list[Any]) -> Cassette:
    return import_claude_code(write(tmp_path, lines))


def error_of(tmp_path: Path, lines: list[Any]) -> str:
    with pytest.raises(TranscriptError) as info:
        run(tmp_path, lines)
    return str(info.value)


def kinds(cassette: Cassette) -> list[str]:
    return [s.type for s in cassette.steps]


def payloads(cassette: Cassette, kind: str) -> list[Any]:
    return [s.payload for s in cassette.steps if s.type == kind]


# ---------------------------------------------------------------------------------------------------------
# The original's fixture


def test_fixture_imports_to_the_originals_bytes() -> None:
    cassette = import_claude_code(FIXTURES / "import/claude-code-session.jsonl", "claude-code-fixture")
    expected = (FIXTURES / "import/claude-code-session.expected.json").read_bytes()
    assert dumps(cassette) == expected
    assert len(cassette.steps) == 9
    assert outcome(cassette).status == "success"
    assert outcome(cassette).tools == ("Read", "Bash")


def test_default_trace_id_is_the_session_files_name() -> None:
    cassette = import_claude_code(FIXTURES / "import/claude-code-session.jsonl")
    assert cassette.id == "claude-code-session"
    assert cassette.steps[0].id == "claude-code-session:0"


# ---------------------------------------------------------------------------------------------------------
# Turns, tools, results


def test_lines_of_one_turn_merge_by_message_id_and_texts_join_with_newlines(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Fix the bug", 0),
        assistant("m1", [{"type": "thinking", "thinking": "hmm", "signature": "sig"}], 1),
        assistant("m1", [text("First,")], 2),
        assistant("m1", [text("then.")], 3),
        assistant("m1", [use("t-1", "Read", {"path": "a.py"})], 4),
        result("t-1", "print(1)", 5),
        assistant("m2", [text("Done.")], 6),
    ])
    assert kinds(cassette) == ["model_input", "model_output", "tool_call", "tool_result",
                               "model_input", "model_output", "metadata"]
    assert cassette.steps[1].payload == {
        "type": "tool_calls",
        "calls": [{"toolCallId": "call-0", "toolName": "Read", "toolInput": {"path": "a.py"}}],
        "text": "First,\nthen.",
    }
    assert cassette.steps[0].timestamp == cassette.steps[1].timestamp == ms(1)  # the turn's first line
    assert cassette.steps[4].payload["messages"][1] == {"role": "assistant", "content": [
        {"type": "text", "text": "First,\nthen."},
        {"type": "tool_use", "toolCallId": "call-0", "toolName": "Read", "toolInput": {"path": "a.py"}},
    ]}
    assert cassette.steps[-1].payload == {"event": "run_completed", "status": "success", "result": "Done."}
    assert "thinking" not in dumps(cassette).decode()


def test_parallel_calls_keep_call_order_with_interleaved_results(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Look", 0),
        assistant("m1", [use("t-a", "Grep", {"q": "x"})], 1),
        result("t-a", "found", 2),
        assistant("m1", [use("t-b", "Glob", {"p": "*"})], 3),
        result("t-b", "files", 4),
        assistant("m2", [text("ok")], 5),
    ])
    assert kinds(cassette)[:6] == ["model_input", "model_output", "tool_call", "tool_result", "tool_call",
                                   "tool_result"]
    assert [c["toolName"] for c in cassette.steps[1].payload["calls"]] == ["Grep", "Glob"]
    history = cassette.steps[6].payload["messages"]
    assert [p["toolCallId"] for p in history[2]["content"]] == ["call-0", "call-1"]
    assert outcome(cassette).tools == ("Grep", "Glob")


def test_results_before_their_uses_are_matched_and_timed_by_the_later_of_the_two(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        result("t-1", "early", 1),
        assistant("m1", [use("t-1", "Bash", {"command": "ls"})], 3),
        assistant("m2", [text("fine")], 4),
    ])
    call, res = cassette.steps[2], cassette.steps[3]
    assert (call.type, res.type) == ("tool_call", "tool_result")
    assert res.payload == {"toolCallId": "call-0", "toolName": "Bash", "result": "early"}
    assert call.timestamp == res.timestamp == ms(3)


def test_result_timestamp_is_the_result_line_when_later(tmp_path: Path) -> None:
    cassette = run(tmp_path, [user("Go", 0), assistant("m1", [use("t-1", "Bash", {})], 1),
                              result("t-1", "x", 7), assistant("m2", [text("y")], 8)])
    assert [s.timestamp for s in cassette.steps[2:4]] == [ms(7), ms(7)]


def test_result_contents_json_strings_blocks_and_errors(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        assistant("m1", [use("t-1", "A", {}), use("t-2", "B", {}), use("t-3", "C", {}), use("t-4", "D", {}),
                         use("t-5", "E", {})], 1),
        result("t-1", '{"rate": 0.2, "ok": true}', 2),
        result("t-2", "plain text", 2),
        result("t-3", [text("one"), {"type": "image", "source": {}}, text("two")], 2),
        result("t-4", '{"looks": "like json"}', 2, is_error=True),
        result("t-5", [text("line")], 2, is_error=True),
        assistant("m2", [text("end")], 3),
    ])
    results = payloads(cassette, "tool_result")
    assert results[0]["result"] == {"rate": 0.2, "ok": True}
    assert results[1]["result"] == "plain text"
    assert results[2]["result"] == "one\n[image omitted]\ntwo"
    # An error holding JSON text is that value as JSON.stringify prints it (the original's rule).
    assert results[3] == {"toolCallId": "call-3", "toolName": "D", "error": '{"looks":"like json"}'}
    assert results[4]["error"] == "line"


@pytest.mark.parametrize(("content", "error"), [
    ('{"a": 1}', '{"a":1}'), ('"quoted"', "quoted"), ("1.0", "1"), ('{"x":1.50}', '{"x":1.5}'),
    ("plain text", "plain text"), ('{"b": 1, "2": [1e21, -0.0], "1": null}', '{"1":null,"2":[1e+21,0],"b":1}'),
    ("  [true, 5e-7]\n", "[true,5e-7]"), ("", ""),
])
def test_an_error_holding_json_text_is_printed_as_json_stringify_prints_it(
        tmp_path: Path, content: str, error: str) -> None:
    cassette = run(tmp_path, [
        user("Go", 0), assistant("m1", [use("t-1", "A", {})], 1), result("t-1", content, 2, is_error=True),
        assistant("m2", [text("end")], 3),
    ])
    assert payloads(cassette, "tool_result")[0]["error"] == error


def test_tools_are_observed_names_in_first_use_order_in_every_model_input(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        assistant("m1", [text("hi")], 1),
        user("more", 2),
        assistant("m2", [use("t-1", "Write", {}), use("t-2", "Read", {})], 3),
        result("t-1", "", 4), result("t-2", "", 4),
        assistant("m3", [use("t-3", "Read", {}), use("t-4", "Bash", {})], 5),
        result("t-3", "", 6), result("t-4", "", 6),
        assistant("m4", [text("bye")], 7),
    ])
    expected = [{"name": n, "description": OBSERVED_TOOL_DESCRIPTION} for n in ("Write", "Read", "Bash")]
    inputs = payloads(cassette, "model_input")
    assert len(inputs) == 4
    assert all(p["tools"] == expected for p in inputs)
    assert OBSERVED_TOOL_DESCRIPTION == "Observed in Claude Code transcript; original definition unavailable."


def test_multi_turn_session_builds_the_history_and_numbers_calls_across_turns(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Hello", 0),
        assistant("m1", [text("Hi, what now?")], 1),
        user([text("Run it"), {"type": "image", "source": {"data": "..."}}], 2),
        assistant("m2", [use("t-1", "Bash", {"command": "make"})], 3),
        result("t-1", "built", 4),
        assistant("m3", [use("t-2", "Bash", {"command": "make test"})], 5),
        result("t-2", "passed", 6),
        assistant("m4", [text("All good.")], 7),
    ])
    assert kinds(cassette) == ["model_input", "model_output",
                               "model_input", "model_output", "tool_call", "tool_result",
                               "model_input", "model_output", "tool_call", "tool_result",
                               "model_input", "model_output", "metadata"]
    assert cassette.steps[1].payload == {"type": "final_answer", "text": "Hi, what now?"}
    last_history = cassette.steps[10].payload["messages"]
    assert last_history[:3] == [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi, what now?"},
        {"role": "user", "content": "Run it\n[image omitted]"},
    ]
    assert [m["role"] for m in last_history] == ["user", "assistant", "user", "assistant", "user", "assistant",
                                                 "user"]
    assert [p["toolCallId"] for p in payloads(cassette, "tool_call")] == ["call-0", "call-1"]
    assert outcome(cassette).status == "success"
    assert chain_break(cassette) is None


def test_text_beside_tool_results_on_a_user_line_is_a_human_turn(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        assistant("m1", [use("t-1", "Bash", {})], 1),
        user([{"type": "tool_result", "tool_use_id": "t-1", "content": "x"}, text("and also this")], 2),
        assistant("m2", [text("ok")], 3),
    ])
    history = cassette.steps[4].payload["messages"]
    assert history[-1] == {"role": "user", "content": "and also this"}
    assert history[-2]["content"][0]["type"] == "tool_result"


def test_provider_data_is_dropped(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        assistant("msg_01AbC9", [use("toolu_01XyZ7", "Bash", {"command": "ls"})], 1),
        result("toolu_01XyZ7", "ok", 2),
        assistant("msg_01AbC8", [text("done")], 3),
    ])
    text_out = dumps(cassette).decode()
    for dropped in ("toolu_", "msg_", "req_", "usage", "claude-x", "sessionId", "uuid"):
        assert dropped not in text_out


def test_created_at_is_the_first_kept_lines_time_and_iso_offsets_are_honoured(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        {"type": "summary", "summary": "x", "timestamp": "2020-01-01T00:00:00Z"},
        {**user("Go"), "timestamp": "2026-01-02T04:04:05.123456+01:00"},
        {**assistant("m1", [text("ok")]), "timestamp": "2026-01-02T03:04:06Z"},
    ])
    assert cassette.createdAt == T0_MS + 123
    assert cassette.steps[0].timestamp == T0_MS + 1000


# ---------------------------------------------------------------------------------------------------------
# Incomplete sessions


def test_cut_off_while_a_tool_ran_ends_with_the_tool_call(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        assistant("m1", [use("t-1", "Bash", {"command": "sleep 100"})], 1),
    ])
    assert kinds(cassette) == ["model_input", "model_output", "tool_call"]
    assert cassette.steps[2].timestamp == ms(1)
    assert outcome(cassette).status == "incomplete"


def test_cut_off_with_one_of_two_parallel_results(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        assistant("m1", [use("t-1", "A", {}), use("t-2", "B", {})], 1),
        result("t-2", "b", 2),
    ])
    assert kinds(cassette) == ["model_input", "model_output", "tool_call", "tool_call", "tool_result"]
    assert cassette.steps[4].payload["toolName"] == "B"
    assert outcome(cassette).status == "incomplete"


def test_trailing_human_message_becomes_an_unanswered_model_input(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        assistant("m1", [text("Done?")], 1),
        user("Not yet, also do X", 2),
    ])
    assert kinds(cassette) == ["model_input", "model_output", "model_input"]
    last = cassette.steps[-1]
    assert last.timestamp == ms(2)
    assert last.payload["messages"][-1] == {"role": "user", "content": "Not yet, also do X"}
    assert outcome(cassette).status == "incomplete"


def test_trailing_empty_user_message_becomes_an_unanswered_model_input(tmp_path: Path) -> None:
    cassette = run(tmp_path, [user("Go", 0), assistant("m1", [text("Answer")], 1), user("", 2)])
    assert kinds(cassette) == ["model_input", "model_output", "model_input"]
    assert cassette.steps[-1].payload["messages"] == [{"role": "user", "content": "Go"},
                                                     {"role": "assistant", "content": "Answer"}]
    assert outcome(cassette).status == "incomplete"


def test_results_returned_but_no_reply_yet_is_an_unanswered_model_input(tmp_path: Path) -> None:
    cassette = run(tmp_path, [user("Go", 0), assistant("m1", [use("t-1", "A", {})], 1), result("t-1", "a", 2)])
    assert kinds(cassette) == ["model_input", "model_output", "tool_call", "tool_result", "model_input"]
    assert cassette.steps[-1].payload["messages"][-1]["content"][0]["type"] == "tool_result"


def test_only_a_prompt_is_one_unanswered_model_input(tmp_path: Path) -> None:
    cassette = run(tmp_path, [user("Hello?", 4)])
    assert kinds(cassette) == ["model_input"]
    assert cassette.steps[0].payload == {"messages": [{"role": "user", "content": "Hello?"}], "tools": []}
    assert cassette.createdAt == ms(4)


# ---------------------------------------------------------------------------------------------------------
# Sidechains


def test_sidechain_lines_are_skipped(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        user("Go", 0),
        assistant("m1", [use("t-1", "Task", {"prompt": "dig"})], 1),
        user("dig", 2, isSidechain=True),
        assistant("s1", [use("t-9", "Grep", {})], 3, isSidechain=True),
        result("t-9", "deep", 4) | {"isSidechain": True},
        assistant("s2", [text("dug")], 5, isSidechain=True),
        result("t-1", "dug", 6),
        assistant("m2", [text("done")], 7),
    ])
    assert outcome(cassette).tools == ("Task",)
    assert "Grep" not in dumps(cassette).decode()


def test_an_all_sidechain_transcript_is_a_subagents_own_and_is_kept(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        {"type": "system", "timestamp": at(0)},
        user("dig", 1, isSidechain=True),
        assistant("s1", [use("t-9", "Grep", {"q": "x"})], 2, isSidechain=True),
        result("t-9", "deep", 3) | {"isSidechain": True},
        assistant("s2", [text("dug")], 4, isSidechain=True),
    ])
    assert outcome(cassette).status == "success"
    assert outcome(cassette).tools == ("Grep",)
    assert cassette.createdAt == ms(1)


def test_a_broken_sidechain_line_is_ignored_when_the_main_chain_exists(tmp_path: Path) -> None:
    cassette = run(tmp_path, [
        {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "no time"}},
        user("Go", 1),
        assistant("m1", [text("ok")], 2),
    ])
    assert outcome(cassette).status == "success"


def test_a_broken_line_in_an_all_sidechain_transcript_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, [
        user("dig", 1, isSidechain=True),
        {"type": "assistant", "isSidechain": True, "message": {"id": "s", "role": "assistant", "content": []}},
    ])
    assert message.startswith("line 2:") and "timestamp" in message


# ---------------------------------------------------------------------------------------------------------
# Errors: the line, never the content


SECRET = "hunter2-classified-content"


def test_bad_json_line_names_the_line_not_the_content(tmp_path: Path) -> None:
    message = error_of(tmp_path, [user("Go"), "", f'{{"type": "user", "note": "{SECRET}"', assistant("m", [])])
    assert message == "line 3: not valid JSON"
    assert SECRET not in message


def test_a_line_that_is_not_an_object_is_an_error(tmp_path: Path) -> None:
    assert error_of(tmp_path, [user("Go"), f'["{SECRET}"]']) == "line 2: not a JSON object (each line must be one)"


@pytest.mark.parametrize(("line", "expected"), [
    ({"type": "user", "message": {"role": "user", "content": SECRET}}, "line 2: `timestamp` is missing or not an "
     "ISO time"),
    ({"type": "user", "timestamp": SECRET, "message": {"content": "x"}}, "line 2: `timestamp` is missing or not "
     "an ISO time"),
    ({"type": "assistant", "timestamp": T0}, "line 2: `message` is missing"),
    ({"type": "assistant", "timestamp": T0, "message": SECRET}, "line 2: `message` must be an object"),
    ({"type": "assistant", "timestamp": T0, "message": {"id": "m", "content": 5}},
     "line 2: `message.content` must be a string or a list of blocks"),
])
def test_missing_or_mistyped_fields_name_the_line(tmp_path: Path, line: dict[str, Any], expected: str) -> None:
    message = error_of(tmp_path, [user("Go"), line])
    assert message == expected
    assert SECRET not in message


def test_duplicate_tool_use_id_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, [
        user("Go", 0),
        assistant("m1", [use("t-1", "A", {})], 1),
        result("t-1", "a", 2),
        assistant("m2", [use("t-1", "A", {})], 3),
    ])
    assert message == "line 4: content[0]: duplicate tool_use id (first used on line 2)"


def test_duplicate_tool_result_id_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, [
        user("Go", 0), assistant("m1", [use("t-1", "A", {})], 1), result("t-1", "a", 2), result("t-1", "b", 3),
    ])
    assert message == "line 4: content[0]: duplicate tool_result for one tool_use (first on line 3)"


def test_unknown_tool_result_id_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, [user("Go", 0), result(f"t-{SECRET}", "a", 1), assistant("m1", [text("x")], 2)])
    assert message == "line 2: a tool_result answers an unknown tool_use id"


def test_missing_result_in_a_non_final_turn_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, [
        user("Go", 0), assistant("m1", [use("t-1", "A", {})], 1), user("never mind", 2),
        assistant("m2", [text("ok")], 3),
    ])
    assert message.startswith("line 2: a tool_use of this turn has no tool_result")


def test_tool_use_without_a_name_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, [user("Go"), assistant("m1", [{"type": "tool_use", "id": "t-1"}])])
    assert message == "line 2: content[0]: a tool_use needs a non-empty string `name`"


@pytest.mark.parametrize("lines", [[], [""], [{"type": "system", "timestamp": T0}]])
def test_no_messages_is_an_error(tmp_path: Path, lines: list[Any]) -> None:
    assert "no user or assistant messages" in error_of(tmp_path, lines)


# ---------------------------------------------------------------------------------------------------------
# Streaming


def test_progress_reports_every_byte_read(tmp_path: Path) -> None:
    path = write(tmp_path, [user("Go", 0), "", assistant("m1", [text("ok")], 1)])
    seen: list[int] = []
    import_claude_code(path, progress=seen.append)
    assert sum(seen) == path.stat().st_size


def test_lone_surrogates_in_a_line_still_import(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    line = json.dumps(user("bad \ud800 char"))
    path.write_text(line + "\n" + json.dumps(assistant("m", [text("ok")], 1)) + "\n")
    cassette = import_claude_code(path)
    assert cassette.steps[0].payload["messages"][0]["content"] == "bad \ud800 char"
    assert chain_break(cassette) is None


@pytest.mark.parametrize("where", ["input", "result"])
def test_a_number_too_large_for_json_is_one_line_naming_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    """JSON.parse reads -1e400 as -Infinity, which no cassette can hold: one line, no traceback, nothing written."""
    from tests.cli_helpers import run_cli

    tool_input = '{"city": "Paris", "limit": -1e400}' if where == "input" else '{"city": "Paris"}'
    content = '{"temp": -1e400}' if where == "result" else "sunny"
    lines = [json.dumps(user("weather?")),
             f'{{"type": "assistant", "timestamp": "{at(1)}", "message": {{"id": "m1", "role": "assistant", '
             f'"content": [{{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {tool_input}}}]}}}}',
             json.dumps(result("t1", content, 2)),
             json.dumps(assistant("m2", [text("done")], 3))]
    path = write(tmp_path, lines)
    line = 2 if where == "input" else 3
    assert error_of(tmp_path, lines).startswith(f"line {line}: a number JSON cannot write")
    code, out, err = run_cli(capsys, "import", "--from", "claude-code", "--in", path, "--out", tmp_path / "o.json")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and f"line {line}: a number JSON cannot write" in err
    assert not (tmp_path / "o.json").exists()
