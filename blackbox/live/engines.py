"""One engine per mode: what a model call and a wrapped tool run are, and how the run ends.

The session owns the user-facing object (the lock, the tool wrappers, `finish()`, process exit) and hands
each normalized model request and each tool run to its engine:

- `RecordEngine`: model calls go to the network and come back to be recorded; tools really run.
- `ReplayEngine`: model calls are answered from the cassette; tools are served their recorded outcome.
- `fork.engine.ForkEngine`: replays the parent up to the fork point, then records (live or scripted).
- `OffEngine`: mode off; the session forwards everything and wraps nothing.

An engine raises `BlackboxError`s; the session turns them into the run's fatal error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from blackbox.errors import BlackboxError, ReplayDivergenceError
from blackbox.format.canonical import canonical_text, json_value
from blackbox.format.cassette import Cassette, chain_break, load
from blackbox.format.origin import Origin
from blackbox.format.outcome import outcome
from blackbox.format.payloads import Metadata, ModelInput, ModelOutput
from blackbox.format.secrets import Secrets, mask_secrets
from blackbox.format.writing import json_body
from blackbox.live.calls import SSE, Forward, ModelCall, Reply, now_ms
from blackbox.live.recorder import Recorder, ToolSlot
from blackbox.live.redaction import active_redactor
from blackbox.live.replayer import Replayer, ToolClaim
from blackbox.live.settings import Mode, Pace, Settings
from blackbox.providers import Provider
from blackbox.providers.neutral import CallIds, calls_of

__all__ = [
    "Ending",
    "Engine",
    "OffEngine",
    "RecordEngine",
    "ReplayEngine",
    "RunSummary",
    "answer",
    "forward",
    "load_replayable",
    "now_ms",
    "terminal_payload",
]

Outcome = dict[str, Any]  # a wrapped tool's {"result": …} or {"error": "…"}


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
                     secrets: tuple[str, ...] = ()) -> Metadata | None:
    """The terminal metadata step for how the run ended; None when it ended incomplete."""
    if in_flight:
        return {"event": "run_failed", "status": "error", "reason": "calls_in_flight",
                "exitCode": exit_code or 0, "inFlight": in_flight}
    if exit_code:
        return {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": exit_code}
    if error is not None:
        text = error if isinstance(error, str) else (str(error) or type(error).__name__)
        return {"event": "run_failed", "status": "error", "reason": "agent_error",
                "message": mask_secrets(text, extra=secrets)}
    if result is not None:
        value = json_value(result, where=lambda: "finish(result=...)")
        return {"event": "run_completed", "status": "success", "result": value}
    if final_answer is not None:
        return {"event": "run_completed", "status": "success", "result": final_answer}
    return None


@dataclass(frozen=True, slots=True)
class Ending:
    """How the agent ended the run (`finish()` or process exit), and the fatal error Blackbox raised, if any."""

    result: Any = None
    error: BaseException | str | None = None
    exit_code: int | None = None
    in_flight: int = 0
    secrets: tuple[str, ...] = ()
    fatal: BlackboxError | None = None

    def terminal(self, final_answer: str | None, *, fatal_is_the_error: bool) -> Metadata | None:
        """The terminal payload; a recording run that hit a fatal error ends with that error."""
        error = self.fatal if fatal_is_the_error and self.fatal is not None else self.error
        return terminal_payload(result=self.result, error=error, final_answer=final_answer,
                                exit_code=self.exit_code, in_flight=self.in_flight, secrets=self.secrets)


class Engine(Protocol):
    """What the session asks, whatever the mode."""

    mode: Mode

    @property
    def offline(self) -> bool:
        """A request that is not a model call is refused (it would need the network)."""
        ...

    def steps(self) -> int:
        """How many steps the run has so far (recorded, or replayed from the cassette)."""
        ...

    @property
    def written(self) -> bool:
        """Whether a cassette was written."""
        ...

    @property
    def journal_error(self) -> str | None:
        """Why the crash journal stopped being written (a full disk…), or None."""
        ...

    def model_call(self, provider: Provider, request: dict[str, Any], model_input: ModelInput) -> Reply | ModelCall:
        """Answer a normalized model request here, or a `ModelCall` to send to the network and record."""
        ...

    def model_returned(self, call: ModelCall, output: ModelOutput, body: dict[str, Any] | None = None) -> None:
        """Record a forwarded call's normalized response; `body`, the response it came from, gives the call's
        token counts (`Provider.token_counts`), kept beside the output step."""
        ...

    def tool(self, name: str, tool_input: Any, at: int) -> ToolSlot | ToolClaim:
        """A wrapped tool run: a real run (`ToolSlot`) or served from the cassette (`ToolClaim`)."""
        ...

    def tool_finished(self, slot: ToolSlot, outcome: Outcome, at: int) -> None:
        """A real tool run ended with `outcome`."""
        ...

    def close(self, ending: Ending) -> RunSummary:
        """Write or check the end of the run; raises the run's fatal error after recording it."""
        ...


