"""Fork planning (docs/format.md, "Fork"): validate the fork point, the new value, the paths and the script; copy the
prefix.

Pure functions over cassettes and files; the session runs the agent, this module decides what is allowed and
builds the verbatim prefix the fork starts from.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from blackbox.errors import CassetteError, UsageError
from blackbox.format.canonical import TOO_DEEP, CanonicalError, decode_json, json_value
from blackbox.format.cassette import Cassette, Step, StepChain
from blackbox.format.origin import Origin
from blackbox.format.typed import Odd, ToolResultView, view, view_of
from blackbox.format.whole_floats import whole_floats

__all__ = [
    "check_fork_point",
    "check_out_path",
    "fork_chain",
    "load_script",
    "parse_script",
    "parse_set_value",
    "same_file",
    "tool_result_indices",
]


def tool_result_indices(cassette: Cassette) -> list[int]:
    return [s.index for s in cassette.steps if s.type == "tool_result"]


def check_fork_point(cassette: Cassette, at: int) -> Step:
    """Step `at` must be a tool_result (an error result is a valid fork point)."""
    candidates = tool_result_indices(cassette)
    if not candidates:
        raise UsageError(
            f"cassette {cassette.id!r} has no tool_result steps to fork at; wrap the agent's tools with "
            "bb.tools({...}) when recording so their results are steps"
        )
    listed = ", ".join(str(i) for i in candidates)
    if at < 0 or at >= len(cassette.steps):
        raise UsageError(f"--at {at} is outside the cassette (steps 0–{len(cassette.steps) - 1}); "
                         f"tool_result steps: {listed}")
    step = cassette.steps[at]
    if step.type != "tool_result":
        raise UsageError(f"step {at} is a {step.type}, not a tool_result; tool_result steps: {listed}")
    return step


def parse_set_value(text: str) -> Any:
    """`--set` is JSON (strings quoted) or `@file` holding JSON."""
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"--set {text}: cannot read {path}: {exc.strerror or exc}; check the path") from None
        where = f"--set {text}"
    else:
        data = text.encode("utf-8", "surrogateescape")  # argv bytes that are not UTF-8 come back as they were
        where = "--set"
    try:
        value = decode_json(data)
    except (msgspec.DecodeError, ValueError) as exc:
        reason = f": {TOO_DEEP}" if str(exc) == TOO_DEEP else ""
        raise UsageError(
            f"{where} is not valid JSON{reason}; quote strings (--set '\"sunny\"') or use --set @file.json"
        ) from None
    try:
        return json_value(value, where=lambda: where)
    except CanonicalError as exc:  # 1e400 parses (as Infinity), "\ud800" is not text: neither can be stored
        raise UsageError(str(exc)) from None


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when both names reach one file, through links or `..` included."""
    pa, pb = Path(a), Path(b)
    if pa.exists() and pb.exists():
        return os.path.samefile(pa, pb)
    return pa.resolve() == pb.resolve()


def check_out_path(out: str | os.PathLike[str], cassette: str | os.PathLike[str],
                   script: str | os.PathLike[str] | None = None) -> None:
    if same_file(out, cassette):
        raise UsageError("--out must differ from the cassette being forked; the parent is never overwritten")
    if script is not None and same_file(out, script):
        raise UsageError("--out must differ from the --script file")


_OUTPUT_TYPES = ("tool_calls", "tool_call", "final_answer")


def _check_call(call: Any, where: str) -> None:
    if not isinstance(call, dict):
        raise UsageError(f"{where} must be an object with toolName and toolInput")
    if not isinstance(call.get("toolName"), str) or not call["toolName"]:
        raise UsageError(f"{where} needs a toolName string")


def _check_reply(reply: Any, where: str) -> None:
    if not isinstance(reply, dict) or reply.get("type") not in _OUTPUT_TYPES:
        raise UsageError(f"{where} must be an object whose type is one of {', '.join(_OUTPUT_TYPES)}")
    kind = reply["type"]
    if kind == "final_answer" and not isinstance(reply.get("text"), str):
        raise UsageError(f"{where} is a final_answer without a text string")
    if kind == "tool_call":
        _check_call(reply, where)
    if kind == "tool_calls":
        calls = reply.get("calls")
        if not isinstance(calls, list) or not calls:
            raise UsageError(f"{where}.calls must be a non-empty array of tool calls")
        for i, call in enumerate(calls):
            _check_call(call, f"{where}.calls[{i}]")
    found = view_of("tool_call" if kind == "tool_call" else "model_output", reply)  # what the fork engine reads
    if isinstance(found, Odd):
        at = found.why.rsplit(" at ", 1)[-1].removeprefix("$") if " at $" in found.why else ""
        raise UsageError(f"{where}{at} does not fit a {kind} reply (docs/format.md, \"model_output\")")


def load_script(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """A replies file: a JSON array of model outputs, answered in order after the fork point."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"--script {p}: cannot read it: {exc.strerror or exc}") from None
    return parse_script(data, p)


def parse_script(data: bytes, p: Path) -> list[dict[str, Any]]:
    """The replies a file at `p` holding `data` gives (`load_script`; the UI checks replies before writing them)."""
    try:
        replies = decode_json(data)
    except (msgspec.DecodeError, ValueError):
        raise UsageError(f"--script {p} is not valid JSON; it must be an array of model outputs") from None
    if not isinstance(replies, list) or not replies:
        raise UsageError(f"--script {p} must be a non-empty JSON array of model outputs, e.g. "
                         '[{"type":"final_answer","text":"Done."}]')
    for i, reply in enumerate(replies):
        _check_reply(reply, f"--script {p}: replies[{i}]")
    return replies


def fork_chain(parent: Cassette, at: int, value: Any, trace_id: str, *,
               redact: Any = None) -> StepChain:
    """Steps 0…at-1 copied verbatim (ids, timestamps, hashes), then the new tool_result at `at`; with a
    redaction policy (`redact`, a `blackbox.redaction.Redactor`) the prefix is as the policy lets it out (a
    parent redacted by the same policy keeps its hashes)."""
    original = check_fork_point(parent, at)
    point = view(original)
    if not isinstance(point, ToolResultView):
        raise CassetteError(f"step {at} of {parent.id!r} has no tool_result payload")
    chain = StepChain(trace_id, prefix=parent.steps[:at], redact=redact,
                      redaction=getattr(redact, "info", None))
    chain.append(
        "tool_result",
        original.timestamp,
        {"toolCallId": original.payload.get("toolCallId"), "toolName": point.toolName, "result": value},
        origin=Origin(floats=floats) if (floats := whole_floats(value, "/result")) else None,
    )
    return chain
