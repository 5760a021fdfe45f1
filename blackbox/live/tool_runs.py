"""The door every tool source goes through into a session: a wrapped function (`bb.tool`, `bb.tools`), an MCP
server (`blackbox.mcp`), or any source added later.

A source asks `begin_tool(name, tool_input)` what one run is: a real run's `ToolSlot` (run the tool, then
report its outcome to `end_tool`), or a `ToolClaim` served from the cassette (replay, and a fork before its
fork point: hand back the `result` or `error` of `claim.outcome`, never run the tool).  A source may add
fields of its own to the steps of a real run (`slot.call_extra`, `slot.result_extra`: MCP's server and
method) before `end_tool`.  A divergence or a refused value becomes the session's fatal error, as it does for
a wrapped tool, so the run fails however the source's framework takes the exception.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from blackbox.errors import BlackboxError, ReplayDivergenceError, SessionError
from blackbox.format.canonical import CanonicalError, json_value
from blackbox.live.engines import Engine, RunSummary, now_ms
from blackbox.live.recorder import ToolSlot
from blackbox.live.replayer import ToolClaim
from blackbox.live.settings import Mode
from blackbox.live.tee import OpenStreams
from blackbox.live.wrapping import ToolShape, json_input, json_result, wrap_tool

__all__ = ["ToolRuns"]

F = TypeVar("F", bound=Callable[..., Any])


class ToolRuns:
    """What a session does with tool runs; `Session` is built on it (the attributes below are the session's)."""

    mode: Mode
    _lock: threading.RLock
    _done: RunSummary | BaseException | None
    _fatal: BlackboxError | None
    _streams: OpenStreams
    _engine: Engine
    _running: dict[int, str]  # id(slot) → tool name

    def mask(self, text: str) -> str:
        raise NotImplementedError

    # -- wrapped functions ---------------------------------------------------------------------------

    def tool(self, name: str, fn: Callable[..., Any] | None = None) -> Any:
        """Wrap one tool under the model's name for it; without `fn`, a decorator."""
        return (lambda f: self._wrap(name, f)) if fn is None else self._wrap(name, fn)

    def tools(self, mapping: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
        """Wrap several tools; keys are the model's tool names."""
        return {name: self._wrap(name, fn) for name, fn in mapping.items()}

    def _wrap(self, name: str, fn: F) -> F:
        if not callable(fn):
            raise TypeError(f"tool {name!r} must be callable, not {type(fn).__name__}")
        return fn if self.mode == "off" else wrap_tool(name, fn, self._begin_call, self._end_call)

    def _begin_call(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> ToolSlot | ToolClaim:
        return self._begin(name, lambda: json_input(name, fn, args, kwargs))

    def _end_call(self, slot: ToolSlot, value: Any, error: BaseException | None, shape: ToolShape | None) -> Any:
        return self._finish(slot, value, error, shape)

    # -- any tool source -----------------------------------------------------------------------------

    def begin_tool(self, name: str, tool_input: Any) -> ToolSlot | ToolClaim:
        """One run of tool `name` from a source that is not a wrapped function; `tool_input` is what the step
        stores (a JSON value: a `SessionError` when it is not).  A `ToolSlot`: run it and call `end_tool`; a
        `ToolClaim`: answer with its recorded `outcome` (the step's payload: its `result`, or its `error`)."""

        def stored() -> Any:
            try:
                return json_value(tool_input, where=lambda: f"the input of tool {name!r}")
            except CanonicalError as exc:
                raise SessionError(f"[blackbox] {exc}; a tool source stores JSON values only") from None

        return self._begin(name, stored)

    def end_tool(self, slot: ToolSlot, result: Any = None, error: BaseException | str | None = None) -> Any:
        """The outcome of a real run `begin_tool` started: its JSON result, or its error (an exception or the
        text the step stores).  A result JSON cannot hold fails the run (`SessionError`)."""
        return self._finish(slot, result, error, None)

    # -- the engine ----------------------------------------------------------------------------------

    def _begin(self, name: str, stored: Callable[[], Any]) -> ToolSlot | ToolClaim:
        with self._lock:
            if self._done is not None:
                raise SessionError(f"[blackbox] tool {name!r} was called after finish(): the session has "
                                   "finished; start a new blackbox.session() for another run")
            if self._fatal is not None:
                raise self._fatal
            self._streams.settle()
            try:
                ticket = self._engine.tool(name, stored(), now_ms())
            except (ReplayDivergenceError, SessionError) as exc:  # the run fails, however the framework takes it
                self._fatal = exc
                raise
            if isinstance(ticket, ToolSlot):
                self._running[id(ticket)] = name
            return ticket

    def _finish(self, slot: ToolSlot, value: Any, error: BaseException | str | None,
                shape: ToolShape | None) -> Any:
        with self._lock:
            self._running.pop(id(slot), None)
            if error is not None:
                text = error if isinstance(error, str) else str(error) or type(error).__name__
                self._engine.tool_finished(slot, {"error": self.mask(text)}, now_ms())
                return None
            stored, problem, slot.origin = json_result(slot.name, value, shape)  # origin: where whole floats were
            outcome = {"result": stored} if problem is None else {"error": self.mask(problem)}
            self._engine.tool_finished(slot, outcome, now_ms())
            if problem is not None:  # the agent never sees a result the cassette would change: the run fails
                self._fatal = refused = self._fatal or SessionError(f"[blackbox] {self.mask(problem)}")
                raise refused
            return value
