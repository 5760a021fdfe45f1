"""The built-in demo agent: step for step the original's demo runs, its tools, models and loop endings."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from blackbox.cli import app
from blackbox.demo.agent import run_loop
from blackbox.demo.clock import frozen
from blackbox.demo.model import ReactiveModel, ScriptedModel
from blackbox.demo.scenarios import record_error, record_success
from blackbox.demo.tools import UnknownToolError, run_tool, tool_definitions
from blackbox.format.cassette import StepChain, chain_break, load
from blackbox.format.outcome import outcome
from blackbox.format.writing import dumps
from tests.conftest import FIXTURES

TRACES = FIXTURES / "traces"


def test_success_run_is_byte_identical_to_the_original_demo() -> None:
    cassette = record_success("fixture-success-tool-use", clock=frozen(0))
    assert dumps(cassette) == (TRACES / "success-tool-use.v2.json").read_bytes()


def test_error_run_is_byte_identical_to_the_original_demo() -> None:
    cassette = record_error("fixture-error-unknown-tool", clock=frozen(0))
    assert dumps(cassette) == (TRACES / "error-unknown-tool.v2.json").read_bytes()


def test_default_ids_and_outcomes() -> None:
    success, error = record_success(), record_error()
    assert (success.id, len(success.steps)) == ("example-run-001", 15)
    assert outcome(success).final_answer == "Hotel booked for Alice on 2024-03-15 at 14:00."
    assert outcome(success).tools == ("search", "calendar", "booking")
    assert (error.id, len(error.steps)) == ("example-error-run", 5)
    assert outcome(error).failure_reason == "unknown_tool"
    assert chain_break(success) is None and chain_break(error) is None


def test_the_clock_stamps_created_at_and_every_step() -> None:
    ticks = iter(range(100, 200))
    cassette = record_success(clock=lambda: next(ticks))
    assert cassette.createdAt == 100
    assert [s.timestamp for s in cassette.steps] == list(range(101, 116))
    assert chain_break(cassette) is None


def test_fixture_tools() -> None:
    assert run_tool("search", {"query": "x"})["results"][1]["title"] == 'Fixture result B for "x"'
    assert run_tool("calendar", {}) == {"date": "unknown", "availableSlots": ["09:00", "14:00", "16:00"]}
    assert run_tool("booking", {"date": "2024-12-31", "time": "09:30"}) == {
        "confirmed": True, "reference": "BK-20241231-0930", "name": "guest"}
    assert run_tool("search", "not an object")["results"][0]["title"] == 'Fixture result A for ""'
    assert [t["name"] for t in tool_definitions()] == ["search", "calendar", "booking"]
    with pytest.raises(UnknownToolError) as raised:
        run_tool("nope", {})
    assert str(raised.value) == 'Unknown fixture tool: "nope". Known tools: "search", "calendar", "booking"'


def test_max_steps_exceeded() -> None:
    chain = StepChain("loop")
    looping = ScriptedModel([{"type": "tool_call", "toolName": "search", "toolInput": {"query": "q"}}] * 3)
    result = run_loop(chain, looping, clock=frozen(0), prompt="go", max_steps=2)
    assert result.failure_reason == "max_steps_exceeded"
    assert chain.steps[-1].payload == {"event": "run_failed", "status": "error", "reason": "max_steps_exceeded",
                                       "maxSteps": 2}
    assert [s.type for s in chain.steps].count("model_input") == 2
    assert [s.payload.get("toolCallId") for s in chain.steps if s.type == "tool_call"] == ["call-0", "call-1"]


def test_a_model_that_cannot_answer_is_a_model_error() -> None:
    chain = StepChain("empty")
    result = run_loop(chain, ScriptedModel([]), clock=frozen(0), prompt="hi")
    assert result.failure_reason == "model_error"
    last = chain.steps[-1].payload
    assert (last["reason"], last["errorKind"]) == ("model_error", "unknown")
    assert chain_break(chain.cassette(0)) is None


def _answer(result: object) -> str:
    messages = [{"role": "user", "content": [
        {"type": "tool_result", "toolCallId": "call-0", "toolName": "search", **result}]}]  # type: ignore[dict-item]
    return ReactiveModel().complete({"messages": messages, "tools": []})["text"]


def test_reactive_model_rules() -> None:
    assert _answer({"result": {"results": [], "available": False, "message": "Full."}}) == (
        'Based on the search result, no options are available: "Full.". I could not complete the booking.')
    assert _answer({"result": {"results": []}}) == (
        'Based on the search result, no options are available: "available=null, 0 result(s)". '
        "I could not complete the booking.")
    assert _answer({"result": {"results": [{"title": "Inn"}, {}]}}) == (
        'Based on the search result, 2 option(s) are available (first: "Inn"). Proceeding to complete the booking.')
    assert _answer({"error": "boom"}) == (
        "The search tool call failed with error: boom. I cannot complete this request.")
    assert _answer({"result": [1.5, "x"]}) == (
        'The search tool returned an unrecognized result shape: [1.5,"x"]. I cannot reliably act on it.')
    prompt_only = ReactiveModel().complete({"messages": [{"role": "user", "content": "Hi"}]})["text"]
    assert prompt_only == 'No tool results were available; responding to the request directly: "Hi".'
    assert ReactiveModel().complete({"messages": []})["text"].startswith("No tool results were available and")


def test_cli_demo_writes_both_cassettes(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--out-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    success, error = load(tmp_path / "example-trace.json"), load(tmp_path / "example-error-trace.json")
    assert (success.id, len(success.steps), error.id, len(error.steps)) == (
        "example-run-001", 15, "example-error-run", 5)
    assert "example-trace.json" in result.output and "unknown_tool" in result.output


@pytest.mark.parametrize(("scenario", "files"), [("success", ["example-trace.json"]),
                                                 ("error", ["example-error-trace.json"])])
def test_cli_demo_one_scenario(tmp_path: Path, scenario: str, files: list[str]) -> None:
    result = CliRunner().invoke(app, ["demo", "--scenario", scenario, "--out-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == files


def test_cli_demo_rejects_an_unknown_scenario(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--scenario", "bogus", "--out-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert not any(tmp_path.iterdir())


def test_demo_cassettes_pass_the_core_verify() -> None:
    from blackbox.format.verify import verify

    assert verify(record_success()).ok
    assert verify(record_error()).ok
