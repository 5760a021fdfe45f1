"""`blackbox import --from otel`: a trace exported with content comes back as the same model and tool steps
(OTLP JSON, JSON lines, spans in any file order); the import verifies, opens in the UI and the model-only what-if
continues it; pydantic-ai's own OpenTelemetry output (captured here from a real run against the fake API) imports
too; bad traces are one line, exit 1, nothing written."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import Cassette, load
from blackbox.format.verify import verify
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI, weather_brain
from tests.test_export_otlp import rich_cassette

pytest.importorskip("opentelemetry.sdk")


def _neutral(payload: Any) -> Any:
    """A payload without what the conventions do not carry (MCP's extras) and with one call shape: the demo's
    single-call `tool_call` output is the `tool_calls` output of one call (every reader takes both)."""
    if isinstance(payload, dict):
        if payload.get("type") == "tool_call" and "toolCallId" in payload and "toolName" in payload:
            call = {k: payload[k] for k in ("toolCallId", "toolName", "toolInput")}
            return {"type": "tool_calls", "calls": [call]}
        return {k: _neutral(v) for k, v in payload.items() if k != "mcp"}
    return [_neutral(v) for v in payload] if isinstance(payload, list) else payload


def steps(cassette: Cassette) -> list[tuple[str, int | float, Any, Any]]:
    return [(s.type, s.timestamp, _neutral(s.payload), s.tokens) for s in cassette.steps]


def round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str], source: Path, *extra: str) -> Path:
    code, _, err = run_cli(capsys, "export", source, "--to", "otlp-json", "--out", tmp_path / "trace.json",
                           "--content", *extra)
    assert code == 0, err
    code, _, err = run_cli(capsys, "import", "--from", "otel", "--in", tmp_path / "trace.json", "--out",
                           tmp_path / "imported.json", "--id", "imported-run")
    assert code == 0, err
    return tmp_path / "imported.json"


def test_an_exported_run_imports_as_the_same_model_and_tool_steps(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    original = rich_cassette(tmp_path / "run.json")
    imported = load(round_trip(tmp_path, capsys, tmp_path / "run.json"))
    assert steps(imported) == steps(original)
    assert verify(imported).ok
    assert imported.steps[1].tokens is not None and imported.steps[1].tokens.cacheRead == 100


def test_the_demo_run_round_trips_and_the_model_only_what_if_continues_the_import(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "demo", "--scenario", "success", "--out-dir", tmp_path)
    assert code == 0, err
    original = load(tmp_path / "example-trace.json")
    path = round_trip(tmp_path, capsys, tmp_path / "example-trace.json")
    assert steps(load(path)) == steps(original)
    # the demo's steps share one millisecond: in any file order, Blackbox's step index keeps them in order
    shuffled = _shuffled(json.loads((tmp_path / "trace.json").read_text()), seed=5)
    (tmp_path / "shuffled.json").write_text(json.dumps(shuffled))
    code, _, err = run_cli(capsys, "import", "--from", "otel", "--in", tmp_path / "shuffled.json", "--out",
                           tmp_path / "again.json", "--id", "imported-run")
    assert code == 0, err
    assert load(tmp_path / "again.json") == load(path)
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Nothing free this weekend."}]))
    code, _, err = run_cli(capsys, "fork", path, "--at", "3", "--set", '{"results": []}', "--out",
                           tmp_path / "fork.json", "--model-only", "--script", script, "--provider", "anthropic")
    assert code == 0, err
    fork = load(tmp_path / "fork.json")
    assert verify(fork).ok and fork.parentId == "imported-run"
    assert fork.steps[-1].payload["result"] == "Nothing free this weekend."


def _shuffled(document: dict[str, Any], seed: int) -> dict[str, Any]:
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    random.Random(seed).shuffle(spans)
    return document


def test_file_order_and_json_lines_do_not_matter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json")
    first = load(round_trip(tmp_path, capsys, tmp_path / "run.json"))
    document = json.loads((tmp_path / "trace.json").read_text())
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    lines = []
    for span in spans:  # a collector's file exporter: one request per line
        one = json.loads(json.dumps(document))
        one["resourceSpans"][0]["scopeSpans"][0]["spans"] = [span]
        lines.append(json.dumps(one))
    random.Random(3).shuffle(lines)
    (tmp_path / "lines.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(capsys, "import", "--from", "otel", "--in", tmp_path / "lines.jsonl", "--out",
                           tmp_path / "again.json", "--id", "imported-run")
    assert code == 0, err
    assert load(tmp_path / "again.json") == first


@pytest.mark.anyio
async def test_an_import_opens_in_the_ui(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.tui.conftest import SIZE, make_app, settle

    rich_cassette(tmp_path / "run.json")
    path = round_trip(tmp_path, capsys, tmp_path / "run.json")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.export_screenshot()
    assert "imported-run" in screen and "get_weather" in screen and "forecast" in screen


# -- other tools' OpenTelemetry output ------------------------------------------------------------------------


def _pydantic_trace(fake: FakeAPI, out: Path) -> list[Any]:
    """Run a pydantic-ai agent (its own instrumentation, content on) against the fake API; write its spans as
    OTLP JSON the way a collector would receive them."""
    from anthropic import AsyncAnthropic
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from blackbox.exporters.otlp import readable_json

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    client = AsyncAnthropic(base_url=fake.url, api_key="test-key", max_retries=0)
    model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client))

    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return f"sunny in {city}"

    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider,
                                                                       include_content=True))
    agent = Agent(model, instructions="Be brief.", tools=[get_weather], capabilities=[instrumentation])

    async def go() -> Any:
        async with client:  # closed in its loop: its transport would otherwise leak into a later test
            return (await agent.run("Weather in Paris and Rome?")).output

    answer = asyncio.run(go())
    spans = list(memory.get_finished_spans())
    out.write_text(json.dumps(readable_json(spans)))
    return [answer, spans]


def test_pydantic_ais_own_trace_imports(fake_api: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.brain = weather_brain("anthropic", cities=("Paris", "Rome"))
    answer, spans = _pydantic_trace(fake_api, tmp_path / "pydantic.json")
    assert any(s.name.startswith("chat ") for s in spans)
    code, _, err = run_cli(capsys, "import", "--from", "otel", "--in", tmp_path / "pydantic.json", "--out",
                           tmp_path / "imported.json")
    assert code == 0, err
    imported = load(tmp_path / "imported.json")
    assert verify(imported).ok
    assert [s.type for s in imported.steps] == ["model_input", "model_output", "tool_call", "tool_result",
                                                "tool_call", "tool_result", "model_input", "model_output",
                                                "metadata"]
    calls = imported.steps[1].payload["calls"]
    assert [(c["toolCallId"], c["toolName"], c["toolInput"]) for c in calls] == [
        ("call-0", "get_weather", {"city": "Paris"}), ("call-1", "get_weather", {"city": "Rome"})]
    assert [imported.steps[i].payload["result"] for i in (3, 5)] == ["sunny in Paris", "sunny in Rome"]
    first = imported.steps[0].payload
    assert first["model"] == "claude-sonnet-4-6" and first["systemPrompt"] == "Be brief."
    assert first["messages"] == [{"role": "user", "content": "Weather in Paris and Rome?"}]
    assert [t["name"] for t in first["tools"]] == ["get_weather"]
    history = imported.steps[6].payload["messages"]
    assert history[2]["role"] == "user" and [p["result"] for p in history[2]["content"]] == [
        "sunny in Paris", "sunny in Rome"]
    assert imported.steps[-1].payload == {"event": "run_completed", "status": "success", "result": answer}
    assert imported.steps[1].tokens is not None  # the fake API's usage, kept
    # a run seen in production, forked locally: the model-only what-if continues it (the provider from the model)
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris, sun in Rome."}]))
    code, _, err = run_cli(capsys, "fork", tmp_path / "imported.json", "--at", "3", "--set", '"snowy"', "--out",
                           tmp_path / "fork.json", "--model-only", "--script", script)
    assert code == 0, err
    fork = load(tmp_path / "fork.json")
    assert verify(fork).ok and fork.steps[3].payload["result"] == "snowy"
    assert fork.steps[-1].payload["result"] == "Snow in Paris, sun in Rome."


def _agents_sdk_trace(fake: FakeAPI, out: Path) -> list[Any]:
    """Run an OpenAI Agents SDK agent (Responses API) traced by OpenInference's instrumentation, the usual way to
    get OpenTelemetry out of that SDK, into an in-memory exporter; write its spans as OTLP JSON."""
    import agents
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from blackbox.exporters.otlp import readable_json

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)  # its processor replaces the SDK's uploader
    agents.set_tracing_disabled(False)  # other tests turn the SDK's tracing off for the whole process
    try:
        client = AsyncOpenAI(base_url=fake.openai_url, api_key="test-key", max_retries=0)
        agents.set_default_openai_client(client)
        agents.set_default_openai_api("responses")

        def get_weather(city: str) -> str:
            """Get the weather for a city."""
            return f"sunny in {city}"

        agent = agents.Agent(name="weather", instructions="Be brief.", model="gpt-5.1",
                             tools=[agents.function_tool(get_weather)])

        async def go() -> Any:
            async with client:  # closed in its loop: its transport would otherwise leak into a later test
                return (await agents.Runner.run(agent, "Weather in Paris and Rome?")).final_output

        answer = asyncio.run(go())
    finally:
        agents.set_tracing_disabled(True)  # off again, as those tests leave it: nothing may upload
        instrumentor.uninstrument()
        from agents.models import _openai_shared

        _openai_shared._default_openai_client = None
    spans = list(memory.get_finished_spans())
    out.write_text(json.dumps(readable_json(spans)))
    return [answer, spans]


def _echoing(brain: Any) -> Any:
    """The Responses API echoes the request's instructions and tools in its response object (the fake does not)."""
    def echo(body: dict[str, Any]) -> Any:
        answer = brain(body)
        return {**answer, "instructions": body.get("instructions"), "tools": body.get("tools", [])}
    return echo


def test_the_agents_sdks_openinference_trace_imports(fake_api: FakeAPI, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.brain = _echoing(weather_brain("responses", cities=("Paris", "Rome")))
    answer, spans = _agents_sdk_trace(fake_api, tmp_path / "agents.json")
    kinds = {s.attributes.get("openinference.span.kind") for s in spans}
    assert {"LLM", "TOOL", "AGENT"} <= kinds and not any("gen_ai.operation.name" in s.attributes for s in spans)
    code, _, err = run_cli(capsys, "import", "--from", "otel", "--in", tmp_path / "agents.json", "--out",
                           tmp_path / "imported.json")
    assert code == 0, err
    imported = load(tmp_path / "imported.json")
    assert verify(imported).ok
    assert [s.type for s in imported.steps] == ["model_input", "model_output", "tool_call", "tool_result",
                                                "tool_call", "tool_result", "model_input", "model_output",
                                                "metadata"]
    first = imported.steps[0].payload
    assert first["model"] == "gpt-5.1" and first["systemPrompt"] == "Be brief."
    assert first["messages"] == [{"role": "user", "content": "Weather in Paris and Rome?"}]
    assert [(t["name"], t["description"]) for t in first["tools"]] == [("get_weather", "Get the weather for a city.")]
    assert first["tools"][0]["inputSchema"]["properties"] == {"city": {"title": "City", "type": "string"}}
    output = imported.steps[1].payload
    assert output["text"] == "Let me check." and [(c["toolCallId"], c["toolInput"]) for c in output["calls"]] == [
        ("call-0", {"city": "Paris"}), ("call-1", {"city": "Rome"})]
    # the tool spans carry no call id: each takes the id of the call it answers (by name and arguments)
    assert [(imported.steps[i].payload["toolCallId"], imported.steps[i].payload["toolInput"]) for i in (2, 4)] == [
        ("call-0", {"city": "Paris"}), ("call-1", {"city": "Rome"})]
    assert [imported.steps[i].payload["result"] for i in (3, 5)] == ["sunny in Paris", "sunny in Rome"]
    history = imported.steps[6].payload["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert [p["toolCallId"] for p in history[1]["content"] if p["type"] == "tool_use"] == ["call-0", "call-1"]
    assert [(p["toolCallId"], p["toolName"], p["result"]) for p in history[2]["content"]] == [
        ("call-0", "get_weather", "sunny in Paris"), ("call-1", "get_weather", "sunny in Rome")]
    assert imported.steps[-1].payload == {"event": "run_completed", "status": "success", "result": answer}
    assert imported.steps[1].tokens is not None and imported.steps[1].tokens.input == 40
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris, sun in Rome."}]))
    code, _, err = run_cli(capsys, "fork", tmp_path / "imported.json", "--at", "3", "--set", '"snowy"', "--out",
                           tmp_path / "fork.json", "--model-only", "--script", script)
    assert code == 0, err
    fork = load(tmp_path / "fork.json")
    assert verify(fork).ok and fork.steps[3].payload["result"] == "snowy"
    assert fork.steps[-1].payload["result"] == "Snow in Paris, sun in Rome."
    # captured with the instrumentation's input hiding on: no messages, so refused, saying so
    hidden = json.loads((tmp_path / "agents.json").read_text())
    for scope in hidden["resourceSpans"][0]["scopeSpans"]:
        for span in scope["spans"]:
            span["attributes"] = [kv for kv in span["attributes"] if not kv["key"].startswith("llm.input_messages.")]
    (tmp_path / "hidden.json").write_text(json.dumps(hidden))
    _one_line_refusal(capsys, tmp_path / "hidden.json", tmp_path / "out.json", "llm.input_messages")
    garbled = json.loads((tmp_path / "agents.json").read_text())  # a message whose role is not a role
    for scope in garbled["resourceSpans"][0]["scopeSpans"]:
        for span in scope["spans"]:
            for kv in span["attributes"]:
                if kv["key"] == "llm.input_messages.1.message.role":
                    kv["value"] = {"intValue": "42"}
    (tmp_path / "garbled.json").write_text(json.dumps(garbled))
    _one_line_refusal(capsys, tmp_path / "garbled.json", tmp_path / "out.json",
                      "gen_ai.input.messages[1].role must be system, user, assistant or tool")


# -- bad traces ----------------------------------------------------------------------------------------------


def _one_line_refusal(capsys: pytest.CaptureFixture[str], trace: Path, out: Path, message: str) -> None:
    code, _stdout, err = run_cli(capsys, "import", "--from", "otel", "--in", trace, "--out", out)
    assert code == 1 and err.count("\n") == 1, err
    assert message in err and "Nothing was written." in err
    assert not out.exists()


def test_a_trace_without_content_says_so_and_stops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json")
    code, _, err = run_cli(capsys, "export", tmp_path / "run.json", "--to", "otlp-json", "--out",
                           tmp_path / "bare.json")
    assert code == 0, err
    _one_line_refusal(capsys, tmp_path / "bare.json", tmp_path / "out.json", "carry no message content")


def test_bad_traces_are_one_line_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json")
    round_trip(tmp_path, capsys, tmp_path / "run.json")
    good = (tmp_path / "trace.json").read_text()
    document = json.loads(good)
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    out = tmp_path / "out.json"

    (tmp_path / "truncated.json").write_text(good[: len(good) // 2])
    _one_line_refusal(capsys, tmp_path / "truncated.json", out, "truncated")

    plain = json.loads(good)
    for span in plain["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["attributes"] = [{"key": "http.method", "value": {"stringValue": "GET"}}]
        span["name"] = "GET /"
    (tmp_path / "http.json").write_text(json.dumps(plain))
    _one_line_refusal(capsys, tmp_path / "http.json", out, "no GenAI spans")

    backwards = json.loads(good)
    span = backwards["resourceSpans"][0]["scopeSpans"][0]["spans"][2]
    span["startTimeUnixNano"], span["endTimeUnixNano"] = span["endTimeUnixNano"], span["startTimeUnixNano"]
    (tmp_path / "backwards.json").write_text(json.dumps(backwards))
    _one_line_refusal(capsys, tmp_path / "backwards.json", out, "spans[2]: the span ends before it starts")

    overlapping = json.loads(good)
    second_chat = overlapping["resourceSpans"][0]["scopeSpans"][0]["spans"][4]
    first_tool = spans[2]
    second_chat["startTimeUnixNano"] = str(int(first_tool["startTimeUnixNano"]) + 1_000_000)
    (tmp_path / "overlap.json").write_text(json.dumps(overlapping))
    _one_line_refusal(capsys, tmp_path / "overlap.json", out, "starts before the previous call's tools returned")

    two = json.loads(good)
    other = json.loads(json.dumps(two["resourceSpans"][0]))
    for span in other["scopeSpans"][0]["spans"]:
        span["traceId"] = "ab" * 16
    two["resourceSpans"].append(other)
    (tmp_path / "two.json").write_text(json.dumps(two))
    _one_line_refusal(capsys, tmp_path / "two.json", out, "holds 2 traces")

    (tmp_path / "other.json").write_text(json.dumps({"spans": []}))
    _one_line_refusal(capsys, tmp_path / "other.json", out, "neither an OTLP JSON request")

    garbled = json.loads(good)
    garbled["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["traceId"] = "not an id!"
    (tmp_path / "garbled.json").write_text(json.dumps(garbled))
    _one_line_refusal(capsys, tmp_path / "garbled.json", out, "spans[1].traceId is neither a hex nor a base64 id")
