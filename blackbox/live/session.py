"""The user's object: one recorded, replayed or forked conversation of an agent (`bb = blackbox.session()`,
an SDK client on `bb.http_client()`, `bb.tools({...})`, `bb.finish()`).

SDK → `transport` → `Session.open_call` → `providers.route(request)` normalizes the request → the mode's
engine (`engines`, `forking`) records it or answers it from the cassette; a recorded stream is teed (`tee`)
and settled when the agent goes on.  Wrapped tools go to the same engine.  The session keeps what every mode
shares: the lock, the fatal error, calls in flight, keys seen, `finish()`, process exit, the report.  A
Blackbox error inside an SDK call becomes the fatal error: that request and every later one get an HTTP 400
in the provider's error shape (not retried) starting `[blackbox]`; `finish()` re-raises it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from importlib import import_module
from typing import Any, TypeVar

from blackbox.errors import BlackboxError, ReplayDivergenceError, SessionError
from blackbox.fork.engine import ForkEngine
from blackbox.format.canonical import canonical_text, decode_json
from blackbox.format.secrets import Secrets
from blackbox.live import process_exit
from blackbox.live.calls import Forward, ModelCall, Reply, Request, StreamSink
from blackbox.live.engines import Ending, Engine, OffEngine, RecordEngine, ReplayEngine, RunSummary, forward, now_ms
from blackbox.live.recorder import ToolSlot
from blackbox.live.replayer import ToolClaim
from blackbox.live.report import SessionReport, write_report
from blackbox.live.sdk_clients import genai_http_options, guard_genai
from blackbox.live.settings import UNSET, Continue, Match, Mode, Pace, Settings, default_trace_id, resolve_settings
from blackbox.live.tee import OpenStreams, not_recorded
from blackbox.live.transport import make_client
from blackbox.live.wrapping import ToolShape, json_input, json_result, wrap_tool
from blackbox.providers import OPENAI_CHAT, Provider, route, unknown_request
from blackbox.providers.neutral import CallIds, unsupported
from blackbox.providers.stream import StreamResult

__all__ = ["RunSummary", "Session", "Settings", "session"]

F = TypeVar("F", bound=Callable[..., Any])


def _engine(settings: Settings, trace_id: str, created_at: int, ids: CallIds, secrets: Secrets) -> Engine:
    if settings.mode in ("record", "fork"):  # with the keys, and when they are known
        return (ForkEngine(settings, trace_id, ids, secrets) if settings.mode == "fork"
                else RecordEngine(settings, trace_id, created_at, ids, secrets))
    return ReplayEngine(settings, ids) if settings.mode == "replay" else OffEngine()


class Session:
    """One conversation: record it, replay it, or (mode off) leave it alone.  See the module docstring."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.mode: Mode = settings.mode
        self.created_at = now_ms()
        self.trace_id = settings.trace_id or default_trace_id(settings.out)
        self.secrets = Secrets()
        self._lock = threading.RLock()
        self._ids = CallIds()
        self._model_calls = 0  # in flight
        self._streams = OpenStreams()  # recorded streams not yet ended (counted in `_model_calls`)
        self._running: dict[int, str] = {}  # id(slot) → tool name
        self._fatal: BlackboxError | None = None
        self._auth_status: int | None = None  # a model call answered 401/403: the launcher's hint (a key)
        self._done: RunSummary | BaseException | None = None
        self._closing = False
        self._engine: Engine = OffEngine()
        try:
            self._engine = _engine(settings, self.trace_id, self.created_at, self._ids, self.secrets)
        except BlackboxError as exc:  # the launcher still learns why no run happened
            self._write_report(exc=exc)
            raise
        self._write_report("running")
        if self.mode != "off":
            process_exit.register(self)

    def mask(self, text: str) -> str:
        """`text` with every key this session has seen, and every credential pattern, redacted."""
        return self.secrets.mask(text)

    def http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """An `httpx2.Client` (flavor="httpx": an `httpx.Client`) through this session; `transport=` is wrapped."""
        guard_genai()
        return make_client(self, flavor, asynchronous=False, **kwargs)

    def async_http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """The async counterpart of `http_client()`, for `AsyncAnthropic` / `AsyncOpenAI`."""
        guard_genai()
        return make_client(self, flavor, asynchronous=True, **kwargs)

    def genai_http_options(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """google-genai's `HttpOptions` with both its clients Blackbox's (`kwargs`: other HttpOptions fields)."""
        return genai_http_options(self, flavor, **kwargs)

    def open_call(self, request: Request) -> Reply | Forward:
        """Decide what happens to one HTTP request: forward it (maybe recording) or answer it here."""
        with self._lock:
            self.secrets.note_request(request)
            if self.mode == "off":
                return Forward()
            provider = route(request)
            if self._done is not None:
                return self._error_reply(provider, SessionError("the session has finished; start a new "
                                                                "blackbox.session() for another run"), fatal=False)
            if self._fatal is not None:
                return self._error_reply(provider, self._fatal, fatal=False)
            try:
                return self._model_request(provider, request)
            except BlackboxError as exc:
                return self._error_reply(provider, exc, fatal=True)

    def _model_request(self, provider: Provider | None, request: Request) -> Reply | Forward:
        if provider is None:
            raise unknown_request(request, offline=self._engine.offline)
        self._check_quiet("starts")
        body, model_input = provider.read_request(request, self._ids)
        decision = self._engine.model_call(provider, body, model_input)
        if isinstance(decision, ModelCall):
            self._model_calls += 1
            return forward(decision, self._ids)
        return decision

    def _check_quiet(self, when: str) -> None:
        self._streams.settle()  # a stream whose final event came is over once the agent goes on
        if self._model_calls:
            raise SessionError("overlapping model calls in one session are not supported (a stream counts until "
                               "it is read to its end or closed); one session records one conversation, so "
                               "use one blackbox.session() per concurrent conversation")
        if self._running:
            names = ", ".join(sorted(set(self._running.values())))
            raise SessionError(f"a model call {when} while wrapped tools are still running ({names}); await them "
                               "first, and leave a tool that calls the model itself unwrapped (wrap the tools it uses)")

    def close_call(self, call: ModelCall, status: int, content_type: str, body: bytes) -> Reply | None:
        """Record a 2xx JSON answer (whatever its header); None = hand the response over as is."""
        with self._lock:
            self._model_calls -= 1
            if not 200 <= status < 300:
                self._auth_status = status if status in (401, 403) else self._auth_status
                return None
            try:
                failed = self._returned(call, decode_json(body))
            except ValueError:  # the SDK's to refuse: not recorded, with a warning
                not_recorded(f"a {status} answer whose body is not JSON ({content_type or 'no content-type'})")
                return None
            return None if failed is None else self._error_reply(call.provider, failed, fatal=True)

    def stream_call(self, call: ModelCall, content_encoding: str | None, content_type: str = "") -> StreamSink:
        """A forwarded model call came back as a 2xx event stream: teed into the provider's assembler."""
        return self._streams.open(call, call.provider.stream, content_encoding, self._stream_ended, content_type)

    def _stream_ended(self, call: ModelCall, result: StreamResult) -> None:
        """Complete: recorded like its unstreamed response (a Blackbox error becomes fatal); else, not at all."""
        with self._lock:
            self._model_calls -= 1
            if result.complete and result.body is not None:
                self._fatal = self._fatal or self._returned(call, result.body)

    def _returned(self, call: ModelCall, response: Any) -> BlackboxError | None:
        """Record a 2xx response body; the Blackbox error it raised, if any."""
        try:
            self._check_quiet("returns")
            self._engine.model_returned(call, call.provider.normalize_response(response, self._ids), response)
        except BlackboxError as exc:
            return exc
        except Exception as exc:  # a body of the wrong shape (`content: 7`): refused, never raised into the SDK
            return unsupported(f"a model response of this shape ({type(exc).__name__})", "check the API endpoint")
        return None

    def abort_call(self, call: ModelCall) -> None:
        """The network failed before a response arrived; nothing is recorded (the SDK may retry)."""
        with self._lock:
            self._model_calls -= 1

    def _error_reply(self, provider: Provider | None, exc: BlackboxError, *, fatal: bool) -> Reply:
        self._fatal = self._fatal or (exc if fatal else None)
        body = (provider or OPENAI_CHAT).error_body(self.mask(str(exc)))
        return Reply(400, canonical_text(body).encode())

    def tool(self, name: str, fn: Callable[..., Any] | None = None) -> Any:
        """Wrap one tool under the model's name for it; without `fn`, a decorator."""
        return (lambda f: self._wrap(name, f)) if fn is None else self._wrap(name, fn)

    def tools(self, mapping: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
        """Wrap several tools; keys are the model's tool names."""
        return {name: self._wrap(name, fn) for name, fn in mapping.items()}

    def _wrap(self, name: str, fn: F) -> F:
        if not callable(fn):
            raise TypeError(f"tool {name!r} must be callable, not {type(fn).__name__}")
        return fn if self.mode == "off" else wrap_tool(name, fn, self._tool_begin, self._tool_end)

    def _tool_begin(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> ToolSlot | ToolClaim:
        with self._lock:
            if self._done is not None:
                raise SessionError(f"[blackbox] tool {name!r} was called after finish(): the session has "
                                   "finished; start a new blackbox.session() for another run")
            if self._fatal is not None:
                raise self._fatal
            self._streams.settle()
            try:
                ticket = self._engine.tool(name, json_input(name, fn, args, kwargs), now_ms())
            except (ReplayDivergenceError, SessionError) as exc:  # the run fails, however the framework takes it
                self._fatal = exc
                raise
            if isinstance(ticket, ToolSlot):
                self._running[id(ticket)] = name
            return ticket

    def _tool_end(self, slot: ToolSlot, value: Any, error: BaseException | None, shape: ToolShape | None = None) -> Any:
        with self._lock:
            self._running.pop(id(slot), None)
            if error is not None:
                self._engine.tool_finished(slot, {"error": self.mask(str(error) or type(error).__name__)}, now_ms())
                return None
            stored, problem, slot.origin = json_result(slot.name, value, shape)  # origin: where whole floats were
            outcome = {"result": stored} if problem is None else {"error": self.mask(problem)}
            self._engine.tool_finished(slot, outcome, now_ms())
            if problem is not None:  # the agent never sees a result the cassette would change: the run fails
                self._fatal = refused = self._fatal or SessionError(f"[blackbox] {self.mask(problem)}")
                raise refused
            return value

    def mcp(self, server: Any, name: str | None = None) -> Any:
        """An MCP transport, Agents SDK server or pydantic-ai toolset under this session (`blackbox.mcp`)."""
        return import_module("blackbox.mcp").attach(self, server, name)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or isinstance(exc, Exception):
            self.finish(error=exc)

    def finish(self, result: Any = None, error: BaseException | str | None = None) -> RunSummary:
        """End the run: write the cassette or check the replay's end (twice: the same answer; refused mid-call)."""
        with self._lock:
            if isinstance(self._done, RunSummary):
                return self._done
            if isinstance(self._done, BaseException):
                raise self._done
            self._streams.abandon_all()
            if self._model_calls or self._running:
                running = sorted(set(self._running.values())) or ["a model call"]
                raise SessionError(f"finish() was called while calls are still running ({', '.join(running)}); "
                                   "await them first")
            self._end(result=result, error=error, exit_code=None, finished=True)
            return self.finish()  # the summary, or the error raised again

    def close_at_exit(self, exit_code: int) -> None:
        """The process is ending before finish(): write what was recorded."""
        with self._lock:
            if self._done is not None or self._closing:
                return  # finished, or a signal arrived while finish() was writing
            self._streams.settle()
            self._end(result=None, error=None, exit_code=exit_code, finished=False)

    def _end(self, *, result: Any, error: BaseException | str | None, exit_code: int | None,
             finished: bool) -> None:
        """Close the run through the engine; the outcome (a summary or the error) becomes `_done`."""
        ending = Ending(result, error, exit_code, in_flight=self._model_calls + len(self._running),
                        secrets=self.secrets.values(), fatal=self._fatal)
        self._closing = True
        try:
            self._done = self._engine.close(ending)
        except BlackboxError as exc:
            self._done = exc
        finally:
            self._closing = False
        if finished:
            process_exit.unregister(self)
        if isinstance(self._done, RunSummary):
            self._write_report(summary=self._done, finished=finished)
        else:
            self._write_report(exc=self._done, finished=finished)

    def _write_report(self, status: str | None = None, *, summary: RunSummary | None = None,
                      exc: BaseException | None = None, finished: bool = False) -> None:
        if self.settings.report:
            steps = summary.steps if summary is not None else self._engine.steps()
            write_report(self.settings.report, SessionReport.of(
                self.settings, steps=steps, status=status or (summary.status if summary is not None else None),
                finished=finished, written=self._engine.written, exc=exc, mask=self.mask,
                journal_error=self._engine.journal_error, auth_status=self._auth_status))

    def __repr__(self) -> str:
        return f"Session(mode={self.mode!r}, trace_id={self.trace_id!r})"


def session(mode: Mode | None = None, *, out: str | os.PathLike[str] | None = None,
            cassette: str | os.PathLike[str] | None = None, trace_id: str | None = None, fork_at: int | None = None,
            fork_set: Any = UNSET, continue_with: Continue | None = None, script: str | os.PathLike[str] | None = None,
            match: Match | None = None, pace: Pace | None = None,
            policy: str | os.PathLike[str] | None = None) -> Session:
    """Start a session; explicit arguments beat the BLACKBOX_* environment (`policy`: docs/format.md#redaction)."""
    settings = resolve_settings(mode, out, cassette, trace_id, fork_at, fork_set, continue_with, script, match,
                                pace, policy=policy)
    return Session(settings)
