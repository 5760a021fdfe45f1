"""The built-in demo fork (docs/format.md, "Fork", last bullet): fork a demo cassette offline, no agent command needed.

Two modes:
- `tool-result` (default): replace the `result` of the tool_result at `mutation_step` (default 3, the demo's
  search result) with `payload` (default: no hotels available) and continue the demo agent from
  `fork_index` (default 4, the model_input that first sees that result) with the reactive model, whose answer
  follows from the new value.
- `prompt`: start over at `fork_index` with `prompt` as the only user message; the copied prefix is unchanged.

The child: steps before the earliest mutation copied verbatim (same ids, timestamps and hashes); the
steps from the mutation up to `fork_index` re-chained with their original timestamps; then the new run.
Its id is `<parent id>-fork`, `createdAt` the parent's, `parentId` the parent's id and `forkedFromStepId`
the id of step `fork_index`.  New tool calls get `call-N` past the ones the prefix uses.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

import msgspec

from blackbox.demo.agent import run_loop
from blackbox.demo.clock import Clock, wall_clock
from blackbox.demo.model import DemoModel, ReactiveModel
from blackbox.errors import CassetteError, UsageError
from blackbox.fork.plan import same_file
from blackbox.format.canonical import CanonicalError, decode_json, json_value
from blackbox.format.cassette import Cassette, Step, StepChain, chain_break, load, save
from blackbox.live.redaction import ACTIVE, chosen
from blackbox.providers.neutral import calls_of

__all__ = [
    "DEFAULT_FORK_INDEX",
    "DEFAULT_MUTATION_STEP",
    "DEFAULT_PAYLOAD",
    "MODES",
    "default_out",
    "demo_fork",
    "parse_payload_json",
]

DEFAULT_TRACE = Path("traces") / "example-trace.json"  # the parent when --trace is not given
DEFAULT_FORK_INDEX = 4
DEFAULT_MUTATION_STEP = 3
DEFAULT_PAYLOAD: dict[str, Any] = {
    "results": [],
    "available": False,
    "message": "No hotels available for that date.",
}
MODES = ("tool-result", "prompt")
_CALL_ID = re.compile(r"call-(\d+)")

#: Each option as a message names it: by its flag when the user typed it, else as the default it is.
_NAMES = {"fork_index": ("--fork-index", "the default fork index"),
          "mutation_step": ("--mutation-step", "the default changed step"),
          "trace": ("--trace", "the parent"), "out": ("--out", "the default output")}


class _Said:
    """How an error names an option: `given` holds the options the user typed (None: every one, as a caller
    that passes each option by its flag), so a message never names a flag the user did not pass."""

    def __init__(self, given: Collection[str] | None) -> None:
        self.given = given

    def typed(self, name: str) -> bool:
        return self.given is None or name in self.given

    def __call__(self, name: str, value: object) -> str:
        """`--fork-index 9` as typed, `the default fork index 4` when not."""
        flag, default = _NAMES[name]
        return f"{flag} {value}" if self.typed(name) else f"{default} {value}"

    def flag(self, name: str, value: object) -> str:
        """`--out` as typed, `the default output traces/x.json` when not."""
        flag, default = _NAMES[name]
        return flag if self.typed(name) else f"{default} {value}"


def parse_payload_json(text: str) -> Any:
    """The `--payload-json` value: any JSON (strings quoted)."""
    try:
        return decode_json(text.encode("utf-8"))
    except (msgspec.DecodeError, ValueError):
        raise UsageError("--payload-json is not valid JSON; quote strings, e.g. --payload-json "
                         "'{\"results\": [], \"available\": false}'") from None


def default_out(parent_id: str) -> Path:
    """The TypeScript Blackbox's default: `traces/<parent id>-fork.json`."""
    return Path("traces") / f"{parent_id}-fork.json"


def demo_fork(
    trace: Path,
    out: Path | None = None,
    *,
    fork_index: int | None = None,
    mutation_step: int | None = None,
    payload: Any = DEFAULT_PAYLOAD,
    mode: str = "tool-result",
    prompt: str | None = None,
    model: DemoModel | None = None,
    clock: Clock = wall_clock,
    redactor: Any = ACTIVE,
    given: Collection[str] | None = None,
) -> Cassette:
    """Fork the cassette at `trace` and write the child to `out` (default `default_out`); the child.

    `redactor`: the redaction policy the child is made under (default: the one in force).  `given`: the
    options (`fork_index`, `mutation_step`, `trace`, `out`) the user typed, for the messages (`_Said`).
    `UsageError` for a bad option (exit 2), `CassetteError` when the parent cannot be read or its chain is
    broken (exit 1).  `model` defaults to the reactive continuation model.
    """
    if mode not in MODES:
        raise UsageError(f"--mode must be tool-result or prompt, not {mode!r}")
    parent = load(trace)
    broken = chain_break(parent)
    if broken is not None:
        raise CassetteError(f"{trace}: hash chain broken at step {broken.index}: {broken.reason}; "
                            "fork a cassette that verifies")
    said = _Said(given)
    at = DEFAULT_FORK_INDEX if fork_index is None else fork_index
    _check_fork_index(parent, at, said)
    target = default_out(parent.id) if out is None else out
    if same_file(target, trace):
        raise UsageError(f"{said.flag('out', target)} must differ from {said.flag('trace', trace)}; the parent "
                         f"is never overwritten{'' if said.typed('out') else ': give --out FILE'}")

    child_id = f"{parent.id}-fork"
    redactor = chosen(redactor)  # the policy in force, unless the caller names one (None: none)
    info = getattr(redactor, "info", None)
    if mode == "prompt":
        if not prompt:
            raise UsageError("--prompt is required with --mode prompt; give the new user message")
        chain = StepChain(child_id, prefix=parent.steps[:at], redact=redactor, redaction=info)
        history: list[Any] = [{"role": "user", "content": prompt}]
    else:
        step = DEFAULT_MUTATION_STEP if mutation_step is None else mutation_step
        _check_mutation(parent, step, at, said)
        value = _json(payload)
        chain = StepChain(child_id, prefix=parent.steps[:step], redact=redactor, redaction=info)
        for original in parent.steps[step:at]:
            new = _mutated(original, value) if original.index == step else original.payload
            chain.append(original.type, original.timestamp, new)
        history = _history(parent.steps[:at], step, value)

    run_loop(chain, model or ReactiveModel(), clock=clock, messages=history,
             first_call=_next_call(parent.steps[:at]))
    child = chain.cassette(parent.createdAt, parent_id=parent.id, forked_from_step_id=parent.steps[at].id)
    save(child, target)
    return child


