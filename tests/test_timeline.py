"""A run over time (`blackbox.format.timeline`) and the totals `blackbox inspect` prints (text and --json)."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox.format.cassette import StepChain, load, save
from blackbox.format.lazy import load_lazy
from blackbox.format.timeline import duration_text, timeline, tokens_text
from blackbox.format.tokens import Tokens
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES
from tests.test_cli_json import run_json
from tests.tui.timed import write_timed


def test_the_spans_and_totals_of_a_recorded_run(tmp_path: Path) -> None:
    line = timeline(load(write_timed(tmp_path / "t.json")).steps)
    assert [(s.kind, s.name, s.start_step, s.end_step, s.ms) for s in line.spans] == [
        ("model", "claude-sonnet-4-6", 0, 1, 1200), ("tool", "search", 2, 3, 1690), ("tool", "fetch", 4, 5, 1185),
        ("model", "claude-sonnet-4-6", 6, 7, 6500), ("tool", "summarize", 8, 9, 4000),
        ("model", "claude-sonnet-4-6", 10, 11, 2100), ("tool", "search", 12, 13, 690),
        ("model", "claude-sonnet-4-6", 14, 15, 3050)]
    assert [s.start_step for s in line.spans if s.slow] == [6, 8, 14]
    totals = line.totals
    assert (totals.model_calls, totals.tool_calls, totals.calls_with_tokens) == (4, 4, 4)
    assert totals.model_ms == 12_850 and totals.wall_ms == 19_410
    assert totals.tool_ms == 1690 + 4000 + 690  # search ‖ fetch counted once
    assert totals.tokens == Tokens(40_950, 1_010, cacheRead=27_000, cacheWrite=1_600, reasoning=320)


def test_lazy_steps_give_the_same_timeline_without_decoding_payloads(tmp_path: Path) -> None:
    path = write_timed(tmp_path / "t.json")
    assert timeline(load_lazy(path).steps) == timeline(load(path).steps)


def test_calls_without_an_end_are_open_and_never_the_slowest(tmp_path: Path) -> None:
    chain = StepChain("open")
    chain.append("model_input", 0, {"messages": [], "tools": []})
    chain.append("model_output", 100, {"type": "tool_calls", "calls": []}, Tokens(5, 1))
    chain.append("tool_call", 200, {"toolCallId": "call-0", "toolName": "slow", "toolInput": {}})
    chain.append("model_input", 900, {"messages": [], "tools": [], "model": "m"})  # the run stopped here
    line = timeline(chain.steps)
    assert [(s.name, s.end, s.slow) for s in line.spans] == [("model", 100, True), ("slow", None, False),
                                                             ("m", None, False)]
    assert line.totals.tool_ms == 0 and line.totals.model_ms == 100 and line.totals.wall_ms == 900
    assert line.totals.calls_with_tokens == 1 and line.totals.model_calls == 2


def test_a_file_that_goes_back_in_time_gives_no_negative_duration() -> None:
    chain = StepChain("odd")
    chain.append("model_input", 500, {"messages": [], "tools": []})
    chain.append("model_output", 100, {"type": "final_answer", "text": ""})
    chain.append("metadata", "later", {"event": "run_completed"})  # type: ignore[arg-type]
    line = timeline(chain.steps)
    assert line.spans[0].ms == 0 and not line.spans[0].slow
    assert line.totals.wall_ms == 0 and line.totals.model_ms == 0


def test_the_texts() -> None:
    assert [duration_text(ms) for ms in (None, 0, 999, 1000, 59_949, 65_000, 3_725_000)] == [
        "—", "0 ms", "999 ms", "1.0 s", "59.9 s", "1 min 05 s", "1 h 02 min"]
    assert tokens_text(None) == "not recorded"
    assert tokens_text(Tokens(1234, 56)) == "in 1,234 · out 56"
    assert tokens_text(Tokens(1234, 56, cacheRead=0, cacheWrite=4, reasoning=7)) == \
        "in 1,234 (cache write 4) · out 56 (reasoning 7)"


def test_inspect_prints_the_totals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "inspect", write_timed(tmp_path / "t.json"))
    assert code == 0
    assert "tokens:  in 40,950 (cache read 27,000, cache write 1,600) · out 1,010 (reasoning 320)\n" in out
    assert "time:    model 12.8 s (4 calls) · tools 6.4 s (4 calls) · wall 19.4 s\n" in out
    code, out, _ = run_cli(capsys, "inspect", FIXTURES / "traces" / "success-tool-use.v2.json")
    assert "tokens:  not recorded\ntime:    model 0 ms (4 calls) · tools 0 ms (3 calls) · wall 0 ms\n" in out


def test_inspect_says_how_many_calls_the_counts_cover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chain = StepChain("some")
    for n in range(3):
        chain.append("model_input", n * 10, {"messages": [], "tools": []})
        chain.append("model_output", n * 10 + 5, {"type": "final_answer", "text": ""}, Tokens(10, 1) if n else None)
    save(chain.cassette(0), tmp_path / "some.json")
    _, out, _ = run_cli(capsys, "inspect", tmp_path / "some.json")
    assert "tokens:  in 20 · out 2 (2 of 3 model calls)\n" in out


def test_inspect_json_totals_and_a_steps_counts(tmp_path: Path) -> None:
    path = write_timed(tmp_path / "t.json")
    doc, _ = run_json("inspect", "inspect", path, "--json")
    assert doc["totals"] == {"modelCalls": 4, "toolCalls": 4, "modelCallsWithTokens": 4,
                             "tokens": {"input": 40_950, "output": 1_010, "cacheRead": 27_000, "cacheWrite": 1_600,
                                        "reasoning": 320},
                             "modelMs": 12_850, "toolMs": 6_380, "wallMs": 19_410}
    doc, _ = run_json("inspect-step", "inspect", path, "--step", "1", "--json")
    assert doc["tokens"] == {"input": 1_850, "output": 96, "cacheRead": 0, "cacheWrite": 1_600}
    doc, _ = run_json("inspect-step", "inspect", path, "--step", "0", "--json")
    assert "tokens" not in doc
    doc, _ = run_json("inspect", "inspect", FIXTURES / "traces" / "fork-child.v2.json", "--json")
    assert doc["totals"]["tokens"] is None


def test_inspect_step_shows_the_counts_as_not_hashed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "inspect", write_timed(tmp_path / "t.json"), "--step", "7")
    assert "tokens:   in 12,400 (cache read 1,600) · out 310 (reasoning 120) (not hashed)\n" in out


def test_totals_without_model_names_read_no_request_and_are_the_same(tmp_path: Path) -> None:
    path = write_timed(tmp_path / "t.json")
    steps = load_lazy(path).steps
    bare = timeline(steps, model_names=False)
    assert bare.totals == timeline(steps).totals
    assert {s.name for s in bare.spans if s.kind == "model"} == {"model"}
