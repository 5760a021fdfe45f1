"""`blackbox export`: what the OTLP/HTTP exporter sends, decoded with opentelemetry-proto on a loopback
receiver, checked span by span (name, kind, attributes, parent, link, times) against the cassette; the OTLP
JSON file form against the same request; ids from the hashes; content only with --content, keys masked; folders;
and every failure as one line (exit 2 for a bad file or flag, 1 when the backend or the write fails), nothing
sent."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blackbox.exporters import content
from blackbox.format.cassette import Cassette, StepChain, Tokens, load, save
from tests.cli_helpers import run_cli
from tests.otlp_receiver import Receiver, attributes, spans_of
from tests.test_cli_json import validate

pytest.importorskip("opentelemetry.sdk")

MS = 1_000_000
KEY = "sk-ant-api03-" + "x" * 40
TOOLS = [{"name": "get_weather", "description": "Get the weather.", "inputSchema": {"type": "object"}},
         {"name": "forecast", "description": "A forecast."}]
CALLS = [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
         {"toolCallId": "call-1", "toolName": "forecast", "toolInput": {"city": "Rome"}}]


def rich_cassette(path: Path, result: str = "sunny") -> Cassette:
    """Two model calls (a Claude model, params, usage), a wrapped tool and a failing MCP tool, a success."""
    chain = StepChain("weather-run")
    first = {"messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS, "systemPrompt": "Be brief.",
             "model": "claude-sonnet-4-6", "params": {"maxTokens": 512, "temperature": 0.25, "stop": ["END"]}}
    chain.append("model_input", 1000, first)
    out = chain.append("model_output", 1250, {"type": "tool_calls", "calls": CALLS, "text": "Let me check."})
    out.tokens = Tokens(120, 30, cacheRead=100, cacheWrite=5, reasoning=7)
    chain.append("tool_call", 1300, CALLS[0])
    chain.append("tool_result", 1400, {"toolCallId": "call-0", "toolName": "get_weather", "result": result})
    chain.append("tool_call", 1420, {**CALLS[1], "mcp": {"server": "weather", "method": "tools/call"}})
    chain.append("tool_result", 1500, {"toolCallId": "call-1", "toolName": "forecast", "error": "boom",
                                       "mcp": {"error": {"code": -32000, "message": "boom"}}})
    history = [{"role": "user", "content": "Weather?"},
               {"role": "assistant", "content": [{"type": "text", "text": "Let me check."},
                                                 *({"type": "tool_use", **c} for c in CALLS)]},
               {"role": "user", "content": [
                   {"type": "tool_result", "toolCallId": "call-0", "toolName": "get_weather", "result": result},
                   {"type": "tool_result", "toolCallId": "call-1", "toolName": "forecast", "error": "boom"}]}]
    chain.append("model_input", 1600, {**first, "messages": history})
    final = chain.append("model_output", 1900, {"type": "final_answer", "text": f"{result.title()} in Paris."})
    final.tokens = Tokens(200, 10)
    chain.append("metadata", 1900, {"event": "run_completed", "status": "success", "result": "Sunny in Paris."})
    cassette = chain.cassette(1000)
    save(cassette, path)
    return cassette


def export(capsys: pytest.CaptureFixture[str], receiver: Receiver, *args: object) -> list[Any]:
    code, _out, err = run_cli(capsys, "export", *args, "--endpoint", f"{receiver.url}/v1/traces")
    assert code == 0, err
    return [spans_of(r) for r in receiver.decoded()]


def test_every_span_name_kind_attribute_parent_and_time_follows_the_cassette(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassette = rich_cassette(tmp_path / "run.json")
    steps = cassette.steps
    with Receiver() as receiver:
        [spans] = export(capsys, receiver, tmp_path / "run.json")
    path, headers, _ = receiver.requests[0]
    assert path == "/v1/traces" and headers["content-type"] == "application/x-protobuf"
    root, chat1, tool1, tool2, chat2 = spans
    head = steps[-1].hash
    trace = hashlib.sha256(f"blackbox-otel\0trace\0weather-run\0{head}".encode()).digest()[:16]
    assert {s.trace_id for s in spans} == {trace}
    assert [s.name for s in spans] == ["invoke_agent", "chat claude-sonnet-4-6", "execute_tool get_weather",
                                       "execute_tool forecast", "chat claude-sonnet-4-6"]
    assert [s.kind for s in spans] == [1, 3, 1, 1, 3]  # INTERNAL, CLIENT
    assert root.parent_span_id == b"" and all(s.parent_span_id == root.span_id for s in spans[1:])
    assert len({s.span_id for s in spans}) == 5
    # each step's millisecond; a step after another of the same millisecond a microsecond later (the last two)
    assert [(s.start_time_unix_nano, s.end_time_unix_nano) for s in spans] == [
        (1000 * MS, 1900 * MS + 1000), (1000 * MS, 1250 * MS), (1300 * MS, 1400 * MS), (1420 * MS, 1500 * MS),
        (1600 * MS, 1900 * MS)]
    assert attributes(root) == {"gen_ai.operation.name": "invoke_agent", "blackbox.cassette.id": "weather-run",
                                "blackbox.cassette.head_hash": head, "blackbox.format_version": 2,
                                "blackbox.created_at": 1000, "openinference.span.kind": "AGENT"}
    definitions = json.dumps([{"type": "function", "name": "get_weather"}, {"type": "function", "name": "forecast"}],
                             separators=(",", ":"))
    assert attributes(chat1) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-6", "gen_ai.response.model": "claude-sonnet-4-6",
        "gen_ai.request.max_tokens": 512, "gen_ai.request.temperature": 0.25,
        "gen_ai.request.stop_sequences": ["END"], "gen_ai.tool.definitions": definitions,
        "gen_ai.response.finish_reasons": ["tool_call"],
        "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30,
        "gen_ai.usage.cache_read.input_tokens": 100, "gen_ai.usage.cache_creation.input_tokens": 5,
        "gen_ai.usage.reasoning.output_tokens": 7,
        "blackbox.step.index": 0, "blackbox.step.hash": steps[0].hash, "blackbox.output.step.hash": steps[1].hash}
    assert attributes(chat2)["gen_ai.response.finish_reasons"] == ["stop"]
    assert {k: v for k, v in attributes(chat2).items() if k.startswith("gen_ai.usage")} == {
        "gen_ai.usage.input_tokens": 200, "gen_ai.usage.output_tokens": 10}
    assert attributes(tool1) == {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                                 "gen_ai.tool.type": "function", "gen_ai.tool.call.id": "call-0",
                                 "blackbox.step.index": 2, "blackbox.step.hash": steps[2].hash,
                                 "blackbox.result.step.hash": steps[3].hash, "openinference.span.kind": "TOOL"}
    assert tool1.status.code == 0
    assert attributes(tool2) == {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "forecast",
                                 "gen_ai.tool.type": "extension", "gen_ai.tool.call.id": "call-1",
                                 "blackbox.mcp.server": "weather", "mcp.method.name": "tools/call",
                                 "blackbox.step.index": 4, "blackbox.step.hash": steps[4].hash,
                                 "blackbox.result.step.hash": steps[5].hash, "error.type": "-32000",
                                 "openinference.span.kind": "TOOL"}
    assert tool2.status.code == 2  # STATUS_CODE_ERROR
    no_content = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                  "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "input.value", "output.value")
    assert not any(key in attributes(s) for s in spans for key in no_content)


def test_content_only_with_the_flag_in_the_conventions_shapes_with_keys_masked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json", result=f"sunny {KEY}")
    with Receiver() as receiver:
        [spans] = export(capsys, receiver, tmp_path / "run.json", "--content")
    root, chat1, tool1, tool2, chat2 = spans
    a = attributes(chat1)
    # the root carries the run's request and answer (a backend's trace list shows them)
    assert {k: json.loads(v) for k, v in attributes(root).items() if k.startswith("gen_ai.") and k.endswith("s")} == {
        "gen_ai.system_instructions": [{"type": "text", "content": "Be brief."}],
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}],
        "gen_ai.output.messages": json.loads(attributes(chat2)["gen_ai.output.messages"])}
    assert json.loads(a["gen_ai.system_instructions"]) == [{"type": "text", "content": "Be brief."}]
    assert json.loads(a["gen_ai.input.messages"]) == [{"role": "user", "parts": [{"type": "text",
                                                                                  "content": "Weather?"}]}]
    assert json.loads(a["gen_ai.output.messages"]) == [{"role": "assistant", "parts": [
        {"type": "text", "content": "Let me check."},
        {"type": "tool_call", "id": "call-0", "name": "get_weather", "arguments": {"city": "Paris"}},
        {"type": "tool_call", "id": "call-1", "name": "forecast", "arguments": {"city": "Rome"}}],
        "finish_reason": "tool_call"}]
    [answer] = json.loads(attributes(chat2)["gen_ai.output.messages"])
    assert (answer["role"], [p["type"] for p in answer["parts"]], answer["finish_reason"]) == ("assistant", ["text"],
                                                                                                 "stop")
    assert json.loads(a["gen_ai.tool.definitions"])[0] == {
        "type": "function", "name": "get_weather", "description": "Get the weather.", "parameters": {"type": "object"}}
    history = json.loads(attributes(chat2)["gen_ai.input.messages"])
    assert history[2:] == [  # one tool message per result, each with its id
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call-0", "name": "get_weather",
                                    "response": "sunny [redacted]"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call-1", "name": "forecast",
                                    "response": "boom", "error": True}]}]
    assert json.loads(attributes(tool1)["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    assert json.loads(attributes(tool1)["gen_ai.tool.call.result"]) == "sunny [redacted]"
    assert json.loads(attributes(tool2)["gen_ai.tool.call.result"]) == {"error": "boom"}
    assert KEY not in json.dumps([attributes(s) for s in spans])


def test_a_credential_that_json_escapes_is_masked_in_the_decoded_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bearer token after a newline or a tab, which JSON writes as `Bearer\\n…`, in a value and in a key."""
    token = "tok" + "Q" * 30
    rich_cassette(tmp_path / "run.json", result=f"header: Bearer\n{token} and Bearer\t\t{token}")
    with Receiver() as receiver:
        [spans] = export(capsys, receiver, tmp_path / "run.json", "--content")
    result = json.loads(attributes(spans[2])["gen_ai.tool.call.result"])
    assert result == "header: [redacted] and [redacted]"
    assert token not in json.dumps([attributes(s) for s in spans])
    assert json.loads(content.json_text({f"Bearer\n{token}": [f"Bearer\r\n{token}"]})) == {"[redacted]": ["[redacted]"]}


