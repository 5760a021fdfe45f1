"""Wrapped tools: the function the agent calls instead of its tool, sync or async, and the tool's stored input.

The wrapper asks `begin` what the run is (a real run's `ToolSlot`, or a `ToolClaim` served from the cassette,
whose recorded result is returned or whose recorded error is raised again) and reports a real run's result or
exception to `end`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from blackbox.errors import SessionError
from blackbox.format.canonical import CanonicalError, json_value
from blackbox.live.recorder import ToolSlot
from blackbox.live.replayer import ReplayedToolError, ToolClaim

__all__ = ["RESULT_ADVICE", "json_input", "json_result", "tool_input", "wrap_tool"]

RESULT_ADVICE = "return JSON values (dict, list, str, number, bool, None) from tools"

F = TypeVar("F", bound=Callable[..., Any])
Begin = Callable[[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]], ToolSlot | ToolClaim]
End = Callable[[ToolSlot, Any, BaseException | None], Any]


def _replayed(claim: ToolClaim) -> Any:
    recorded = claim.outcome or {}
    if "error" in recorded:
        raise ReplayedToolError(str(recorded["error"]))
    return recorded.get("result")


def wrap_tool(name: str, fn: F, begin: Begin, end: End) -> F:
    """`fn` wrapped: every call goes through `begin`, and a real run's outcome through `end`."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            ticket = begin(name, fn, args, kwargs)
            if isinstance(ticket, ToolClaim):
                return _replayed(ticket)
            try:
                result = await fn(*args, **kwargs)
            except BaseException as exc:
                end(ticket, None, exc)
                raise
            return end(ticket, result, None)

        return run_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        ticket = begin(name, fn, args, kwargs)
        if isinstance(ticket, ToolClaim):
            return _replayed(ticket)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            end(ticket, None, exc)
            raise
        return end(ticket, result, None)

    return run  # type: ignore[return-value]


def tool_input(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The stored input, as the model asked for it: the arguments bound to the parameter names (a framework
    that calls `get_weather("Paris")` stores `{"city": "Paris"}`, the model's call), `{}` for none, and a single
    dict argument as that dict.  A callable whose signature cannot bind them keeps the value for one argument
    and the list for several."""
    if not args:
        return dict(kwargs)
    if len(args) == 1 and not kwargs and isinstance(args[0], dict):
        return args[0]
    try:
        signature = inspect.signature(fn)
        bound = signature.bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return (args[0] if len(args) == 1 else list(args)) if not kwargs else {"args": list(args),
                                                                              "kwargs": dict(kwargs)}
    stored: dict[str, Any] = {}
    for name, value in bound.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            stored.update(value)
        else:
            stored[name] = list(value) if kind is inspect.Parameter.VAR_POSITIONAL else value
    return stored


def json_input(name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The stored input of one call as a JSON value; a `SessionError` with advice when it has none."""
    try:
        return json_value(tool_input(fn, args, kwargs), where=lambda: f"the arguments of tool {name!r}")
    except CanonicalError as exc:
        raise SessionError(f"[blackbox] {exc}; pass JSON values (dict, list, str, number, bool, None) to "
                           "wrapped tools") from None


def json_result(name: str, result: Any) -> tuple[Any, str | None]:
    """(the result as a JSON value, None), or (None, why it has no JSON form)."""
    try:
        return json_value(result, where=lambda: f"the result of tool {name!r}"), None
    except CanonicalError as exc:
        return None, str(exc)
