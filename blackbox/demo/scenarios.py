"""The two recorded demo runs (docs/format.md, "Diff, assert, inspect and list"): a hotel booking that succeeds and a
flight search that fails."""

from __future__ import annotations

from pathlib import Path

from blackbox.demo.agent import run_loop
from blackbox.demo.clock import Clock, wall_clock
from blackbox.demo.model import ScriptedModel
from blackbox.format.cassette import Cassette, StepChain, save

__all__ = [
    "ERROR_FILE",
    "ERROR_ID",
    "ERROR_PROMPT",
    "SUCCESS_FILE",
    "SUCCESS_ID",
    "SUCCESS_PROMPT",
    "record_error",
    "record_success",
    "write_scenarios",
]

SUCCESS_ID = "example-run-001"
SUCCESS_FILE = "example-trace.json"
SUCCESS_PROMPT = "Book a hotel for Alice this weekend."
SUCCESS_ANSWER = "Hotel booked for Alice on 2024-03-15 at 14:00."
SUCCESS_SCRIPT = (
    {"type": "tool_call", "toolName": "search", "toolInput": {"query": "weekend hotels"}},
    {"type": "tool_call", "toolName": "calendar", "toolInput": {"date": "2024-03-15"}},
    {"type": "tool_call", "toolName": "booking", "toolInput": {"date": "2024-03-15", "time": "14:00", "name": "Alice"}},
    {"type": "final_answer", "text": SUCCESS_ANSWER},
)

ERROR_ID = "example-error-run"
ERROR_FILE = "example-error-trace.json"
ERROR_PROMPT = "Find the cheapest flight to Tokyo this weekend."
ERROR_SCRIPT = ({"type": "tool_call", "toolName": "flights", "toolInput": {"destination": "Tokyo"}},)


def record_success(trace_id: str = SUCCESS_ID, *, clock: Clock = wall_clock) -> Cassette:
    """search → calendar → booking → final answer: 15 steps."""
    created = clock()
    chain = StepChain(trace_id)
    run_loop(chain, ScriptedModel(SUCCESS_SCRIPT), clock=clock, prompt=SUCCESS_PROMPT, max_steps=10)
    return chain.cassette(created)


def record_error(trace_id: str = ERROR_ID, *, clock: Clock = wall_clock) -> Cassette:
    """The model calls the unknown tool `flights`: an error result and `run_failed unknown_tool`, 5 steps."""
    created = clock()
    chain = StepChain(trace_id)
    run_loop(chain, ScriptedModel(ERROR_SCRIPT), clock=clock, prompt=ERROR_PROMPT, max_steps=5)
    return chain.cassette(created)


def write_scenarios(out_dir: Path, scenario: str = "all", *, clock: Clock = wall_clock) -> list[Path]:
    """Record the chosen scenarios (`success`, `error` or `all`) into `out_dir`; the paths written."""
    written = []
    if scenario in ("success", "all"):
        written.append(out_dir / SUCCESS_FILE)
        save(record_success(clock=clock), written[-1])
    if scenario in ("error", "all"):
        written.append(out_dir / ERROR_FILE)
        save(record_error(clock=clock), written[-1])
    return written