#: Characters per text or arguments delta when a replayed stream keeps the recorded pace (more, smaller chunks).
PACED_PIECE = 16


def answer(provider: Provider, output: ModelOutput, index: int, timestamp: float, request: dict[str, Any],
           ids: CallIds, *, spread_ms: int = 0, origin: Origin | None = None) -> Reply:
    """The reply carrying a recorded (or scripted) output: the provider's response body, or its event stream
    when the request streams (spread over `spread_ms` milliseconds, else sent as fast as the agent reads).
    With the recorded call's `origin`, the body carries the ids and model the recorded agent was given
    (docs/format.md, "Origin"); without, Blackbox's own (`call-N`)."""
    model = request.get("model")
    body = provider.synthesize_response(output, step_index=index, timestamp_ms=int(timestamp),
                                        model=model if isinstance(model, str) else None)
    if output.get("type") != "final_answer":  # an answer names no call to note
        provider.note_replayed(body, ids)
    if origin is not None and origin.api == provider.name:
        body = provider.with_origin(body, origin, len(calls_of(output)))
    provider.note_answer(request, body, ids, live=False)
    if not provider.is_stream(request):
        return Reply(200, _body_bytes(body))
    chunks = provider.stream.synthesize(body, piece_size=PACED_PIECE if spread_ms > 0 else None)
    pause = spread_ms / 1000 / (len(chunks) - 1) if spread_ms > 0 and len(chunks) > 1 else 0.0
    return Reply(200, b"".join(chunks), SSE, chunks=chunks, pause=pause)


def forward(call: ModelCall, ids: CallIds) -> Forward:
    """Send a model call to the network: as the agent sent it, or, when it names server state only a replay knew
    (a fork's live branch continuing an Anthropic thread), as the provider restates it whole (`outgoing`)."""
    instead = call.provider.outgoing(call.request, ids) if isinstance(call.request, dict) else None
    return Forward(call, None if instead is None else _body_bytes(instead))


def _body_bytes(body: dict[str, Any]) -> bytes:
    """A replayed response body's JSON: written plainly (the SDK reads any key order), or as canonical JSON
    when that cannot be (a lone surrogate in a recorded string, which canonical JSON escapes)."""
    try:
        return json_body(body)
    except (UnicodeEncodeError, TypeError, ValueError, OverflowError, RecursionError):
        return canonical_text(body).encode()


def final_text(output: Any) -> str | None:
    """The final answer an output gives, or None."""
    if isinstance(output, dict) and output.get("type") == "final_answer":
        return str(output.get("text") or "")
    return None


def load_replayable(path: str) -> Cassette:
    """The cassette to replay, refused when its chain is broken."""
    cassette = load(path)
    broken = chain_break(cassette)
    if broken is not None:
        raise ReplayDivergenceError(f"{path}: cannot replay a broken cassette: {broken.reason}; re-record it",
                                    step=broken.index)
    return cassette


class _Answering:
    """What both halves note of a model output: the final answer, for the run's summary."""

    final_answer: str | None = None

    def _note_output(self, output: Any) -> None:
        text = final_text(output)
        if text is not None:
            self.final_answer = text


class Recording(_Answering):
    """The recording half shared by record mode and a fork's branch."""

    mode: Mode
    recorder: Recorder | None
    _ids: CallIds
    final_answer: str | None = None
    _written = False

    @property
    def written(self) -> bool:
        return self._written

    @property
    def journal_error(self) -> str | None:
        """Why the crash journal stopped being written (a full disk…), or None."""
        return self.recorder.journal_error if self.recorder is not None else None

    def _recorder(self) -> Recorder:
        if self.recorder is None:
            raise RuntimeError("no recording is running")
        return self.recorder

    def model_returned(self, call: ModelCall, output: ModelOutput, body: dict[str, Any] | None = None) -> None:
        arrived = call.arrived_at if call.arrived_at is not None else now_ms()
        tokens = call.provider.token_counts(body) if body is not None else None
        origin = call.provider.origin(body) if isinstance(body, dict) else None
        if isinstance(body, dict) and isinstance(call.request, dict):
            call.provider.note_answer(call.request, body, self._ids, live=True)
        self._recorder().model_step(call.model_input, call.started_at, output, arrived, tokens, origin)
        self._note_output(output)

    def tool_finished(self, slot: ToolSlot, outcome: Outcome, at: int) -> None:
        self._recorder().tool_finished(slot, outcome, at)

    def _write(self, ending: Ending, path: str | None) -> RunSummary:
        recorder = self._recorder()
        terminal = ending.terminal(self.final_answer, fatal_is_the_error=True)
        if terminal is not None:
            recorder.terminal(terminal, now_ms())
        cassette = recorder.write(ending.secrets)
        self._written = True
        if ending.fatal is not None:
            raise ending.fatal
        ended = outcome(cassette)
        return RunSummary(self.mode, path, len(cassette.steps), ended.status, result=ended.final_answer,
                          reason=ended.failure_reason, written=True)