def test_the_policy_in_force_redacts_the_whole_cassette_before_its_spans(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule placed by tool and path (which a piece of content cut out of its step cannot match) applies, and
    the export is the export of the cassette `blackbox redact` writes: its content, ids and hashes."""
    for name in [n for n in os.environ if n.startswith("BLACKBOX_")]:
        monkeypatch.delenv(name)
    rich_cassette(tmp_path / "run.json", result="sunny, ask grace@example.com")
    policy = tmp_path / "policy.toml"
    policy.write_text('detectors = ["email"]\n[[rules]]\nname = "city"\naction = "drop"\ntool = "get_weather"\n'
                      'path = "city"\n')
    monkeypatch.setenv("BLACKBOX_POLICY", str(policy))
    code, _, err = run_cli(capsys, "redact", tmp_path / "run.json", "--out", tmp_path / "redacted.json")
    assert code == 0, err
    outputs = {}
    for name in ("run", "redacted"):
        for flag in ("--content", None):
            out = tmp_path / f"{name}{flag or ''}.otlp.json"
            code, _, err = run_cli(capsys, "export", tmp_path / f"{name}.json", "--to", "otlp-json", "--out", out,
                                   *([flag] if flag else []))
            assert code == 0, err
            outputs[name, flag] = out.read_text()
    assert outputs["run", "--content"] == outputs["redacted", "--content"]
    assert outputs["run", None] == outputs["redacted", None]  # the same ids and hashes without content too
    text = outputs["run", "--content"]
    spans = json.loads(text)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    arguments = [json.loads(kv["value"]["stringValue"]) for s in spans for kv in s["attributes"]
                 if kv["key"] == "gen_ai.tool.call.arguments"]
    assert arguments == [{"city": "[redacted:city]"}, {"city": "Rome"}]  # get_weather's, not forecast's
    assert '\\"city\\":\\"Paris\\"' not in text  # nor in the model's calls or the history
    assert "grace@example.com" not in text and "[redacted:email:" in text
    monkeypatch.delenv("BLACKBOX_POLICY")
    code, _, err = run_cli(capsys, "export", tmp_path / "run.json", "--to", "otlp-json", "--out",
                           tmp_path / "plain.json", "--content")
    assert code == 0, err
    assert "Paris" in (tmp_path / "plain.json").read_text()  # no policy, nothing redacted


def test_ids_are_the_same_on_every_export_and_a_fork_links_to_its_parents_tool_span(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent = rich_cassette(tmp_path / "run.json")
    code, _, err = run_cli(capsys, "fork", tmp_path / "run.json", "--at", "3", "--set", '"snowy"',
                           "--out", tmp_path / "fork.json", "--model-only", "--script", _script(tmp_path))
    assert code == 0, err
    fork = load(tmp_path / "fork.json")
    with Receiver() as receiver:
        export(capsys, receiver, tmp_path / "run.json")
        export(capsys, receiver, tmp_path / "run.json")
        export(capsys, receiver, tmp_path / "fork.json")
    once, twice, forked = (spans_of(r) for r in receiver.decoded())
    assert [(s.trace_id, s.span_id, s.parent_span_id) for s in once] == [
        (s.trace_id, s.span_id, s.parent_span_id) for s in twice]
    assert receiver.requests[0][2] == receiver.requests[1][2]  # byte for byte: a backend de-duplicates
    assert forked[0].trace_id != once[0].trace_id
    [link] = forked[0].links
    searched = next(s for s in once if s.name == "execute_tool get_weather")
    assert (link.trace_id, link.span_id) == (once[0].trace_id, searched.span_id)
    root = attributes(forked[0])
    assert root["blackbox.fork.parent_id"] == parent.id and root["blackbox.fork.at_step"] == 3
    assert root["blackbox.fork.parent_head_hash"] == parent.steps[-1].hash
    edited = next(s for s in forked if s.name == "execute_tool get_weather")
    assert attributes(edited)["blackbox.fork.edited"] is True
    assert attributes(edited)["blackbox.fork.original_hash"] == parent.steps[3].hash
    assert fork.steps[3].hash != parent.steps[3].hash
    # the steps before the fork point are the parent's, so are their spans' ids within each trace: not shared
    assert not {s.span_id for s in forked} & {s.span_id for s in once}


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))
    return script


def _to_request(document: dict[str, Any]) -> Any:
    """The OTLP JSON file as the protobuf request (ids back from hex to protobuf JSON's base64)."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: base64.b64encode(bytes.fromhex(v)).decode() if k in ("traceId", "spanId", "parentSpanId")
                    else walk(v) for k, v in value.items()}
        return [walk(v) for v in value] if isinstance(value, list) else value

    return ParseDict(walk(document), ExportTraceServiceRequest())


def test_the_otlp_json_file_is_the_request_the_http_exporter_sends(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json")
    with Receiver() as receiver:
        export(capsys, receiver, tmp_path / "run.json", "--content")
    code, _out, err = run_cli(capsys, "export", tmp_path / "run.json", "--to", "otlp-json", "--out",
                             tmp_path / "run.otlp.json", "--content")
    assert code == 0, err
    document = json.loads((tmp_path / "run.otlp.json").read_text())
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16 and span["kind"] == 3  # hex ids, int enums
    assert _to_request(document) == receiver.decoded()[0]


def test_a_folder_exports_every_cassette_one_request_each_and_a_bad_file_stops_it_before_any_is_sent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "runs"
    (folder / "ci").mkdir(parents=True)
    rich_cassette(folder / "a.json")
    rich_cassette(folder / "ci" / "b.json", result="rainy")
    with Receiver() as receiver:
        code, out, err = run_cli(capsys, "export", folder, "--endpoint", receiver.url, "--json")
        assert code == 0, err
        validate("export", json.loads(out))
        assert json.loads(out)["cassettes"] == 2 and len(receiver.requests) == 2
        assert receiver.requests[0][0] == "/v1/traces"  # a base URL gets the traces path
        (folder / "ci" / "broken.json").write_text('{"version": 2, "id": "x", "createdAt": 0, "steps": [')
        code, out, err = run_cli(capsys, "export", folder, "--endpoint", receiver.url)
    assert code == 2 and len(receiver.requests) == 2  # a file that is not a cassette: bad input
    assert len(err.strip().splitlines()) == 1 and "broken.json" in err and "truncated" in err


def test_a_backend_that_refuses_or_is_down_is_one_line_and_exit_1(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json")
    with Receiver(status=400) as receiver:
        code, out, err = run_cli(capsys, "export", tmp_path / "run.json", "--endpoint", receiver.url)
    assert code == 1 and len(receiver.requests) == 1
    assert err.count("\n") == 1 and "refused the export (HTTP 400)" in err
    down = receiver.url  # the receiver is gone: nothing listens there now
    code, out, err = run_cli(capsys, "export", tmp_path / "run.json", "--endpoint", down, "--json")
    assert code == 1 and err.count("\n") == 1, err
    assert f"{down}/v1/traces cannot be reached (connection refused: nothing listens there)" in err
    assert "start the OTLP backend" in err
    validate("error", json.loads(out))


def test_a_backend_that_hangs_up_is_tried_once_not_retried_with_backoff(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The SDK retries a connection error for about 7 s (1, 2, 4 s); the command line tries once and says so."""
    import socketserver
    import threading

    rich_cassette(tmp_path / "run.json")
    accepted: list[int] = []

    class HangUp(socketserver.BaseRequestHandler):
        def handle(self) -> None:  # no answer: the connection is dropped as it comes
            accepted.append(1)

    server = socketserver.TCPServer(("127.0.0.1", 0), HangUp)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        code, _out, err = run_cli(capsys, "export", tmp_path / "run.json", "--endpoint", url)
    finally:
        server.shutdown()
        server.server_close()
    assert code == 1 and err.count("\n") == 1 and f"{url}/v1/traces cannot be reached" in err
    assert len(accepted) == 1


def test_a_retried_answer_is_retried_and_said_on_a_terminal(tmp_path: Path) -> None:
    from tests.cli_helpers import on_terminal

    rich_cassette(tmp_path / "run.json")
    with Receiver(first=(503, 503)) as receiver:
        code, stdout, seen = on_terminal(["export", tmp_path / "run.json", "--endpoint", receiver.url],
                                         {**os.environ, "COLUMNS": "200"})
    assert code == 0, seen
    assert len(receiver.requests) == 3
    assert f"exporting 1 cassette(s) to {receiver.url}/v1/traces".encode() in seen
    assert b"HTTP 503 (attempt 1), retrying" in seen and b"HTTP 503 (attempt 2), retrying" in seen
    assert b"Exported 1 cassette(s)" in stdout


def test_the_otel_variables_and_headers_are_honoured(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rich_cassette(tmp_path / "run.json")
    with Receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=blackbox")
        code, _out, err = run_cli(capsys, "export", tmp_path / "run.json", "--header", "x-mlflow-experiment-id=7")
    assert code == 0, err
    [(path, headers, _)] = receiver.requests
    assert path == "/v1/traces" and headers["x-team"] == "blackbox" and headers["x-mlflow-experiment-id"] == "7"


@pytest.mark.parametrize(("args", "message"), [
    (["--to", "zipkin"], "--to must be one of otlp, otlp-json"),
    (["--to", "otlp-json"], "--out FILE is needed"),
    (["--header", "novalue"], "--header #1 must be K=V"),
    (["--endpoint", "localhost:4318"], "--endpoint must be an http:// or https:// URL"),
])
def test_wrong_flags_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                  message: str) -> None:
    rich_cassette(tmp_path / "run.json")
    code, _out, err = run_cli(capsys, "export", tmp_path / "run.json", *args)
    assert code in (1, 2) and message in err and err.count("\n") == 1


HIDE_OTEL = ("import sys\nfor name in ('opentelemetry', 'opentelemetry.sdk', 'opentelemetry.exporter'):\n"
             "    sys.modules[name] = None  # as if the otel extra were not installed\n"
             "from blackbox.cli import main\nmain(sys.argv[1:])\n")


def test_without_the_otel_extra_otlp_names_it_and_the_file_target_still_works(tmp_path: Path) -> None:
    """Each exporter says what it needs: `--to otlp` is refused in one line naming the extra, before any file is
    read; `--to otlp-json` needs no OpenTelemetry package and writes the same spans (the resource then names
    Blackbox as the SDK that wrote them)."""
    rich_cassette(tmp_path / "run.json")
    with Receiver() as receiver:
        done = subprocess.run([sys.executable, "-c", HIDE_OTEL, "export", str(tmp_path / "run.json"), "--endpoint",
                               receiver.url], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "--to otlp needs the otel extra" in done.stderr and "pip install 'blackbox-agent[otel]'" in done.stderr
    assert receiver.requests == []

    done = subprocess.run([sys.executable, "-c", HIDE_OTEL, "export", str(tmp_path / "run.json"), "--to", "otlp-json",
                           "--out", str(tmp_path / "bare.json")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    bare = json.loads((tmp_path / "bare.json").read_text())["resourceSpans"][0]
    resource = {a["key"]: a["value"]["stringValue"] for a in bare["resource"]["attributes"]}
    assert resource["telemetry.sdk.name"] == "blackbox" and resource["service.name"] == "blackbox"
    subprocess.run([sys.executable, "-m", "blackbox", "export", str(tmp_path / "run.json"), "--to", "otlp-json",
                    "--out", str(tmp_path / "full.json")], check=True, capture_output=True, timeout=600)
    full = json.loads((tmp_path / "full.json").read_text())["resourceSpans"][0]
    assert bare["scopeSpans"] == full["scopeSpans"] and len(full["scopeSpans"][0]["spans"]) == 5


def test_a_folder_export_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    import os

    from tests.cli_helpers import on_terminal

    for name in ("a", "b", "c"):
        rich_cassette(tmp_path / "runs" / f"{name}.json")
    code, stdout, seen = on_terminal(["export", tmp_path / "runs", "--to", "otlp-json", "--out",
                                      tmp_path / "all.json"], {**os.environ, "COLUMNS": "100"})
    assert code == 0, seen
    assert b"reading runs" in seen and b"3/3" in seen
    assert b"Exported 3 cassette(s)" in stdout
    assert len(json.loads((tmp_path / "all.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]) == 15


def test_a_fork_is_linked_to_the_parent_given_with_parent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json")
    script = _script(tmp_path)
    (tmp_path / "forks").mkdir()
    code, _, err = run_cli(capsys, "fork", tmp_path / "run.json", "--at", "3", "--set", '"snowy"', "--out",
                           tmp_path / "forks" / "fork.json", "--model-only", "--script", script)
    assert code == 0, err
    with Receiver() as receiver:
        export(capsys, receiver, tmp_path / "forks" / "fork.json")  # the parent is not beside it
        alone, linked = export(capsys, receiver, tmp_path / "forks" / "fork.json", "--parent", tmp_path / "run.json")
    assert not alone[0].links and "blackbox.fork.parent_head_hash" not in attributes(alone[0])
    assert len(linked[0].links) == 1 and attributes(linked[0])["blackbox.fork.at_step"] == 3


def test_a_tampered_cassette_is_not_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json")
    document = json.loads((tmp_path / "run.json").read_text())
    document["steps"][3]["payload"]["result"] = "stormy"  # the hash no longer matches
    (tmp_path / "run.json").write_text(json.dumps(document))
    with Receiver() as receiver:
        code, _, err = run_cli(capsys, "export", tmp_path / "run.json", "--endpoint", receiver.url)
    assert code == 2 and err.count("\n") == 1 and "hash chain breaks at step 3" in err
    assert "stormy" not in err and receiver.requests == []


def test_a_folder_export_refused_midway_says_what_was_sent(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a", "b", "c"):
        rich_cassette(tmp_path / "runs" / f"{name}.json", result=name)
    with Receiver(refuse_from=2) as receiver:
        code, _, err = run_cli(capsys, "export", tmp_path / "runs", "--endpoint", receiver.url)
    assert code == 1 and err.count("\n") == 1 and len(receiver.requests) == 2
    assert "refused the export (HTTP 400)" in err and "cassette 2 of 3: the 1 before it were sent" in err
