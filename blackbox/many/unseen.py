"""What `blackbox migrate` does with a tool call the recording never saw (`--unseen`).

A migrated run answers the candidate's tool calls from the recording (same tool, same arguments).  A call the
recording has no result for is answered by the policy the user states:

- `fail` (the default): not answered; the continuation stops there and the run is "changed path", the call named;
- `static:TEXT`: every such call gets TEXT as its result, and the run goes on;
- `live-readonly:TOOL,…`: the named tools are *run*, in Blackbox's process: each TOOL is `module:function` (the
  tool's name is the function's) or `name=module:function`, imported from the current directory or the Python
  path and called with the call's arguments as keywords.  Any other unseen call fails as under `fail`.

"Read-only" is the user's word, not a check: Blackbox cannot tell whether a function writes, sends or spends.
The candidate model chooses the arguments (perhaps steered by text in the recorded tool results), the calls
run concurrently and once per repeat, with the user's environment and credentials.  Name only functions that
are safe to call any number of times with any arguments.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from blackbox.errors import UsageError
from blackbox.fork.whatif import NO_RESULT
from blackbox.format.inert import inert

__all__ = ["Unseen", "parse_unseen"]

How = Literal["no (fail)", "static", "live"]
_FORMS = "fail, static:TEXT or live-readonly:TOOL,… (TOOL: module:function or name=module:function)"


class Unseen:
    """A parsed `--unseen` policy; `answer(name, input)` → (the result for `what_if`, how it was answered)."""

    def __init__(self, kind: str, text: str = "", tools: dict[str, Callable[..., Any]] | None = None,
                 spec: str = "fail") -> None:
        self.kind, self.text, self.tools, self.spec = kind, text, dict(tools or {}), spec

    def answer(self, name: str, tool_input: Any) -> tuple[Any, How]:
        if self.kind == "static":
            return self.text, "static"
        fn = self.tools.get(name)
        if fn is None:
            return NO_RESULT, "no (fail)"
        try:
            value = fn(**tool_input) if isinstance(tool_input, dict) else fn(tool_input)
        except Exception as exc:  # the tool's own failure is its result, as a wrapped tool's error is
            return {"error": f"{type(exc).__name__}: {exc}"}, "live"
        try:
            return msgspec.to_builtins(value), "live"
        except (TypeError, ValueError):
            return str(value), "live"

    def describe(self) -> str:
        return self.spec


def parse_unseen(spec: str | None) -> Unseen:
    """`--unseen` as given; UsageError (one line: what is wrong, the forms) for anything else."""
    if spec is None or spec == "fail":
        return Unseen("fail")
    kind, sep, rest = spec.partition(":")
    if kind == "static" and sep:
        return Unseen("static", text=rest, spec=spec)
    if kind == "live-readonly" and sep and rest.strip(","):
        tools = dict(_tool(item.strip()) for item in rest.split(",") if item.strip())
        return Unseen("live", tools=tools, spec=spec)
    raise UsageError(f"--unseen {inert(spec)!r} is not a policy; use {_FORMS}")


def _tool(item: str) -> tuple[str, Callable[..., Any]]:
    name, sep, target = item.partition("=")
    if not sep:
        name, target = "", item
    module_name, colon, attribute = target.partition(":")
    if not colon or not module_name or not attribute:
        raise UsageError(f"--unseen live-readonly: {inert(item)!r} names no function; write module:function or "
                         "name=module:function")
    if "" not in sys.path:
        sys.path.insert(0, "")  # the current directory, as `python -m` has it: where the user's tools live
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an ImportError, or the module's own error while it is imported
        raise UsageError(f"--unseen live-readonly: cannot import {inert(module_name)} ({type(exc).__name__}); "
                         "run from the folder that holds it or set PYTHONPATH") from None
    fn = getattr(module, attribute, None)
    if not callable(fn):
        raise UsageError(f"--unseen live-readonly: {inert(module_name)} has no function {inert(attribute)}")
    return name or attribute, fn
