"""The user's object (SPEC §5.1): one recorded, replayed or forked conversation of an agent.

    bb = blackbox.session()                                   # mode etc. from BLACKBOX_* or arguments
    client = anthropic.Anthropic(http_client=bb.http_client())
    tools = bb.tools({"get_weather": get_weather})
    ...
    bb.finish()

Data flow (one way): SDK → `transport` → `Session.open_call` → provider normalizer → `Recorder` (record) or
`Replayer` (replay) → the answer goes back through the transport.  Wrapped tools go through `_tool_begin` / `_tool_end`.

Errors Blackbox raises inside an SDK call become `self._fatal`: the transport answers that request, and every
later one, with an HTTP 400 in the provider's error shape (the SDKs do not retry a 400) whose message starts
with `[blackbox]`; `finish()` re-raises the typed error.

Fork mode (SPEC §8) is a `forking.Fork`: it replays the parent (its replayer is `self._replayer`) until the
agent runs a tool of the fork turn at or after step N (`_fork_tool()`), then its branch recorder becomes
`self._recorder` and `self._replayer` goes; from then on `_model_request()` sends model calls to
`_live_or_scripted()` (the network, or a `Reply` synthesized from the next scripted output).  Settings
(arguments and BLACKBOX_*) are parsed in `blackbox.settings`.

The report (`BLACKBOX_REPORT`, read by `blackbox record|replay|fork -- cmd`), a JSON object written
atomically when the session starts and again when it ends:

    {"version": 1, "mode": "record", "path": "run.json", "steps": 17, "status": "running" | "success" |
     "error" | "incomplete" | "diverged", "finished": true (finish() was called), "written": true (a
     cassette was written), "settings": {"mode", "out", "cassette", "traceId", "forkAt", "forkSet",
     "continue", "script", "match"}, "error": null | "<the error, secrets masked>", "errorType": null | "<class>",
     "step": null | <divergence step>, "pid": <process id>}
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import msgspec

from blackbox import process_exit
from blackbox.canonical import CanonicalError, canonical_text, decode_json, json_value
from blackbox.cassette import Cassette, atomic_write, chain_break, load
from blackbox.errors import BlackboxError, BlackboxUnsupportedError, ReplayDivergenceError, SessionError
from blackbox.forking import Fork
from blackbox.outcome import outcome
from blackbox.providers import anthropic as anthropic_api
from blackbox.providers import openai_chat as openai_api
from blackbox.providers.neutral import CallIds, unsupported
from blackbox.recorder import Recorder, ToolSlot
from blackbox.replayer import ReplayedToolError, Replayer, ToolClaim
from blackbox.settings import UNSET, Settings, default_trace_id, resolve_settings
from blackbox.transport import KEY_HEADERS

__all__ = [
    "Forward",
    "Reply",
    "RunSummary",
    "Session",
    "Settings",
    "default_trace_id",
    "resolve_settings",
    "route",
    "session",
    "terminal_payload",
]

Mode = Literal["off", "record", "replay", "fork"]
F = TypeVar("F", bound=Callable[..., Any])

_ENV_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


def _now_ms() -> int:
    return int(time.time() * 1000)


def _mask(text: str, extra: tuple[str, ...] = ()) -> str:
    from blackbox.secrets import mask_secrets

    return mask_secrets(text, extra=extra)


# ---------------------------------------------------------------------------------------------------------
# what the transport does with a request


class _ModelCall(msgspec.Struct):
    api: str
    model_input: Any
    started_at: int


class Reply(msgspec.Struct):
    """Answer the request here, without the network (a replayed response or a Blackbox error)."""

    status: int
    body: bytes


class Forward(msgspec.Struct):
    """Send the request to the network; `call` is set when the response must be recorded."""

    call: _ModelCall | None = None


class _Api(msgspec.Struct, frozen=True):
    name: str
    module: Any


_APIS = {"anthropic": _Api("anthropic", anthropic_api), "openai": _Api("openai", openai_api)}


def route(path: str) -> str | None:
    """Which API a request path belongs to (§6): anthropic, openai, responses, or None."""
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/responses"):
        return "responses"
    return None


def _json_bytes(value: Any) -> bytes:
    return canonical_text(value).encode()


def _synthesize(api: str, output: dict[str, Any], step_index: int, timestamp: int, model: Any) -> bytes:
    model = model if isinstance(model, str) else None
    if api == "anthropic":
        body = anthropic_api.synthesize_response(output, step_index=step_index, model=model)
    else:
        body = openai_api.synthesize_response(output, step_index=step_index, model=model, timestamp_ms=timestamp)
    return _json_bytes(body)


# ---------------------------------------------------------------------------------------------------------
# the run's end


class RunSummary(msgspec.Struct, frozen=True):
    """What `finish()` returns: the mode, the file, how many steps, and the outcome."""

    mode: str
    path: str | None
    steps: int
    status: str
    result: str | None = None
    reason: str | None = None
    written: bool = False

    def __str__(self) -> str:
        detail = {"success": f'success, result "{self.result}"', "error": f"error, reason {self.reason}"}
        said = detail.get(self.status, self.status)
        if self.mode == "replay":
            return f"replayed {self.steps} steps, {said}"
        if self.written:
            return f"{'forked' if self.mode == 'fork' else 'recorded'} {self.path}: {self.steps} steps, {said}"
        return f"{self.mode}: {said}"


def terminal_payload(*, result: Any = None, error: BaseException | str | None = None,
                     final_answer: str | None = None, exit_code: int | None = None, in_flight: int = 0,
                     secrets: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """The terminal metadata step (§1.1) for how the run ended; None when it ended incomplete."""
    if in_flight:
        return {"event": "run_failed", "status": "error", "reason": "calls_in_flight",
                "exitCode": exit_code or 0, "inFlight": in_flight}
    if exit_code:
        return {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": exit_code}
    if error is not None:
        text = error if isinstance(error, str) else (str(error) or type(error).__name__)
        return {"event": "run_failed", "status": "error", "reason": "agent_error", "message": _mask(text, secrets)}
    if result is not None:
        value = json_value(result, where=lambda: "finish(result=...)")
        return {"event": "run_completed", "status": "success", "result": value}
    if final_answer is not None:
        return {"event": "run_completed", "status": "success", "result": final_answer}
    return None


# ---------------------------------------------------------------------------------------------------------
# the session


class Session:
    """One conversation: record it, replay it, or (mode off) leave it alone.  See the module docstring."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.mode: str = settings.mode
        self.created_at = _now_ms()
        self.trace_id = settings.trace_id or default_trace_id(settings.out)
        self._lock = threading.RLock()
        self._ids = CallIds()
        self._secrets: set[str] = set()
        self._last_key_headers: list[tuple[str, str]] | None = None
        self._model_calls = 0  # in flight
        self._running: dict[int, str] = {}  # id(ticket) → tool name
        self._fatal: BlackboxError | None = None
        self._done: RunSummary | BaseException | None = None
        self._final_answer: str | None = None
        self._recorder: Recorder | None = None
        self._replayer: Replayer | None = None
        self._fork: Fork | None = None
        self._written = False
        self._closing = False
        self._note_env_secrets()
        try:
            self._start_engine()
        except BlackboxError as exc:  # the launcher still learns why no run happened
            self._write_report(exc=exc)
            raise
        self._write_report("running")
        if self.mode != "off":
            process_exit.register(self)

    # -- engines ------------------------------------------------------------------------------------

    def _start_engine(self) -> None:
        if self.mode == "record":
            self._recorder = Recorder(self.settings.out or "", self.trace_id, self.created_at, self._ids,
                                      secrets=self._secret_values)
        elif self.mode == "replay":
            self._replayer = Replayer(self._load_cassette(), self._ids, match=self.settings.match)
        elif self.mode == "fork":
            self._fork = Fork(self._load_cassette(), self.settings, self._ids, self.trace_id, self._secret_values)
            self._replayer = self._fork.replayer

    def _load_cassette(self) -> Cassette:
        cassette = load(self.settings.cassette or "")
        broken = chain_break(cassette)
        if broken is not None:
            raise ReplayDivergenceError(f"{self.settings.cassette}: cannot replay a broken cassette: {broken.reason}"
                                        "; re-record it", step=broken.index)
        return cassette

    # -- secrets ------------------------------------------------------------------------------------

    def _note_env_secrets(self) -> None:
        from blackbox.launcher import PLACEHOLDER_KEYS

        for name in _ENV_KEYS:
            value = os.environ.get(name)
            if value and value != PLACEHOLDER_KEYS.get(name):
                self._secrets.add(value)

    def _note_header_secrets(self, headers: list[tuple[str, str]]) -> None:
        if headers == self._last_key_headers:  # an SDK client sends the same key with every request
            return
        self._last_key_headers = headers
        for name, value in headers:
            if name.lower() in KEY_HEADERS and value:
                secret = value[7:] if value.lower().startswith("bearer ") else value
                if secret.strip():
                    self._secrets.add(secret.strip())

    def _secret_values(self) -> tuple[str, ...]:
        return tuple(self._secrets)

    def mask(self, text: str) -> str:
        """`text` with every key this session has seen, and every credential pattern, redacted."""
        return _mask(text, self._secret_values())

    # -- HTTP clients -------------------------------------------------------------------------------

    def http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """An `httpx2.Client` (or `httpx.Client` with flavor="httpx", for SDKs still on httpx) whose requests
        go through this session.  Extra keyword arguments go to the client (`transport=` is wrapped)."""
        from blackbox.transport import make_client

        return make_client(self, flavor, asynchronous=False, **kwargs)

    def async_http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """The async counterpart of `http_client()`, for `AsyncAnthropic` / `AsyncOpenAI`."""
        from blackbox.transport import make_client

        return make_client(self, flavor, asynchronous=True, **kwargs)

    # -- model calls (called by the transport) ------------------------------------------------------

    def open_call(self, path: str, headers: list[tuple[str, str]], body: bytes) -> Reply | Forward:
        """Decide what happens to one HTTP request: forward it (maybe recording) or answer it here."""
        with self._lock:
            self._note_header_secrets(headers)
            if self.mode == "off":
                return Forward()
            api = route(path)
            if isinstance(self._done, RunSummary | BaseException):
                return self._error_reply(api, SessionError("the session has finished; start a new "
                                                           "blackbox.session() for another run"), fatal=False)
            if self._fatal is not None:
                return self._error_reply(api, self._fatal, fatal=False)
            try:
                return self._model_request(api, path, body)
            except BlackboxError as exc:
                return self._error_reply(api, exc, fatal=True)

    def _model_request(self, api: str | None, path: str, body: bytes) -> Reply | Forward:
        if api is None:
            if self._replayer is not None or (self._fork is not None and not self._fork.live):
                raise BlackboxUnsupportedError(
                    f"the request to {path} would need the network, and replay (or a scripted fork) never uses "
                    "it; only model calls (/v1/messages, /chat/completions) are answered")
            return Forward()
        if api == "responses":
            raise unsupported("the OpenAI Responses API (/responses)",
                              "use client.chat.completions.create(...) for recorded runs")
        self._check_quiet("starts")
        try:
            request = decode_json(body)
        except (msgspec.DecodeError, ValueError):
            raise unsupported("a model request whose body is not JSON", "send a JSON request") from None
        model_input = _APIS[api].module.normalize_request(request, self._ids)
        if self._replayer is not None:
            return self._replay_model(api, request, model_input)
        return self._live_or_scripted(api, request, model_input)

    def _check_quiet(self, when: str) -> None:
        if self._model_calls:
            raise SessionError("overlapping model calls in one session are not supported; one session "
                               "records one conversation, so use one blackbox.session() per concurrent "
                               "conversation")
        if self._running:
            names = ", ".join(sorted(set(self._running.values())))
            raise SessionError(f"a model call {when} while wrapped tools are still running ({names}); await "
                               "the turn's tool calls before calling the model again")

    def _replay_model(self, api: str, request: dict[str, Any], model_input: Any) -> Reply:
        assert self._replayer is not None
        answer = self._replayer.model_call(model_input)
        self._note_output(answer.payload)
        return Reply(200, _synthesize(api, answer.payload, answer.index, answer.timestamp, request.get("model")))

    def _live_or_scripted(self, api: str, request: dict[str, Any], model_input: Any) -> Reply | Forward:
        """The model answers for real (record mode, a live fork), or from the fork's script."""
        if self._fork is not None:
            self._fork.model_call(model_input)
            if not self._fork.live:
                return self._scripted_model(api, request, model_input)
        self._model_calls += 1
        return Forward(_ModelCall(api, model_input, _now_ms()))

    def _scripted_model(self, api: str, request: dict[str, Any], model_input: Any) -> Reply:
        assert self._fork is not None and self._recorder is not None
        started = _now_ms()
        output = self._fork.scripted_output()
        arrived = _now_ms()
        self._recorder.model_step(model_input, started, output, arrived)
        self._note_output(output)
        index = len(self._recorder.steps) - 1
        return Reply(200, _synthesize(api, output, index, arrived, request.get("model")))

    def close_call(self, call: _ModelCall, status: int, content_type: str, body: bytes) -> Reply | None:
        """A forwarded model call came back: record a 2xx JSON answer; None = hand the response over as is."""
        with self._lock:
            self._model_calls -= 1
            if not 200 <= status < 300 or "json" not in content_type.lower():
                return None
            try:
                self._check_quiet("returns")
                response = decode_json(body)
                output = _APIS[call.api].module.normalize_response(response, self._ids)
                assert self._recorder is not None
                self._recorder.model_step(call.model_input, call.started_at, output, _now_ms())
                self._note_output(output)
            except (msgspec.DecodeError, ValueError):
                return self._error_reply(call.api, unsupported("a model response whose body is not JSON",
                                                               "check the API endpoint"), fatal=True)
            except BlackboxError as exc:
                return self._error_reply(call.api, exc, fatal=True)
            return None

    def abort_call(self, call: _ModelCall) -> None:
        """The network failed before a response arrived; nothing is recorded (the SDK may retry)."""
        with self._lock:
            self._model_calls -= 1

    def _note_output(self, output: Any) -> None:
        if isinstance(output, dict) and output.get("type") == "final_answer":
            self._final_answer = str(output.get("text") or "")

    def _error_reply(self, api: str | None, exc: BlackboxError, *, fatal: bool) -> Reply:
        if fatal and self._fatal is None:
            self._fatal = exc
        message = self.mask(str(exc))
        module = _APIS[api].module if api in _APIS else openai_api
        return Reply(400, _json_bytes(module.error_body(message)))

    # -- wrapped tools ------------------------------------------------------------------------------

    def tool(self, name: str, fn: Callable[..., Any] | None = None) -> Any:
        """Wrap one tool under the model's name for it; without `fn`, a decorator."""
        if fn is None:
            return lambda f: self._wrap(name, f)
        return self._wrap(name, fn)

    def tools(self, mapping: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
        """Wrap several tools; keys are the model's tool names."""
        return {name: self._wrap(name, fn) for name, fn in mapping.items()}

    def _wrap(self, name: str, fn: F) -> F:
        if not callable(fn):
            raise TypeError(f"tool {name!r} must be callable, not {type(fn).__name__}")
        if self.mode == "off":
            return fn
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                ticket = self._tool_begin(name, fn, args, kwargs)
                if isinstance(ticket, ToolClaim):
                    return self._replayed_outcome(ticket)
                try:
                    result = await fn(*args, **kwargs)
                except BaseException as exc:
                    self._tool_end(ticket, None, exc)
                    raise
                return self._tool_end(ticket, result, None)

            return run_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            ticket = self._tool_begin(name, fn, args, kwargs)
            if isinstance(ticket, ToolClaim):
                return self._replayed_outcome(ticket)
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                self._tool_end(ticket, None, exc)
                raise
            return self._tool_end(ticket, result, None)

        return run  # type: ignore[return-value]

    def _tool_begin(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> ToolSlot | ToolClaim:
        try:
            tool_input = json_value(_tool_input(fn, args, kwargs), where=lambda: f"the arguments of tool {name!r}")
        except CanonicalError as exc:
            raise SessionError(f"[blackbox] {exc}; pass JSON values (dict, list, str, number, bool, None) to "
                               "wrapped tools") from None
        with self._lock:
            if self._done is not None:
                raise SessionError(f"[blackbox] tool {name!r} was called after finish(): the session has "
                                   "finished; start a new blackbox.session() for another run")
            if self._fatal is not None:
                raise self._fatal
            if self._fork is not None:
                ticket = self._fork_tool(name, tool_input)
            elif self._replayer is not None:
                return self._replay_tool(name, tool_input)
            else:
                assert self._recorder is not None
                ticket = self._recorder.tool_started(name, tool_input, _now_ms())
            if isinstance(ticket, ToolSlot):
                self._running[id(ticket)] = name
            return ticket

    def _replay_tool(self, name: str, tool_input: Any) -> ToolClaim:
        """The recorded call this tool run answers (a fork checks here whether it reached its fork point)."""
        assert self._replayer is not None
        try:
            return self._replayer.claim_tool(name, tool_input)
        except ReplayDivergenceError as exc:
            self._fatal = exc
            raise

    def _fork_tool(self, name: str, tool_input: Any) -> ToolSlot | ToolClaim:
        """Served from the parent, the fork point (the new value), or a real run once the branch started."""
        assert self._fork is not None
        try:
            ticket = self._fork.tool(name, tool_input, _now_ms())
        except ReplayDivergenceError as exc:
            self._fatal = exc
            raise
        if self._fork.recorder is not None and self._replayer is not None:
            self._replayer, self._recorder = None, self._fork.recorder
        return ticket

    def _replayed_outcome(self, claim: ToolClaim) -> Any:
        recorded = claim.outcome or {}
        if "error" in recorded:
            raise ReplayedToolError(str(recorded["error"]))
        return recorded.get("result")

    def _tool_end(self, slot: ToolSlot | ToolClaim, result: Any, error: BaseException | None) -> Any:
        assert isinstance(slot, ToolSlot)
        with self._lock:
            self._running.pop(id(slot), None)
            assert self._recorder is not None
            if error is not None:
                text = str(error) or type(error).__name__
                self._recorder.tool_finished(slot, {"error": self.mask(text)}, _now_ms())
                return None
            try:
                value = json_value(result, where=lambda: f"the result of tool {slot.name!r}")
            except CanonicalError as exc:
                self._recorder.tool_finished(slot, {"error": self.mask(str(exc))}, _now_ms())
                raise SessionError(f"[blackbox] {exc}; return JSON values (dict, list, str, number, bool, "
                                   "None) from tools") from None
            self._recorder.tool_finished(slot, {"result": value}, _now_ms())
            return result

    # -- the end ------------------------------------------------------------------------------------

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            self.finish()
        elif isinstance(exc, Exception):
            self.finish(error=exc)

    def finish(self, result: Any = None, error: BaseException | str | None = None) -> RunSummary:
        """End the run: write the cassette (record) or check the end of the run (replay).

        Twice returns the same summary or raises the same error; refused while model calls or wrapped
        tools are still running.
        """
        with self._lock:
            if isinstance(self._done, RunSummary):
                return self._done
            if isinstance(self._done, BaseException):
                raise self._done
            if self._model_calls or self._running:
                running = sorted(set(self._running.values())) or ["a model call"]
                raise SessionError(f"finish() was called while calls are still running ({', '.join(running)}); "
                                   "await them first")
            try:
                summary = self._close(result=result, error=error, exit_code=None)
            except BlackboxError as exc:
                self._done = exc
                process_exit.unregister(self)
                self._write_report(exc=exc, finished=True)
                raise
            self._done = summary
            process_exit.unregister(self)
            self._write_report(summary=summary, finished=True)
            return summary

    def _close(self, *, result: Any, error: BaseException | str | None, exit_code: int | None) -> RunSummary:
        """Write or check the terminal step; raises the run's fatal error after recording it."""
        self._closing = True
        try:
            return self._close_run(result=result, error=error, exit_code=exit_code)
        finally:
            self._closing = False

    def _close_run(self, *, result: Any, error: BaseException | str | None, exit_code: int | None) -> RunSummary:
        if self.mode == "off":
            return RunSummary("off", None, 0, "error" if error is not None else "success",
                              result=None if result is None else str(result))
        fatal = self._fatal
        if self._fork is not None and not self._fork.reached:
            raise self._fork.not_reached(fatal)
        if fatal is not None and self._recorder is not None:
            error = fatal
        terminal = terminal_payload(result=result, error=error, final_answer=self._final_answer,
                                    exit_code=exit_code, in_flight=self._model_calls + len(self._running),
                                    secrets=self._secret_values())
        if self._replayer is not None:
            if fatal is not None:
                raise fatal
            try:
                ended = self._replayer.finish(terminal)
            except ReplayDivergenceError as exc:
                self._fatal = exc
                raise
            return RunSummary(self.mode, self.settings.cassette, self._replayer.consumed, ended.status,
                              result=ended.final_answer, reason=ended.failure_reason)
        assert self._recorder is not None
        if terminal is not None:
            self._recorder.terminal(terminal, _now_ms())
        cassette = self._recorder.write(self._secret_values())
        self._written = True
        if fatal is not None:
            raise fatal
        ended = outcome(cassette)
        return RunSummary(self.mode, self.settings.out, len(cassette.steps), ended.status,
                          result=ended.final_answer, reason=ended.failure_reason, written=True)

    def close_at_exit(self, exit_code: int) -> None:
        """The process is ending before finish(): write what was recorded (§5.1 "Process exit")."""
        with self._lock:
            if self._done is not None or self._closing:
                return  # finished, or a signal arrived while finish() was writing
            try:
                summary = self._close(result=None, error=None, exit_code=exit_code)
            except BlackboxError as exc:
                self._done = exc
                self._write_report(exc=exc, finished=False)
                return
            self._done = summary
            self._write_report(summary=summary, finished=False)

    # -- the report ---------------------------------------------------------------------------------

    def _write_report(self, status: str | None = None, *, summary: RunSummary | None = None,
                      exc: BaseException | None = None, finished: bool = False) -> None:
        path = self.settings.report
        if not path:
            return
        steps = summary.steps if summary is not None else self._steps_so_far()
        if status is None:
            status = summary.status if summary is not None else (
                "diverged" if isinstance(exc, ReplayDivergenceError) else "error")
        report = {
            "version": 1,
            "mode": self.mode,
            "path": self.settings.out if self.mode in ("record", "fork") else self.settings.cassette,
            "steps": steps,
            "status": status,
            "finished": finished,
            "written": self._written,
            "settings": self.settings.for_report(),
            "error": self.mask(str(exc)) if exc is not None else None,
            "errorType": type(exc).__name__ if exc is not None else None,
            "step": getattr(exc, "step", None),
            "pid": os.getpid(),
        }
        # An unwritable report must not break the run; the launcher then says no session ran.
        with contextlib.suppress(OSError):
            atomic_write(path, _json_bytes(report))

    def _steps_so_far(self) -> int:
        if self._recorder is not None:
            return len(self._recorder.steps)
        if self._replayer is not None:
            return self._replayer.consumed
        return 0

    def __repr__(self) -> str:
        return f"Session(mode={self.mode!r}, trace_id={self.trace_id!r})"


def _tool_input(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The stored input (§7.2): `{}` for no arguments, the value for one, the list for several, the keyword
    arguments as an object; a mix is bound to the parameter names."""
    if not args:
        return dict(kwargs)
    if not kwargs:
        return args[0] if len(args) == 1 else list(args)
    try:
        return dict(inspect.signature(fn).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        return {"args": list(args), "kwargs": dict(kwargs)}


def session(
    mode: Mode | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    cassette: str | os.PathLike[str] | None = None,
    trace_id: str | None = None,
    fork_at: int | None = None,
    fork_set: Any = UNSET,
    continue_with: Literal["live", "script"] | None = None,
    script: str | os.PathLike[str] | None = None,
    match: Literal["strict", "sequence"] | None = None,
) -> Session:
    """Start a session; explicit arguments beat the BLACKBOX_* environment the launcher sets (§5.2)."""
    settings = resolve_settings(mode, out, cassette, trace_id, fork_at, fork_set, continue_with, script, match)
    return Session(settings)
