"""What-if without the agent: blackbox.fork.whatif against the demo, the fleet-triage incident and an imported Claude
Code session, scripted and live (the tests' fake API speaking the providers' HTTP), and `fork --model-only`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blackbox.cli import app
from blackbox.demo import demo_pair
from blackbox.errors import UsageError
from blackbox.fork.whatif import NO_RESULT, LiveModel, ScriptedModel, WhatIfError, what_if
from blackbox.format.cassette import Cassette, load, save
from blackbox.format.diff import diff
from blackbox.format.verify import verify
from blackbox.importers.claude_code import import_claude_code
from blackbox.providers import anthropic, for_model, openai_chat
from blackbox.providers.neutral import CallIds
from blackbox.providers.outgoing import PERMISSIVE_SCHEMA
from tests.conftest import FIXTURES
from tests.fakeapi import anthropic_message, chat_completion

pytest_plugins = ["tests.conftest_fakeapi"]

INCIDENT = FIXTURES / "fleet-triage" / "cassettes" / "triage-incident.json"
CLAUDE_CODE = FIXTURES / "import" / "claude-code-session.jsonl"
NO_HOTELS = {"results": [], "available": False}


@pytest.fixture
def demo(tmp_path: Path) -> Cassette:
    parent, _ = demo_pair(tmp_path)
    return load(parent)


def assert_a_real_fork(parent: Cassette, fork: Cassette, at: int) -> None:
    """Prefix verbatim, the parent link, verifies, and diff says it diverges exactly at the fork point."""
    assert [s.hash for s in fork.steps[:at]] == [s.hash for s in parent.steps[:at]]
    assert fork.parentId == parent.id and fork.forkedFromStepId == parent.steps[at].id
    assert fork.createdAt == parent.createdAt
    report = verify(fork)
    assert report.ok, report.failure
    assert diff(parent, fork).first_divergence == at


def test_scripted_continuation_of_the_demo_serves_recorded_results(demo: Cassette) -> None:
    replies = [{"type": "tool_call", "toolName": "calendar", "toolInput": {"date": "2024-03-15"}},
               {"type": "final_answer", "text": "No hotels that weekend."}]
    fork, reason = what_if(demo, 3, NO_HOTELS, ScriptedModel(replies), trace_id="wi")
    assert reason == "final answer"
    assert_a_real_fork(demo, fork, 3)
    assert fork.steps[3].payload["result"] == NO_HOTELS
    # the next request is the recorded one, with the new value in its history
    request = fork.steps[4].payload
    assert request["messages"][:-1] == demo.steps[4].payload["messages"][:-1]
    assert NO_HOTELS in [part.get("result") for part in request["messages"][-1]["content"]]
    # calendar with the recorded input: the recorded result, and a fresh call id past the prefix's
    assert fork.steps[5].payload["calls"][0]["toolCallId"] == "call-1"
    assert fork.steps[7].payload["result"] == demo.steps[7].payload["result"]
    assert fork.steps[-1].payload == {"event": "run_completed", "status": "success",
                                      "result": "No hotels that weekend."}


def test_a_call_the_parent_never_made_stops_incomplete_or_takes_the_given_result(demo: Cassette) -> None:
    replies = [{"type": "tool_call", "toolName": "search", "toolInput": {"query": "hostels"}},
               {"type": "final_answer", "text": "Found a hostel."}]
    fork, reason = what_if(demo, 3, NO_HOTELS, ScriptedModel(replies), trace_id="wi",
                           tool_results=lambda call: NO_RESULT)
    assert fork.steps[-1].type == "tool_call" and "never made: search" in reason
    assert verify(fork).ok
    asked: list[dict] = []
    fork, reason = what_if(demo, 3, NO_HOTELS, ScriptedModel(replies), trace_id="wi",
                           tool_results=lambda call: asked.append(call) or {"hits": ["Hostel Alba"]})
    assert asked[0]["toolName"] == "search" and asked[0]["toolInput"] == {"query": "hostels"}
    assert fork.steps[7].payload["result"] == {"hits": ["Hostel Alba"]}
    assert reason == "final answer"
    assert_a_real_fork(demo, fork, 3)


def test_scripted_replies_that_run_out_say_so(demo: Cassette) -> None:
    replies = [{"type": "tool_call", "toolName": "calendar", "toolInput": {"date": "2024-03-15"}}]
    with pytest.raises(WhatIfError, match="scripted replies ran out after 1"):
        what_if(demo, 3, NO_HOTELS, ScriptedModel(replies), trace_id="wi")


def test_live_anthropic_continuation_sends_the_recorded_history_with_the_new_value(fake_api, monkeypatch) -> None:
    parent = load(INCIDENT)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-whatif-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    fake_api.queue(anthropic_message(text="The reading is normal now; no work order needed."))
    new_value = {"data": [{"dp": {"value": "35"}}]}
    fork, reason = what_if(parent, 5, new_value, LiveModel("anthropic"), trace_id="live")
    assert reason == "final answer"
    assert_a_real_fork(parent, fork, 5)
    (request,) = fake_api.requests
    assert request.path == "/v1/messages" and request.header("x-api-key") == "sk-ant-whatif-test"
    assert request.body["model"] == "claude-haiku-4-5"
    results = [b for m in request.body["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b["type"] == "tool_result"]
    assert json.loads(results[-1]["content"]) == new_value  # the edited value, as the text the API takes
    assert fork.steps[-2].payload == {"type": "final_answer",
                                      "text": "The reading is normal now; no work order needed."}
    assert "sk-ant-whatif-test" not in json.dumps([s.payload for s in fork.steps])


def test_live_openai_continuation_with_a_tool_round(fake_api, monkeypatch, demo: Cassette) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-whatif-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_api.openai_url)
    fake_api.queue(chat_completion(tool_calls=[("calendar", {"date": "2024-03-15"})]),
                   chat_completion(content="Nothing available; I did not book."))
    fork, reason = what_if(demo, 3, NO_HOTELS, LiveModel("openai"), trace_id="live", model_name="gpt-5.1")
    assert reason == "final answer"
    assert_a_real_fork(demo, fork, 3)
    first, second = fake_api.bodies()
    assert first["model"] == "gpt-5.1" and first["tools"][0]["type"] == "function"
    # the served calendar result went back to the model as a tool message for the call it made
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[-1]["content"]) == demo.steps[7].payload["result"]
    assert second["messages"][-2]["tool_calls"][0]["id"] == tool_messages[-1]["tool_call_id"]


def test_imported_claude_code_session_gets_permissive_tool_schemas(fake_api, monkeypatch) -> None:
    parent = import_claude_code(CLAUDE_CODE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-whatif-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    fake_api.queue(anthropic_message(text="With VAT included the totals match; the test passes."))
    fork, _ = what_if(parent, 3, {"EU": {"vatIncluded": True, "rate": 0.2}}, LiveModel("anthropic"),
                      trace_id="cc", model_name="claude-sonnet-4-5")
    assert_a_real_fork(parent, fork, 3)
    body = fake_api.bodies()[0]
    assert body["model"] == "claude-sonnet-4-5"
    assert {tool["name"] for tool in body["tools"]} == {"Read", "Bash"}
    assert all(tool["input_schema"] == PERMISSIVE_SCHEMA for tool in body["tools"])
    # the Bash error result of the same turn is carried as recorded, marked as an error
    errors = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
              if b.get("is_error")]
    assert errors and "FAIL checkout.test.ts" in errors[0]["content"]


def test_a_missing_key_fails_before_anything_is_sent(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY is not set"):
        LiveModel("anthropic")


def test_an_api_error_is_reported_with_its_message(fake_api, monkeypatch, demo: Cassette) -> None:
    from tests.fakeapi import error_reply

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-whatif-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    fake_api.queue(error_reply("anthropic", 401, "invalid x-api-key"))
    with pytest.raises(WhatIfError, match="answered 401: invalid x-api-key"):
        what_if(demo, 3, NO_HOTELS, LiveModel("anthropic"), trace_id="e", model_name="claude-haiku-4-5")


def test_request_builders_and_provider_inference() -> None:
    payload = {"model": "claude-x", "systemPrompt": "Be brief.", "params": {"maxTokens": 50, "temperature": 0},
               "tools": [{"name": "t", "description": "d"}],
               "messages": [{"role": "user", "content": "hi"},
                            {"role": "assistant", "content": [{"type": "text", "text": "calling"},
                                                              {"type": "tool_use", "toolCallId": "call-0",
                                                               "toolName": "t", "toolInput": {"a": 1}}]},
                            {"role": "user", "content": [{"type": "tool_result", "toolCallId": "call-0",
                                                          "toolName": "t", "error": "boom"}]}]}
    a = anthropic.build_request(payload)
    assert a["system"] == "Be brief." and a["max_tokens"] == 50 and a["temperature"] == 0
    assert a["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "call-0", "content": "boom",
                                            "is_error": True}]
    o = openai_chat.build_request(payload)
    assert o["messages"][0] == {"role": "system", "content": "Be brief."}
    assert o["messages"][2]["tool_calls"][0]["function"] == {"name": "t", "arguments": '{"a":1}'}
    assert o["messages"][3] == {"role": "tool", "tool_call_id": "call-0", "content": "boom"}
    assert o["max_completion_tokens"] == 50 and "max_tokens" not in o  # one field: the API refuses both
    for body, normalize in ((a, anthropic.normalize_request), (o, openai_chat.normalize_request)):
        assert normalize(body, CallIds())["params"] == {"maxTokens": 50, "temperature": 0}  # what Blackbox reads back
    assert [getattr(for_model(m), "name", None) for m in ("claude-haiku-4-5", "gpt-5.1", "o3-mini", "llama3", None)] \
        == ["anthropic", "openai", "openai", None, None]


runner = CliRunner()


def test_cli_model_only_script(tmp_path: Path) -> None:
    parent, _ = demo_pair(tmp_path)
    replies = tmp_path / "replies.json"
    replies.write_text('[{"type": "final_answer", "text": "Nothing to book."}]', encoding="utf-8")
    out = tmp_path / "whatif.json"
    result = runner.invoke(app, ["fork", str(parent), "--at", "3", "--set", json.dumps(NO_HOTELS), "--out",
                                 str(out), "--model-only", "--script", str(replies)])
    assert result.exit_code == 0, result.stderr
    assert "without the agent: 7 steps, success" in result.stdout
    assert_a_real_fork(load(parent), load(out), 3)


def test_cli_model_only_live_without_a_key_is_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "whatif.json"
    result = runner.invoke(app, ["what-if", str(INCIDENT), "--at", "5", "--set", "{}", "--out", str(out),
                                 "--live"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ANTHROPIC_API_KEY is not set"), result.stderr
    assert not out.exists()


def test_cli_model_only_tool_results_file(tmp_path: Path) -> None:
    parent, _ = demo_pair(tmp_path)
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"type": "tool_call", "toolName": "search", "toolInput": {"query": "hostels"}},
                                   {"type": "final_answer", "text": "A hostel."}]), encoding="utf-8")
    results = tmp_path / "results.json"
    results.write_text('{"search": {"hits": ["Hostel Alba"]}}', encoding="utf-8")
    out = tmp_path / "whatif.json"
    args = ["fork", str(parent), "--at", "3", "--set", "{}", "--out", str(out), "--model-only", "--script",
            str(replies)]
    incomplete = runner.invoke(app, args)
    assert incomplete.exit_code == 0 and "incomplete" in incomplete.stdout
    assert "--tool-results" in incomplete.stderr
    done = runner.invoke(app, [*args, "--tool-results", str(results)])
    assert done.exit_code == 0 and "success" in done.stdout
    assert load(out).steps[7].payload["result"] == {"hits": ["Hostel Alba"]}
    save(load(out), tmp_path / "again.json")  # the fork is an ordinary cassette
