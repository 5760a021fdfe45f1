"""Wrapped tools: the function the agent calls instead of its tool, sync or async, and the tool's stored input.

The wrapper asks `begin` what the run is (a real run's `ToolSlot`, or a `ToolClaim` served from the cassette,
whose recorded result is handed back as the tool returned it, rebuilt through its return annotation
(`tool_values`), or whose recorded error is raised again) and reports a real run's result or exception to `end`.
The wrapper keeps the function's signature, annotations and docstring: frameworks read them to build the tool's
schema and to decide which context to pass it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from blackbox.errors import SessionError
from blackbox.format.canonical import CanonicalError, json_value
from blackbox.format.origin import Origin
from blackbox.format.whole_floats import restore_floats, whole_floats
from blackbox.live.recorder import ToolSlot
from blackbox.live.replayer import ReplayedToolError, ToolClaim
from blackbox.live.tool_values import RESULT_ADVICE, ToolShape, shape_of, typed_argument_json

__all__ = ["RESULT_ADVICE", "ToolShape", "json_input", "json_result", "tool_input", "wrap_tool"]

F = TypeVar("F", bound=Callable[..., Any])
Begin = Callable[[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]], ToolSlot | ToolClaim]
End = Callable[[ToolSlot, Any, BaseException | None, ToolShape | None], Any]


def _replayed(claim: ToolClaim, shape: ToolShape) -> Any:
    recorded = claim.outcome or {}
    if "error" in recorded:
        raise ReplayedToolError(str(recorded["error"]))
    return shape.rebuild(restore_floats(recorded.get("result"), claim.floats, "/result"))


def wrap_tool(name: str, fn: F, begin: Begin, end: End) -> F:
    """`fn` wrapped: every call goes through `begin`, and a real run's outcome through `end`."""
    shape = shape_of(fn)
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            ticket = begin(name, fn, args, kwargs)
            if isinstance(ticket, ToolClaim):
                return _replayed(ticket, shape)
            try:
                result = await fn(*args, **kwargs)
            except BaseException as exc:
                end(ticket, None, exc, shape)
                raise
            return end(ticket, result, None, shape)

        return run_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        ticket = begin(name, fn, args, kwargs)
        if isinstance(ticket, ToolClaim):
            return _replayed(ticket, shape)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            end(ticket, None, exc, shape)
            raise
        return end(ticket, result, None, shape)

    return run  # type: ignore[return-value]


def tool_input(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The stored input, as the model asked for it (`ToolShape.model_input`): the arguments bound to the
    parameter names, without the framework's context."""
    return shape_of(fn).model_input(args, kwargs)


def json_input(name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The stored input of one call as a JSON value; a `SessionError` with advice when it has none."""
    try:
        return json_value(typed_argument_json(tool_input(fn, args, kwargs)),
                          where=lambda: f"the arguments of tool {name!r}")
    except CanonicalError as exc:
        raise SessionError(f"[blackbox] {exc}; pass JSON values (dict, list, str, number, bool, None) to "
                           "wrapped tools, and annotate a parameter the framework fills in with its type "
                           "(RunContext, RunContextWrapper, InjectedState, RunnableConfig, ...)") from None


def json_result(name: str, result: Any, shape: ToolShape | None = None) -> tuple[Any, str | None, Origin | None]:
    """(the result as a JSON value, None, the result step's origin), or (None, why replay could not hand it back
    as it was, None).  The origin says where the result held whole floats (`21.0`, which the cassette's JSON
    writes `21`), so replay hands them back as floats (`whole_floats`); None when it held none."""
    stored, problem = (shape or _UNTYPED).keep(name, result)
    floats = whole_floats(stored, "/result") if problem is None else ()
    return stored, problem, Origin(floats=floats) if floats else None


def _untyped() -> Any:
    """A tool Blackbox knows nothing of (an MCP call): its results are kept when JSON holds them as they are."""


_UNTYPED = ToolShape(_untyped)