class RecordEngine(Recording):
    """Record mode: model calls go to the network and are recorded; tools really run."""

    mode: Mode = "record"
    offline = False

    def __init__(self, settings: Settings, trace_id: str, created_at: int, ids: CallIds, secrets: Secrets) -> None:
        self.out = settings.out or ""
        self._ids = ids
        self.recorder = Recorder(self.out, trace_id, created_at, ids, secrets=secrets,
                                 redactor=active_redactor(settings.policy))

    def steps(self) -> int:
        return len(self._recorder().steps)

    def model_call(self, provider: Provider, request: dict[str, Any], model_input: ModelInput) -> Reply | ModelCall:
        self._recorder().keys_known()  # the request's key headers are noted: the held journal can be written
        return ModelCall(provider, model_input, now_ms(), provider.is_stream(request), request=request)

    def tool(self, name: str, tool_input: Any, at: int) -> ToolSlot | ToolClaim:
        return self._recorder().tool_started(name, tool_input, at)

    def close(self, ending: Ending) -> RunSummary:
        return self._write(ending, self.out)


class Replaying(_Answering):
    """The replaying half shared by replay mode and a fork before its fork point."""

    replayer: Replayer
    final_answer: str | None = None
    pace: Pace = "fast"

    def _replayed(self, provider: Provider, request: dict[str, Any], model_input: ModelInput) -> Reply:
        step = self.replayer.claim_model_call(model_input)
        self._note_output(step.payload)
        spread = self.replayer.duration_ms(step) if self.pace == "recorded" else 0
        return answer(provider, step.payload, step.index, step.timestamp, request, self.replayer.ids,
                      spread_ms=spread, origin=step.origin)


class ReplayEngine(Replaying):
    """Replay mode: model calls are answered from the cassette; tools are served their recorded outcome."""

    mode: Mode = "replay"
    offline = True
    written = False
    journal_error = None

    def __init__(self, settings: Settings, ids: CallIds) -> None:
        self.path = settings.cassette or ""
        self.pace = settings.pace
        self.replayer = Replayer(load_replayable(self.path), ids, match=settings.match,
                                 redact=active_redactor(settings.policy))

    def steps(self) -> int:
        return self.replayer.consumed

    def model_call(self, provider: Provider, request: dict[str, Any], model_input: ModelInput) -> Reply | ModelCall:
        return self._replayed(provider, request, model_input)

    def model_returned(self, call: ModelCall, output: ModelOutput, body: dict[str, Any] | None = None) -> None:
        raise RuntimeError("replay sends no model call to the network")

    def tool(self, name: str, tool_input: Any, at: int) -> ToolSlot | ToolClaim:
        return self.replayer.claim_tool(name, tool_input)

    def tool_finished(self, slot: ToolSlot, outcome: Outcome, at: int) -> None:
        raise RuntimeError("replay runs no tool")

    def close(self, ending: Ending) -> RunSummary:
        terminal = ending.terminal(self.final_answer, fatal_is_the_error=False)
        if ending.fatal is not None:
            raise ending.fatal
        ended = self.replayer.finish(terminal)
        return RunSummary(self.mode, self.path, self.replayer.consumed, ended.status, result=ended.final_answer,
                          reason=ended.failure_reason)


class OffEngine:
    """Mode off: the session forwards every request and wraps no tool, so only `close` is ever asked."""

    mode: Mode = "off"
    offline = False
    written = False
    journal_error = None

    def steps(self) -> int:
        return 0

    def model_call(self, provider: Provider, request: dict[str, Any], model_input: ModelInput) -> Reply | ModelCall:
        raise RuntimeError("mode off forwards every request")

    def model_returned(self, call: ModelCall, output: ModelOutput, body: dict[str, Any] | None = None) -> None:
        raise RuntimeError("mode off records nothing")

    def tool(self, name: str, tool_input: Any, at: int) -> ToolSlot | ToolClaim:
        raise RuntimeError("mode off wraps no tool")

    def tool_finished(self, slot: ToolSlot, outcome: Outcome, at: int) -> None:
        raise RuntimeError("mode off wraps no tool")

    def close(self, ending: Ending) -> RunSummary:
        return RunSummary("off", None, 0, "error" if ending.error is not None else "success",
                          result=None if ending.result is None else str(ending.result))
