"""verify (docs/format.md, "Verify"): every fixture passes; any changed byte of a hashed field fails at its step;
neutrality."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.canonical import json_value
from blackbox.format.cassette import Cassette, StepChain, load
from blackbox.format.verify import neutrality_problem, verify
from blackbox.format.writing import dumps
from tests.conftest import FIXTURES

CASSETTES = sorted(p for p in FIXTURES.rglob("*.json") if "inputs" not in p.parts and "foreign" not in p.name)
NO_ENV: dict[str, str] = {}


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.name)
def test_every_fixture_verifies(path: Path) -> None:
    report = verify(path, env=NO_ENV)
    assert report.ok, report.failure
    assert [c.name for c in report.checks] == ["schema_version", "hash_chain", "provider_neutrality",
                                               "replayability"]


def _tamper(doc: dict[str, Any], i: int, field: str) -> None:
    step = doc["steps"][i]
    if field == "payload":
        text = json.dumps(step["payload"], ensure_ascii=False)
        pos = next(m.start() for m in re.finditer(r"[A-Za-z0-9]", text))  # first letter or digit: a value or key
        ch = text[pos]
        step["payload"] = json.loads(text[:pos] + ("b" if ch == "a" else "a") + text[pos + 1:])
    elif field == "timestamp":
        step["timestamp"] += 1
    elif field == "index":
        step["index"] += 1
    elif field == "prevHash":
        h = step["prevHash"]
        step["prevHash"] = "0" * 64 if h is None else ("1" if h[0] == "0" else "0") + h[1:]


@pytest.mark.parametrize("name", ["traces/fork-parent.v2.json", "traces/fork-child.v2.json",
                                  "fleet-triage/cassettes/triage-incident.json",
                                  "import/claude-code-session.expected.json"])
@pytest.mark.parametrize("field", ["payload", "timestamp", "index", "prevHash"])
def test_any_change_fails_at_that_step(tmp_path: Path, name: str, field: str) -> None:
    original = json.loads((FIXTURES / name).read_text())
    for i in range(len(original["steps"])):
        doc = json.loads(json.dumps(original))
        _tamper(doc, i, field)
        path = tmp_path / f"{i}.json"
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        report = verify(path, env=NO_ENV)
        assert not report.ok
        assert report.failure is not None
        assert (report.failure.name, report.failure.step) == ("hash_chain", i), (i, report.failure)
        assert [c.status for c in report.checks[2:]] == ["skip", "skip"]


def test_a_changed_byte_in_the_file_fails(tmp_path: Path) -> None:
    data = (FIXTURES / "traces/success-tool-use.v2.json").read_bytes()
    pos = data.index(b"weekend hotels")
    path = tmp_path / "t.json"
    path.write_bytes(data[:pos] + b"W" + data[pos + 1:])
    report = verify(path, env=NO_ENV)
    assert report.failure is not None and report.failure.name == "hash_chain"


def _cassette(*payloads: tuple[str, Any]) -> Cassette:
    chain = StepChain("t")
    for type_, payload in payloads:
        chain.append(type_, 0, json_value(payload))  # type: ignore[arg-type]
    return chain.cassette(0)


DONE = ("metadata", {"event": "run_completed", "status": "success", "result": "ok"})


def _neutrality(payload: Any, env: dict[str, str] | None = None) -> str | None:
    report = verify(_cassette(("tool_result", payload), DONE), env=env or NO_ENV)
    failure = report.failure
    if failure is None:
        return None
    assert failure.name == "provider_neutrality", failure
    return failure.detail


def test_usage_under_user_data_passes_but_in_metadata_fails() -> None:
    assert _neutrality({"toolCallId": "call-0", "toolName": "t", "result": {"usage": 42}}) is None
    report = verify(_cassette(("metadata", {"event": "x", "usage": {"input_tokens": 3}})), env=NO_ENV)
    assert report.failure is not None and report.failure.name == "provider_neutrality"
    assert report.failure.step == 0 and "usage" in report.failure.detail


@pytest.mark.parametrize("key", ["usage", "stop_reason", "stop_sequence", "finish_reason", "system_fingerprint",
                                 "ANTHROPIC_API_KEY", "OPENAI_API_KEY"])
def test_flagged_keys_outside_user_data(key: str) -> None:
    assert _neutrality({"toolCallId": "call-0", "toolName": "t", key: 1, "result": 1}) is not None
    assert _neutrality({"toolCallId": "call-0", "toolName": "t", "result": {key: 1}}) is None


@pytest.mark.parametrize("text", ["toolu_01abc9", "msg_01XyZ5", "call_" + "a" * 20, "chatcmpl-abcdefgh",
                                  "resp_" + "a" * 16, "sk-ant-x", "sk-proj-x", "sk-" + "a" * 20,
                                  "Bearer " + "a" * 16, "uses ANTHROPIC_API_KEY"])
def test_provider_ids_and_credentials_outside_user_data(text: str) -> None:
    assert _neutrality({"toolCallId": "call-0", "toolName": text, "result": 1}) is not None
    assert _neutrality({"toolCallId": "call-0", "toolName": "t", "result": 1, text: 1}) is not None


@pytest.mark.parametrize("text", ["call-12", "toolu_abc", "xmsg_1", "call_short", "sk-short", "Bearer short",
                                  "resp_abc"])
def test_near_misses_pass(text: str) -> None:
    assert _neutrality({"toolCallId": "call-0", "toolName": text, "result": 1}) is None


def test_inside_user_data_only_realistic_credentials() -> None:
    for text in ("toolu_01abc9", "msg_01", "sk-ant-x", "ANTHROPIC_API_KEY", "sk-" + "a" * 31):
        assert _neutrality({"toolCallId": "call-0", "toolName": "t", "result": text}) is None
    for text in ("sk-ant-" + "a" * 20, "sk-proj-" + "b" * 20, "sk-" + "c" * 32, "Bearer\t" + "d" * 16):
        detail = _neutrality({"toolCallId": "call-0", "toolName": "t", "result": {"x": [text]}})
        assert detail is not None and "payload.result.x[0]" in detail and text not in detail


def test_env_key_value_is_reported_never_echoed() -> None:
    env = {"ANTHROPIC_API_KEY": "hunter2-secret"}
    detail = _neutrality({"toolCallId": "call-0", "toolName": "t", "result": "key hunter2-secret"}, env)
    assert detail is not None and "<api-key-value>" in detail and "hunter2" not in detail
    short = {"ANTHROPIC_API_KEY": "short"}
    assert _neutrality({"toolCallId": "call-0", "toolName": "t", "result": "short"}, short) is None


def test_ids_outside_payloads_are_checked() -> None:
    c = _cassette(DONE)
    c.id = "msg_01abc5"
    report = verify(c, env=NO_ENV)
    assert report.failure is not None and report.failure.name == "provider_neutrality"


def test_precise_walk_directly() -> None:
    assert neutrality_problem({"a": {"content": {"usage": 1}}}, []) is None
    assert neutrality_problem({"a": [{"usage": 1}]}, [], "payload") == \
        "payload.a[0].usage: the provider-specific key `usage`"


def test_replayability_success_must_be_last() -> None:
    report = verify(_cassette(DONE, ("model_input", {"messages": [], "tools": []})), env=NO_ENV)
    assert report.failure is not None and report.failure.name == "replayability" and report.failure.step == 0
    for incomplete in (_cassette(("model_input", {"messages": [], "tools": []})), _cassette()):
        assert verify(incomplete, env=NO_ENV).ok


def test_schema_version_of_an_in_memory_cassette() -> None:
    c = _cassette(DONE)
    c.version = 3
    report = verify(c, env=NO_ENV)
    assert report.failure is not None and report.failure.name == "schema_version"
    assert [x.status for x in report.checks] == ["fail", "skip", "skip", "skip"]
    assert report.to_dict()["failure"]["advice"]


def test_report_to_dict_is_json() -> None:
    report = verify(load(CASSETTES[0]), env=NO_ENV)
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True


def _escaped_file(tmp_path: Path, payload: dict[str, Any], literal: str) -> Path:
    """A valid cassette file whose `literal` is written with its first letter as a \\u escape."""
    data = dumps(_cassette(("metadata", payload)))
    escaped = f"\\u{ord(literal[0]):04x}{literal[1:]}".encode()
    assert literal.encode() in data
    path = tmp_path / "escaped.json"
    path.write_bytes(data.replace(literal.encode(), escaped))
    assert literal.encode() not in path.read_bytes() and verify(path, env=NO_ENV).checks[1].status == "pass"
    return path


@pytest.mark.parametrize(("payload", "literal"), [
    ({"event": "x", "usage": 1}, "usage"),
    ({"event": "toolu_01abc9"}, "toolu_"),
    ({"event": "x", "result": "Bearer " + "t" * 16}, "Bearer"),
])
def test_a_literal_behind_a_unicode_escape_still_fails(tmp_path: Path, payload: dict[str, Any], literal: str) -> None:
    report = verify(_escaped_file(tmp_path, payload, literal), env=NO_ENV)
    assert report.failure is not None and report.failure.name == "provider_neutrality"


def test_the_first_problem_in_step_order_is_reported() -> None:
    clean = ("tool_result", {"toolCallId": "call-0", "toolName": "t", "result": {"usage": 1, "id": "msg_01x9"}})
    credential = ("tool_result", {"toolCallId": "call-1", "toolName": "t", "result": "sk-" + "c" * 32})
    provider = ("metadata", {"event": "x", "finish_reason": "stop"})
    near_miss = ("tool_result", {"toolCallId": "call-2", "toolName": "t", "result": "sk-short Bearer x"})
    for order, expected in (((clean, provider, credential), 1), ((clean, credential, provider), 1),
                            ((near_miss, clean, provider), 2)):
        report = verify(_cassette(*order), env=NO_ENV)
        assert report.failure is not None and report.failure.step == expected, order
    report = verify(_cassette(clean, clean, DONE), env=NO_ENV)
    assert report.ok, report.failure


def test_skeleton_strings_in_lists_and_keys_are_checked() -> None:
    assert _neutrality({"toolCallId": "call-0", "toolName": "t", "tags": ["ok", ["chatcmpl-abcdefgh"]],
                        "result": 1}) is not None
    assert _neutrality({"toolCallId": "call-0", "toolName": "t", "nested": {"resp_" + "a" * 16: 1},
                        "result": 1}) is not None
    env = {"OPENAI_API_KEY": "k3y-value-123"}
    detail = _neutrality({"toolCallId": "call-0", "toolName": "t", "result": {"k3y-value-123": 1}}, env)
    assert detail is not None and "<api-key-value>" in detail


_CLEAN = ("tool_result", {"toolCallId": "call-0", "toolName": "t", "result": {"usage": 1, "id": "msg_01x9"}})
_SAME_REPORT_CASES = {
    "clean": (_CLEAN, ("tool_call", {"toolCallId": "call-1", "toolName": "t", "toolInput": {"q": 0.5}}), DONE),
    "credential": (_CLEAN, ("tool_result", {"toolCallId": "c", "toolName": "t", "result": "sk-" + "c" * 32}), DONE),
    "provider_key": (_CLEAN, ("model_output", {"type": "final_answer", "text": "x", "stop_reason": "end"}), DONE),
    "provider_id_in_skeleton": (("model_output", {"type": "tool_calls", "calls": [
        {"toolCallId": "toolu_01abcdefgh", "toolName": "t", "toolInput": {}}]}), DONE),
    "env_key": (_CLEAN, ("model_input", {"messages": [], "note": "k3y-value-123"}), DONE),
    "done_not_last": (DONE, ("model_input", {"messages": [], "tools": []})),
    "unsummarizable": (("model_output", {"type": "tool_calls", "calls": 5}), DONE),
    "unsummarizable_tool_call": (("tool_call", {"toolCallId": "c", "toolName": "t"}),
                                 ("metadata", {"event": "run_failed", "reason": {"nested": [1]}})),
    "incomplete": (_CLEAN, ("model_input", {"messages": [{"role": "user", "content": "hi"}], "tools": []})),
}


@pytest.mark.parametrize("name", sorted(_SAME_REPORT_CASES))
def test_a_path_verifies_exactly_as_the_loaded_cassette(tmp_path: Path, name: str) -> None:
    """verify(path) drops payloads during its pass (it owns the cassette); the report must not change."""
    cassette = _cassette(*_SAME_REPORT_CASES[name])
    path = tmp_path / "c.json"
    path.write_bytes(dumps(cassette))
    env = {"OPENAI_API_KEY": "k3y-value-123"}
    from_path = verify(path, env=env).to_dict()
    assert from_path.pop("path") == str(path)
    in_memory = verify(load(path), env=env).to_dict()
    in_memory.pop("path")
    assert from_path == in_memory


def test_a_result_holding_floats_verifies_in_memory_and_from_the_file(tmp_path: Path) -> None:
    """The outcome text of a final result with floats is printed the JavaScript way, never a TypeError."""
    from blackbox.format.canonical import json_value
    from blackbox.format.cassette import StepChain, save
    from blackbox.format.outcome import outcome

    chain = StepChain("floats")
    chain.append("metadata", 0, json_value({"event": "run_completed", "status": "success",
                                            "result": {"score": 0.5, "big": 1e21, "whole": 2.0}}))
    cassette = chain.cassette(0)
    path = tmp_path / "floats.json"
    save(cassette, path)
    assert verify(cassette).ok and verify(path).ok
    assert outcome(cassette).final_answer == '{"score":0.5,"big":1e+21,"whole":2}'


@pytest.mark.parametrize("field", ["parentId", "forkedFromStepId"])
@pytest.mark.parametrize(("value", "words"), [("msg_01abc5", "Anthropic message id"),
                                              ("fork-of-k3y-value-123", "<api-key-value>")])
def test_the_fork_ids_are_scanned_for_keys_and_provider_ids(tmp_path: Path, field: str, value: str,
                                                            words: str) -> None:
    """A fork's `parentId` and `forkedFromStepId` are strings a cassette holds outside its payloads: a provider
    id or a key in them fails provider_neutrality, in memory and read from the file (the lazy pass)."""
    cassette = _cassette(DONE)
    cassette.parentId, cassette.forkedFromStepId = "parent-run", "parent-run:0"
    setattr(cassette, field, value)
    env = {"OPENAI_API_KEY": "k3y-value-123"}
    path = tmp_path / "fork.json"
    path.write_bytes(dumps(cassette))
    for report in (verify(cassette, env=env), verify(path, env=env)):
        assert report.failure is not None and report.failure.name == "provider_neutrality", report.to_dict()
        assert report.failure.detail is not None and report.failure.detail.startswith(f"{field}: ")
        assert words in report.failure.detail and "k3y-value" not in report.failure.detail
    setattr(cassette, field, "parent-run" if field == "parentId" else "parent-run:0")
    assert verify(cassette, env=env).ok