def _check_fork_index(parent: Cassette, at: int, said: _Said) -> None:
    last = len(parent.steps) - 1
    if not 0 <= at <= last:
        raise UsageError(f"{said('fork_index', at)} is outside the cassette (steps 0–{last}); "
                         f"fork at a model_input's index (--fork-index N; the demo's is {DEFAULT_FORK_INDEX})")
    if parent.steps[at].type == "metadata":
        raise UsageError(f"{said('fork_index', at)} is the run's terminal metadata step; there is nothing to "
                         "continue from it, pick an earlier step (--fork-index N)")


def _check_mutation(parent: Cassette, step: int, at: int, said: _Said) -> None:
    changed, fork_at = said("mutation_step", step), said("fork_index", at)
    if step < 0:
        raise UsageError(f"{changed} is negative; give the index of a tool_result step")
    if step >= at:
        raise UsageError(f"{changed} must come before {fork_at} "
                         "(the changed result has to be in the copied prefix)")
    found = parent.steps[step].type
    if found != "tool_result":
        listed = ", ".join(str(s.index) for s in parent.steps[:at] if s.type == "tool_result") or "none"
        raise UsageError(f"{changed} is a {found}, not a tool_result; tool_result steps "
                         f"before {fork_at}: {listed} (--mutation-step N)")
    for later in parent.steps[step + 1 : at]:
        if later.type == "model_input":
            raise UsageError(f"{changed} would leave the model_input at step {later.index} "
                             f"stale (it holds the old result); fork at step {later.index} or earlier (--fork-index N)")


def _json(payload: Any) -> Any:
    try:
        return json_value(payload, where=lambda: "--payload-json")
    except CanonicalError as exc:
        raise UsageError(f"{exc}; give a JSON value") from None


def _mutated(original: Step, value: Any) -> dict[str, Any]:
    """The new tool_result payload, in the TypeScript Blackbox's key order: toolName, result, then toolCallId."""
    old = original.payload if isinstance(original.payload, dict) else {}
    payload: dict[str, Any] = {"toolName": old.get("toolName", "unknown"), "result": value}
    if "toolCallId" in old:
        payload["toolCallId"] = old["toolCallId"]
    return payload


def _history(prefix: list[Step], changed: int, value: Any) -> list[Any]:
    """The conversation the prefix amounts to, with the changed result: the first request's messages, then
    one assistant/user message pair per tool round (docs/format.md, "Steps")."""
    if not prefix or prefix[0].type != "model_input":
        raise CassetteError("the cassette does not start with a model_input, so its conversation cannot be "
                            "rebuilt; fork a demo cassette")
    first = prefix[0].payload.get("messages") if isinstance(prefix[0].payload, dict) else None
    history: list[Any] = list(first) if isinstance(first, list) else []
    inputs: dict[str, Any] = {}
    uses: list[Any] = []
    results: list[Any] = []
    for step in prefix[1:]:
        payload = step.payload if isinstance(step.payload, dict) else {}
        calls = [c for c in calls_of(payload) if isinstance(c, dict)] if step.type == "model_output" else []
        if calls:
            inputs = {str(c.get("toolCallId")): c.get("toolInput") for c in calls}
        elif step.type == "tool_result":
            call_id, name = payload.get("toolCallId", ""), payload.get("toolName", "unknown")
            uses.append({"type": "tool_use", "toolCallId": call_id, "toolName": name,
                         "toolInput": inputs.get(call_id)})
            part: dict[str, Any] = {"type": "tool_result", "toolCallId": call_id, "toolName": name}
            if step.index == changed:
                part["result"] = value
            elif "error" in payload:
                part["error"] = payload["error"]
            else:
                part["result"] = payload.get("result")
            results.append(part)
        if step.type == "model_input" or (len(results) == len(inputs) and results):
            _close_round(history, uses, results)
    _close_round(history, uses, results)
    return history


def _close_round(history: list[Any], uses: list[Any], results: list[Any]) -> None:
    if results:
        history.append({"role": "assistant", "content": list(uses)})
        history.append({"role": "user", "content": list(results)})
    uses.clear()
    results.clear()


def _next_call(prefix: list[Step]) -> int:
    """One past the highest `call-N` any prefix step names."""
    seen = [int(m.group(1)) for s in prefix if isinstance(s.payload, dict)
            and isinstance(s.payload.get("toolCallId"), str) and (m := _CALL_ID.fullmatch(s.payload["toolCallId"]))]
    return max(seen, default=-1) + 1

