"""What a backend can show of an export with --content, without a backend: every content attribute of every span
held to the GenAI conventions' JSON schemas (every field they require, stated here as a schema of our own, part
by part) and to the rules Phoenix reads them by; and the timeline a backend draws (parents, nesting, the order
of spans that start in the same millisecond at the microsecond precision Phoenix keeps).

Phoenix itself (`arize-phoenix`) pins `anthropic<2` against this suite's `anthropic>=2.15` and is ~850 MB, so it
is not in a test extra; what it does with these attributes was checked by hand (the lead's report says how).
Its GenAI → OpenInference conversion: a list attribute that fails its schema is dropped whole (one output
message without `finish_reason` and the model's reply is gone); a part that fails its own type's schema is
taken as a generic part and not shown (a `tool_call` without a string `name`); a message holding a
`tool_call_response` shows that one response and nothing else of the message; a tool span's arguments show
as its parameters when they parse as a JSON object.

The cassettes: the demo's run, its error run and a fork of it, the examples/ recordings, the original tool's
fixtures, the fleet-triage runs, a run of a real MCP server (stdio) recorded here against the fake API, and a
run with a round of two results (one of them a tool's error).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import blackbox
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI, weather_brain
from tests.mcp_servers import stdio_params
from tests.test_export_otlp import rich_cassette

pytest.importorskip("opentelemetry.sdk")
pytest_plugins = ["tests.conftest_fakeapi"]

ROOT = Path(__file__).resolve().parent.parent
US = 1_000  # nanoseconds in a microsecond

_NULLABLE_STRING = {"type": ["string", "null"]}
# Each part type's required fields, as the conventions' schemas require them (gen-ai-input-messages.json,
# gen-ai-output-messages.json, gen-ai-system-instructions.json). The conventions also allow any other type as a
# generic part; a known type that lacks its fields would pass as one there, and be silently not shown.
_PART_RULES = {
    "text": {"required": ["content"], "properties": {"content": {"type": "string"}}},
    "reasoning": {"required": ["content"], "properties": {"content": {"type": "string"}}},
    "tool_call": {"required": ["name"], "properties": {"id": _NULLABLE_STRING, "name": {"type": "string"}}},
    "tool_call_response": {"required": ["response"], "properties": {"id": _NULLABLE_STRING}},
    "blob": {"required": ["modality", "content"], "properties": {"content": {"type": "string"}}},
    "file": {"required": ["modality", "file_id"], "properties": {"file_id": {"type": "string"}}},
    "uri": {"required": ["modality", "uri"], "properties": {"uri": {"type": "string"}}},
    "server_tool_call": {"required": ["name", "server_tool_call"], "properties": {"name": {"type": "string"}}},
    "server_tool_call_response": {"required": ["server_tool_call_response"]},
}
PART = {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}},
        "allOf": [{"if": {"properties": {"type": {"const": kind}}}, "then": rule}
                  for kind, rule in _PART_RULES.items()]}
MESSAGE = {"type": "object", "required": ["role", "parts"],
           "properties": {"role": {"enum": ["system", "user", "assistant", "tool"]},
                          "parts": {"type": "array", "items": PART}, "name": _NULLABLE_STRING}}
SCHEMAS = {
    "gen_ai.input.messages": {"type": "array", "items": MESSAGE},
    "gen_ai.output.messages": {"type": "array", "items": {**MESSAGE, "required": ["role", "parts", "finish_reason"],
                                                          "properties": {**MESSAGE["properties"], "finish_reason": {
                                                              "enum": ["stop", "length", "content_filter",
                                                                       "tool_call", "error"]}}}},
    "gen_ai.system_instructions": {"type": "array", "items": PART},
    "gen_ai.tool.definitions": {"type": "array", "items": {
        "type": "object", "required": ["type", "name"],
        "properties": {"type": {"type": "string"}, "name": {"type": "string"}, "description": _NULLABLE_STRING,
                       "parameters": {"type": ["object", "null"]}}}},
}


def _value(value: dict[str, Any]) -> Any:
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values", [])]
    if "intValue" in value:
        return int(value["intValue"])
    return next(iter(value.values()))


def traces_of(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The OTLP JSON file's spans by trace id, each with its attributes as a plain dict (`attrs`)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attrs"] = {a["key"]: _value(a["value"]) for a in span["attributes"]}
                out.setdefault(span["traceId"], []).append(span)
    return out


def problems(spans: list[dict[str, Any]]) -> list[str]:
    """What a backend would not show, or show wrong, in one trace: each problem as `span name: what`."""
    found: list[str] = []
    [root] = [s for s in spans if "parentSpanId" not in s]
    for span in spans:
        where, a = span["name"], span["attrs"]
        for key, schema in SCHEMAS.items():
            if key in a:
                try:
                    jsonschema.validate(json.loads(a[key]), schema)
                except jsonschema.ValidationError as exc:
                    found.append(f"{where}: {key} {exc.message} at {list(exc.absolute_path)}")
                    continue
                for message in json.loads(a[key]) if key.endswith("messages") else []:
                    kinds = [p["type"] for p in message["parts"]]
                    if "tool_call_response" in kinds and len(kinds) > 1:  # Phoenix shows one response a message
                        found.append(f"{where}: a {message['role']} message holds {kinds}")
        if a["gen_ai.operation.name"] == "chat" and "gen_ai.response.finish_reasons" in a:
            replies = json.loads(a.get("gen_ai.output.messages", "[]"))
            if not replies or not replies[0]["parts"]:
                found.append(f"{where}: no reply shown")
            elif [r.get("finish_reason") for r in replies] != a["gen_ai.response.finish_reasons"]:
                found.append(f"{where}: the reply's finish_reason is not the span's finish reasons")
        if a["gen_ai.operation.name"] == "execute_tool":
            if not isinstance(json.loads(a["gen_ai.tool.call.arguments"]), dict | None):
                found.append(f"{where}: arguments that are not an object")
            if "gen_ai.tool.call.result" not in a and a.get("error.type") != "incomplete":
                found.append(f"{where}: no result")
        if span is not root:
            if span["parentSpanId"] != root["spanId"]:
                found.append(f"{where}: not a child of the run")
            if not int(root["startTimeUnixNano"]) <= int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"]) \
                    <= int(root["endTimeUnixNano"]):
                found.append(f"{where}: outside the run's time")
    children = [s for s in spans if s is not root]
    shown = sorted(children, key=lambda s: int(s["startTimeUnixNano"]) // US)  # the order at Phoenix's precision
    if [s["attrs"]["blackbox.step.index"] for s in shown] != sorted(s["attrs"]["blackbox.step.index"] for s in spans
                                                                    if s is not root):
        found.append("the spans sorted by start time are not in the run's order")
    if len({int(s["startTimeUnixNano"]) // US for s in children}) != len(children):
        found.append("two spans start in the same microsecond (a backend may show them in either order)")
    return found


def _mcp_run(fake: FakeAPI, out: Path) -> None:
    """A raw MCP ClientSession on the real weather server over stdio, the model on the fake API."""
    from mcp import stdio_client

    from tests.test_mcp_sessions import raw_agent

    fake.brain = weather_brain("anthropic", text=None)
    bb = blackbox.session("record", out=out)
    bb.finish(asyncio.run(raw_agent(bb, fake, stdio_client(stdio_params()))))


@pytest.fixture
def runs(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_api: FakeAPI) -> Path:
    """A folder of every kind of cassette a user exports."""
    runs = tmp_path / "runs"
    assert run_cli(capsys, "demo", "--out-dir", runs / "demo")[0] == 0
    code, _, err = run_cli(capsys, "demo", "fork", "--trace", runs / "demo" / "example-trace.json", "--out",
                           runs / "demo" / "fork.json")
    assert code == 0, err
    for source in [*ROOT.glob("examples/*.json"), *ROOT.glob("tests/fixtures/traces/*.json"),
                   *ROOT.glob("tests/fixtures/fleet-triage/cassettes/*.json")]:
        shutil.copy(source, runs / source.name)
    rich_cassette(runs / "round.json")
    _mcp_run(fake_api, runs / "mcp.json")
    return runs


def test_every_exported_message_tool_and_timeline_is_one_a_backend_shows(
        runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "export", runs, "--to", "otlp-json", "--out", tmp_path / "all.json", "--content")
    assert code == 0, err
    traces = traces_of(json.loads((tmp_path / "all.json").read_text()))
    assert len(traces) == len(list(runs.rglob("*.json")))
    found = {root["attrs"]["blackbox.cassette.id"]: problems(spans)
             for spans in traces.values() for root in spans if "parentSpanId" not in root}
    assert {run: p for run, p in found.items() if p} == {}

    by_run = {spans[0]["attrs"]["blackbox.cassette.id"]: spans for spans in traces.values()}
    # what the checks above walked through: every kind of span and message they judge
    kinds = {(s["attrs"]["gen_ai.operation.name"], s["attrs"].get("gen_ai.tool.type"), s.get("status", {}).get("code"))
             for spans in traces.values() for s in spans}
    assert {("chat", None, None), ("execute_tool", "function", None), ("execute_tool", "function", 2),
            ("execute_tool", "extension", None), ("invoke_agent", None, 2)} <= kinds
    demo = sorted(by_run["example-run-001"][1:], key=lambda s: int(s["startTimeUnixNano"]))
    assert [s["name"] for s in demo] == ["chat", "execute_tool search", "chat", "execute_tool calendar", "chat",
                                         "execute_tool booking", "chat"]  # recorded within one millisecond
    round_input = json.loads(by_run["weather-run"][4]["attrs"]["gen_ai.input.messages"])
    assert [(m["role"], m["parts"][0]["type"]) for m in round_input[2:]] == [("tool", "tool_call_response")] * 2


def test_the_checks_catch_what_a_backend_would_not_show() -> None:
    """The rules above, each against the content that broke it (so a check that cannot fail fails here)."""
    def chat(**attrs: Any) -> list[dict[str, Any]]:
        root = {"name": "invoke_agent", "spanId": "r", "startTimeUnixNano": "0", "endTimeUnixNano": "9000",
                "attrs": {"gen_ai.operation.name": "invoke_agent"}}
        span = {"name": "chat", "spanId": "c", "parentSpanId": "r", "startTimeUnixNano": "1000",
                "endTimeUnixNano": "2000", "attrs": {"gen_ai.operation.name": "chat", "blackbox.step.index": 0,
                                                     "gen_ai.response.finish_reasons": ["stop"], **attrs}}
        return [root, span]

    reply = [{"role": "assistant", "parts": [{"type": "text", "content": "Hi."}], "finish_reason": "stop"}]
    assert problems(chat(**{"gen_ai.output.messages": json.dumps(reply)})) == []
    no_reason = [{k: v for k, v in reply[0].items() if k != "finish_reason"}]
    nameless = [{**reply[0], "parts": [{"type": "tool_call", "id": "c1", "arguments": {}}]}]
    two_results = [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "a", "response": 1},
                                              {"type": "tool_call_response", "id": "b", "response": 2}]}]
    assert "'finish_reason' is a required property" in problems(chat(**{
        "gen_ai.output.messages": json.dumps(no_reason)}))[0]
    assert "'name' is a required property" in problems(chat(**{"gen_ai.output.messages": json.dumps(nameless)}))[0]
    assert "holds ['tool_call_response', 'tool_call_response']" in problems(chat(**{
        "gen_ai.output.messages": json.dumps(reply), "gen_ai.input.messages": json.dumps(two_results)}))[0]
    assert problems(chat()) == ["chat: no reply shown"]
    late = chat(**{"gen_ai.output.messages": json.dumps(reply)})
    late[1]["endTimeUnixNano"] = "9999"
    assert problems(late) == ["chat: outside the run's time"]
