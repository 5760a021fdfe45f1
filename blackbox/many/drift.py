"""`blackbox drift`: re-send a seeded sample of recorded runs' model calls to the live API and say what moved
(docs/format.md, "Drift").

Per sampled run: its age (`made.at`, else `createdAt`) and what made it; then, with `live`, each recorded
request is sent again as recorded (the provider's codec rebuilds the request from the neutral `model_input`,
as a what-if does: `fork.whatif.LiveModel`), and the answer is compared with the recorded one twice over:

- **shape** (`shapes`): the raw JSON of the live answer against the response replay synthesizes from the
  recorded output (the shape the agent's SDK was proven against), the API's documented optional fields
  (`known_fields`) added to that baseline — a field added is *info*, removed a *warning*, a changed type an
  *error*;
- **behaviour**: each call's kind (final answer or tool calls), tool names, argument keys, finish reason and
  the class of its text (none, text, JSON); the first call whose behaviour differs and the verdict of the
  runs' outcomes are diff's own (`format.diff.compare_rows`, `verdict_of`).  A behaviour change is a warning.

And the model the provider answered with now against the one the recording names (`origin.model`).  The report
is one Struct, printed as text, markdown or JSON by `cli.drift`; the exit status is its worst tier's.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, cast

import msgspec

from blackbox.errors import BlackboxError, CassetteError
from blackbox.format.cassette import Cassette, Step, chain_break, load
from blackbox.format.diff import compare_rows, verdict_of
from blackbox.format.outcome import Outcome
from blackbox.format.provenance import made_at, made_text
from blackbox.many.known_fields import optional_fields
from blackbox.many.shapes import Finding, compare_shapes, shape_of
from blackbox.providers import Provider
from blackbox.providers.neutral import CallIds, calls_of

__all__ = ["EXIT_ERROR", "EXIT_WARNING", "Behaviour", "CallDrift", "DriftReport", "RunDrift", "behaviour_of",
           "drift", "sample_files"]

#: The exit status of a report whose worst finding is a warning (a field removed, a behaviour change) / an error
#: (a field whose type changed).  0: nothing, or information only; 1: a run could not be checked; 2: usage.
EXIT_WARNING = 3
EXIT_ERROR = 4
_RANK: dict[str, int] = {"none": 0, "info": 1, "warning": 2, "error": 3}
DAY_MS = 86_400_000


class Behaviour(msgspec.Struct, frozen=True):
    """What one answer did, as drift compares it (its text's words never: only their class)."""

    kind: str  # final_answer | tool_calls | …
    tools: tuple[str, ...]
    argKeys: tuple[tuple[str, ...], ...]
    finish: str  # the output's `stop`, else `tool_use` / `end`
    text: Literal["none", "text", "json"]


class CallDrift(msgspec.Struct):
    """One re-sent call: the recorded output's step, its shape findings, both behaviours and both models."""

    step: int
    findings: list[Finding]
    recorded: Behaviour
    live: Behaviour
    recordedModel: str | None
    liveModel: str | None

    @property
    def same(self) -> bool:
        return self.recorded == self.live


class RunDrift(msgspec.Struct):
    """One sampled run.  `problem` says why it was not (fully) checked: not a cassette, no model call, the API
    refused; `calls` are those re-sent before it."""

    file: str
    id: str | None = None
    madeAt: float | None = None
    ageDays: float | None = None
    madeWith: str | None = None
    api: str | None = None
    calls: list[CallDrift] = []
    firstDivergence: int | None = None  # the first call (0-based) whose behaviour differs
    verdict: str | None = None  # diff's verdict kind of the two outcomes
    verdictText: str | None = None
    problem: str | None = None

    @property
    def tier(self) -> str:
        tiers = [f.tier for call in self.calls for f in call.findings]
        if self.firstDivergence is not None:
            tiers.append("warning")
        return max(tiers, key=_RANK.__getitem__, default="none")

    def models_changed(self) -> list[tuple[str | None, str]]:
        """(recorded, now) for every answering model that is not the one the recording names, once each."""
        pairs = {(c.recordedModel, c.liveModel) for c in self.calls
                 if c.liveModel is not None and c.liveModel != c.recordedModel}
        return sorted(pairs, key=str)


class DriftReport(msgspec.Struct):
    folder: str
    seed: int
    sample: int
    files: int
    live: bool
    at: int
    runs: list[RunDrift]

    @property
    def tier(self) -> str:
        return max((run.tier for run in self.runs), key=_RANK.__getitem__, default="none")

    def counts(self) -> dict[str, int]:
        """Distinct findings per tier (one finding at every call of a run counts once)."""
        found = {"info": 0, "warning": 0, "error": 0}
        for run in self.runs:
            for finding in {f for call in run.calls for f in call.findings}:
                found[finding.tier] += 1
        return found

    @property
    def exit_code(self) -> int:
        tier = self.tier
        if tier == "error":
            return EXIT_ERROR
        if tier == "warning":
            return EXIT_WARNING
        return 1 if self.live and any(run.problem for run in self.runs) else 0

    def to_dict(self) -> dict[str, Any]:
        doc = cast(dict[str, Any], msgspec.to_builtins(self))
        doc["tier"], doc["exitCode"], doc["findings"] = self.tier, self.exit_code, self.counts()
        for run, shown in zip(self.runs, doc["runs"], strict=True):
            shown["tier"] = run.tier
            shown["modelsChanged"] = [{"recorded": a, "now": b} for a, b in run.models_changed()]
        return doc


def sample_files(folder: Path, size: int, seed: int) -> tuple[list[Path], int]:
    """`size` of the folder's `*.json` files drawn with `seed` (all when there are fewer), in name order; and
    how many there were.  The same folder, size and seed draw the same files."""
    files = sorted(folder.glob("*.json"))
    chosen = random.Random(seed).sample(files, min(size, len(files)))
    return sorted(chosen), len(files)


def _text_class(text: Any) -> Literal["none", "text", "json"]:
    if not isinstance(text, str) or not text.strip():
        return "none"
    try:
        return "json" if isinstance(json.loads(text), dict | list) else "text"
    except ValueError:
        return "text"


def behaviour_of(output: Any) -> Behaviour:
    """The behaviour of one neutral `model_output` payload."""
    body = output if isinstance(output, dict) else {}
    calls = calls_of(body)
    stop = body.get("stop")
    return Behaviour(
        kind=str(body.get("type")),
        tools=tuple(str(call.get("toolName")) for call in calls),
        argKeys=tuple(tuple(sorted(call["toolInput"])) if isinstance(call.get("toolInput"), dict) else ()
                      for call in calls),
        finish=stop if isinstance(stop, str) else ("tool_use" if calls else "end"),
        text=_text_class(body.get("text")))


def _outcome(behaviours: list[Behaviour]) -> Outcome:
    """A run's outcome as its calls' behaviours tell it: success when the last answered, the answer's class."""
    tools = tuple(name for b in behaviours for name in b.tools)
    last = behaviours[-1] if behaviours else None
    if last is not None and last.kind == "final_answer":
        return Outcome("success", final_answer=last.text, tools=tools)
    return Outcome("incomplete", tools=tools)


class _Watched:
    """A provider that keeps the last response body its codec was given (`normalize_response`): the live
    answer's raw JSON, which `LiveModel` itself does not hand out.  Everything else is the provider's."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.body: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def normalize_response(self, body: dict[str, Any], ids: CallIds) -> Any:
        self.body = body
        return self.inner.normalize_response(body, ids)


#: Opens the live model of a provider (its key and base URL from the environment): `LiveModel` in use.
Opener = Callable[[Provider], Any]


def _pairs(cassette: Cassette) -> list[tuple[Step, Step]]:
    """Each recorded request and the output that answered it."""
    steps = cassette.steps
    return [(steps[i], steps[i + 1]) for i in range(len(steps) - 1)
            if steps[i].type == "model_input" and steps[i + 1].type == "model_output"
            and isinstance(steps[i].payload, dict)]


def _recorded_shape(provider: Provider, request: Step, output: Step) -> dict[str, set[str]] | None:
    model = request.payload.get("model")
    try:
        body = provider.synthesize_response(output.payload, step_index=output.index,
                                            timestamp_ms=int(output.timestamp), model=model)
    except (BlackboxError, TypeError, ValueError, KeyError, AttributeError):
        return None  # an output replay cannot answer with: no baseline for its shape
    if output.origin is not None:
        body = provider.with_origin(body, output.origin, len(calls_of(output.payload)))
    return shape_of(body)


def _resend(cassette: Cassette, provider: Provider, opener: Opener, run: RunDrift) -> None:
    """Send each recorded request again; fill `run.calls` (stopping at the first refusal, said in `problem`)."""
    watched = _Watched(provider)
    model = opener(cast(Provider, watched))
    optional = {path: set(types) for path, types in optional_fields(provider.name).items()}
    for request, output in _pairs(cassette):
        model.outputs = [s.payload for s in cassette.steps[:request.index] if s.type == "model_output"]
        watched.body = None
        refused: str | None = None
        try:
            # fresh ids: the live answer's calls are compared by name and argument keys, never by id
            answer = model.reply(dict(request.payload), CallIds())
        except BlackboxError as exc:
            if watched.body is None:  # no answer at all: the API refused, or could not be reached
                run.problem = f"step {request.index}: {exc}"
                return
            refused, answer = str(exc), {"type": "unreadable"}  # an answer the codec cannot read: drift too
        baseline = _recorded_shape(provider, request, output)
        findings: list[Finding] = [] if baseline is None or watched.body is None else \
            compare_shapes(baseline, shape_of(watched.body), optional)
        if refused is not None:
            findings.insert(0, Finding("$", "unreadable", "error"))
        origin = None if refused is not None else getattr(model, "last_origin", None)
        run.calls.append(CallDrift(output.index, findings, behaviour_of(output.payload), behaviour_of(answer),
                                   output.origin.model if output.origin is not None else None,
                                   origin.model if origin is not None else None))
        if refused is not None:
            run.problem = f"step {request.index}: Blackbox cannot read the live answer: {refused}"
            return


def _check(path: Path, now: int, opener: Opener | None, choose: Callable[[Cassette], Provider]) -> RunDrift:
    run = RunDrift(path.name)
    try:
        cassette = load(path)
    except CassetteError as exc:
        run.problem = f"not a cassette ({str(exc).removeprefix(f'{path}: ')})"
        return run
    broken = chain_break(cassette)
    if broken is not None:
        run.problem = f"its hash chain is broken at step {broken.index}; it was not re-sent"
        return run
    run.id, run.madeAt = cassette.id, made_at(cassette.made, cassette.createdAt)
    run.ageDays = round((now - run.madeAt) / DAY_MS, 1)
    run.madeWith = made_text(cassette.made) if cassette.made is not None else None
    if not _pairs(cassette):
        run.problem = "no recorded model call to re-send"
        return run
    if opener is None:
        return run
    try:
        provider = choose(cassette)
    except BlackboxError as exc:
        run.problem = str(exc)
        return run
    run.api = provider.name
    _resend(cassette, provider, opener, run)
    if run.calls:
        recorded, live = [c.recorded for c in run.calls], [c.live for c in run.calls]
        _, run.firstDivergence = compare_rows(len(recorded), len(live), lambda i: recorded[i] == live[i])
        verdict = verdict_of(_outcome(recorded), _outcome(live))
        run.verdict, run.verdictText = verdict.kind, verdict.text
    return run


def drift(folder: Path, size: int, seed: int, *, opener: Opener | None,
          choose: Callable[[Cassette], Provider], now: int | None = None,
          progress: Callable[[int, int], None] | None = None) -> DriftReport:
    """The drift report of `size` runs of `folder` drawn with `seed`; `opener` None reports ages only (no
    request is sent).  `choose` names the provider of a run (`whatif.choose_provider`)."""
    at = int(time.time() * 1000) if now is None else now
    files, total = sample_files(folder, size, seed)
    runs = []
    for n, path in enumerate(files, 1):
        runs.append(_check(path, at, opener, choose))
        if progress is not None:
            progress(n, len(files))
    return DriftReport(str(folder), seed, size, total, opener is not None, at, runs)

