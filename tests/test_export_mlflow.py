"""End to end with a real backend: an MLflow tracking server started here on loopback (the `otel-e2e` extra),
the demo run and its fork exported over OTLP/HTTP, then read back through MLflow's own client: an agent trace
with model and tool spans, the fork its own trace linked to its parent; MLflow's trace JSON imports back as the
run; exporting again stores no second copy; a refusal is one line.  And what a user sees there, run by run
(the demo, its fork and error run, examples/, a real MCP server's run): the run's request and answer in the
trace list, each model span's input and reply (text, tool calls, finish reason) and each tool span's arguments
and result as MLflow parses them, errors marked, the spans in the run's order."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import Cassette, load
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI
from tests.test_export_conventions import _mcp_run
from tests.test_import_otel import steps

pytest.importorskip("opentelemetry.sdk")
pytest_plugins = ["tests.conftest_fakeapi"]
ROOT = Path(__file__).resolve().parent.parent

HANG_GUARD = 600  # seconds: only a server that never comes up waits this long; the wait is for its log line
RUNNING = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")


@pytest.fixture(scope="module")
def mlflow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An MLflow server on 127.0.0.1 (a free port the server picks), its store in a temporary folder.

    Skipped here, in the test's setup, without the extra: CI turns that skip into a failure (tests/conftest.py)."""
    pytest.importorskip("mlflow", reason="the MLflow end-to-end test needs the otel-e2e extra: "
                                         "pip install -e '.[otel-e2e]'")
    home = tmp_path_factory.mktemp("mlflow")
    log = (home / "server.log").open("wb")
    env = {**os.environ, "MLFLOW_TRACKING_URI": "", "NO_PROXY": "127.0.0.1"}
    proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", "0",
                             "--workers", "1", "--backend-store-uri", f"sqlite:///{home / 'db.sqlite'}",
                             "--default-artifact-root", str(home / "artifacts")],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        url = _wait_for_url(proc, home / "server.log")
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and the workers it started, by its own group id
        try:
            proc.wait(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def _wait_for_url(proc: subprocess.Popen[bytes], log: Path) -> str:
    import requests

    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the MLflow server exited ({proc.returncode}): {log.read_text()[-2000:]}")
        found = RUNNING.search(log.read_text(errors="replace"))
        if found:
            try:
                if requests.get(f"{found.group(1)}/health", timeout=HANG_GUARD).ok:
                    return found.group(1)
            except requests.ConnectionError:
                pass
        time.sleep(0.2)  # polling a condition, not waiting for a time
    raise AssertionError("the MLflow server did not come up")


def _traces(url: str) -> list[Any]:
    from mlflow import MlflowClient

    return list(MlflowClient(url).search_traces(locations=["0"]))


def test_the_demo_run_and_its_fork_read_back_from_mlflow(mlflow_url: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    traces = tmp_path / "traces"
    assert run_cli(capsys, "demo", "--scenario", "success", "--out-dir", traces)[0] == 0
    code, _, err = run_cli(capsys, "fork", "--trace", traces / "example-trace.json", "--out", traces / "fork.json")
    assert code == 0, err
    export = ["export", traces, "--endpoint", mlflow_url, "--header", "x-mlflow-experiment-id=0", "--content",
              "--json"]
    code, out, err = run_cli(capsys, *export)
    assert code == 0, err
    assert json.loads(out)["linkedForks"] == 1

    found = {t.data.spans[0].attributes.get("blackbox.cassette.id"): t for t in _traces(mlflow_url)}
    assert set(found) == {"example-run-001", "example-run-001-fork"}
    run, fork = found["example-run-001"], found["example-run-001-fork"]
    run_spans = run.data.spans
    # a model call is CHAT_MODEL (its chat view): the export gives chat spans no OpenInference kind to override it
    assert [(s.name, s.span_type) for s in run_spans] == [
        ("invoke_agent", "AGENT"), ("chat", "CHAT_MODEL"), ("execute_tool search", "TOOL"), ("chat", "CHAT_MODEL"),
        ("execute_tool calendar", "TOOL"), ("chat", "CHAT_MODEL"), ("execute_tool booking", "TOOL"),
        ("chat", "CHAT_MODEL")]
    root = run_spans[0]
    assert all(s.parent_id == root.span_id for s in run_spans[1:])
    parent_cassette = load(traces / "example-trace.json")
    assert root.attributes["blackbox.cassette.head_hash"] == parent_cassette.steps[-1].hash
    assert run_spans[2].attributes["gen_ai.tool.name"] == "search"
    assert run_spans[2].attributes["gen_ai.tool.call.arguments"] == {"query": "weekend hotels"}  # MLflow parsed it
    assert run_spans[1].start_time_ns == parent_cassette.steps[0].timestamp * 1_000_000

    fork_root = fork.data.spans[0]
    assert fork.info.trace_id != run.info.trace_id
    assert fork_root.attributes["blackbox.fork.parent_id"] == "example-run-001"
    [link] = json.loads(fork.to_json())["data"]["spans"][0]["links"]
    assert link["trace_id"] == run.info.trace_id and link["span_id"] == run_spans[2].span_id

    # MLflow's own trace JSON imports back as the run
    (tmp_path / "mlflow-trace.json").write_text(run.to_json())
    code, _, err = run_cli(capsys, "import", "--from", "otel", "--in", tmp_path / "mlflow-trace.json", "--out",
                           tmp_path / "back.json")
    assert code == 0, err
    assert steps(load(tmp_path / "back.json")) == steps(parent_cassette)

    # the same ids again: MLflow keeps one copy of each run
    code, _, err = run_cli(capsys, *export)
    assert code == 0, err
    assert len(_traces(mlflow_url)) == 2


def test_a_refusal_from_mlflow_is_one_line(mlflow_url: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "demo", "--scenario", "success", "--out-dir", tmp_path)[0] == 0
    code, _, err = run_cli(capsys, "export", tmp_path / "example-trace.json", "--endpoint",
                           f"{mlflow_url}/v1/no-such-path")
    assert code == 1 and err.count("\n") == 1 and "refused the export (HTTP 404)" in err


def _texts(parts: list[dict[str, Any]]) -> str:
    return "".join(p["content"] for p in parts if p["type"] == "text")


def shown_as_recorded(trace: Any, cassette: Cassette) -> None:
    """Every span of an MLflow trace against the cassette it came from, as MLflow parsed the export."""
    root, *spans = trace.data.spans
    assert all(s.parent_id == root.span_id for s in spans)
    spans.sort(key=lambda s: s.start_time_ns)  # the timeline: in the run's order, to the microsecond
    steps = {s.index: s.payload for s in cassette.steps}
    assert [s.attributes["blackbox.step.index"] for s in spans] == sorted(
        s.index for s in cassette.steps if s.type in ("model_input", "tool_call"))
    first_prompt = next(m for m in steps[0]["messages"] if m["role"] == "user") if "messages" in steps[0] else None
    answer = cassette.steps[-2].payload if cassette.steps[-2].type == "model_output" else None
    for span in spans:
        at = span.attributes["blackbox.step.index"]
        if span.span_type == "CHAT_MODEL":
            output = steps[at + 1]
            [reply] = span.outputs  # the model's reply, as MLflow parsed gen_ai.output.messages
            assert reply["role"] == "assistant" and reply["finish_reason"] == span.attributes[
                "gen_ai.response.finish_reasons"][0]
            assert _texts(reply["parts"]) == output.get("text", "")
            calls = output.get("calls", []) if output["type"] == "tool_calls" else [output] * (
                output["type"] == "tool_call")  # the older single-call shape
            assert [(p["name"], p["arguments"]) for p in reply["parts"] if p["type"] == "tool_call"] == [
                (c["toolName"], c["toolInput"]) for c in calls]
            assert len(span.inputs) >= len(steps[at]["messages"])  # the history (a round of results: one each)
        else:
            assert span.span_type == "TOOL" and span.name == f"execute_tool {steps[at]['toolName']}"
            assert span.inputs == (steps[at]["toolInput"] or None)  # MLflow shows no empty arguments
            result = next(s.payload for s in cassette.steps if s.type == "tool_result" and s.index > at
                          and s.payload.get("toolCallId") in (steps[at].get("toolCallId"), None))
            if "error" in result:
                assert span.outputs == {"error": result["error"]} and span.status.status_code == "ERROR"
            else:
                assert span.outputs == result["result"] and span.status.status_code != "ERROR"
    if first_prompt is not None:  # the trace list's request and response columns
        assert isinstance(first_prompt["content"], str) and first_prompt["content"][:40] in trace.info.request_preview
    if answer is not None and answer.get("type") == "final_answer":
        assert json.dumps(answer["text"])[1:40] in trace.info.response_preview


def test_what_a_user_sees_of_each_run_in_mlflow(mlflow_url: str, tmp_path: Path, fake_api: FakeAPI,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    assert run_cli(capsys, "demo", "--out-dir", runs)[0] == 0  # the run and the failed run
    assert run_cli(capsys, "demo", "fork", "--trace", runs / "example-trace.json", "--out", runs / "fork.json")[0] == 0
    for example in ROOT.glob("examples/*.json"):
        (runs / example.name).write_bytes(example.read_bytes())
    _mcp_run(fake_api, runs / "mcp.json")
    experiment = _experiment(mlflow_url, "runs")
    code, _, err = run_cli(capsys, "export", runs, "--endpoint", mlflow_url, "--header",
                           f"x-mlflow-experiment-id={experiment}", "--content")
    assert code == 0, err
    from mlflow import MlflowClient

    found = {t.data.spans[0].attributes["blackbox.cassette.id"]: t
             for t in MlflowClient(mlflow_url).search_traces(locations=[experiment])}
    cassettes = {c.id: c for c in map(load, sorted(runs.glob("*.json")))}
    assert set(found) == set(cassettes) and len(cassettes) == 6
    for run, cassette in cassettes.items():
        shown_as_recorded(found[run], cassette)
    failed = found["example-error-run"]
    assert failed.info.state == "ERROR" and failed.data.spans[0].status.description == "unknown_tool"
    mcp = [s for s in found[load(runs / "mcp.json").id].data.spans if s.span_type == "TOOL"]
    assert [s.attributes["gen_ai.tool.type"] for s in mcp] == ["extension"] * 3


def _experiment(url: str, name: str) -> str:
    """A fresh experiment of its own, so this test reads only its traces."""
    from mlflow import MlflowClient

    return str(MlflowClient(url).create_experiment(name))
