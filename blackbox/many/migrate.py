"""Should we switch models?  Every recorded run of a folder asked again of a candidate model (`blackbox migrate`).

Each run's conversation is asked again from its first model request, Blackbox driving (`fork.whatif.reask`,
any provider to any provider through the neutral steps); every tool call the candidate makes is answered from
the recording (same tool name, same arguments), and a call the recording never saw by the stated `Unseen`
policy.  Each continuation is written as a fork cassette linked to its run (`parentId`, `forkedFromStepId`: the
first request), verified before it is written.  It is then judged against its run by `blackbox diff`'s
first divergence across agents (what each step *did*: a request by the user's words, a model output by its
kind and calls, tool calls by name and arguments) and its outcome verdict:

- `same`: no behavioural divergence and the same outcome;
- `changed path`: the outcome is the same, the path is not (other tools, other arguments, more or fewer
  calls), or the candidate called a tool the recording never saw and the policy is `fail`;
- `changed outcome`: another status, answer or failure reason;
- `error`: it could not be asked (a broken hash chain, no request, the API refused).

**Pass** = the same path or the same outcome (an unanswered unseen call has no outcome, so it does not pass).
One job per (run, repeat), each independent, so `many.pool.run_all` runs them concurrently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from blackbox.errors import BlackboxError, CassetteError
from blackbox.fork.agent_checks import broken_chain
from blackbox.format.cassette import Cassette, chain_break, load, save
from blackbox.format.diff import diff
from blackbox.format.inert import inert
from blackbox.format.outcome import outcome, summarize_step
from blackbox.format.typed import calls_in
from blackbox.format.verify import verify
from blackbox.many.unseen import Unseen

__all__ = ["CLASSES", "Attempt", "Divergence", "Facts", "Plan", "Skipped", "UnseenCall", "default_out", "facts",
           "find_runs", "judge", "migrate_run", "out_name", "recorded_facts"]

Verdict = Literal["same", "changed path", "changed outcome", "error"]
CLASSES: tuple[Verdict, ...] = ("same", "changed path", "changed outcome", "error")
NEVER_SEEN = "stopped at a call the parent never made"  # how `what_if` names the stop at an unseen call


class Facts(msgspec.Struct):
    """What one side of a comparison did: the tools it called in order, each tool's argument keys (every key
    any of its calls used), how its last model output finished (`tool_calls`, `end`, `length`, `refusal`),
    its model calls, their token counts (None: a step kept none) and latency (output time − request time)."""

    tools: list[str]
    argumentKeys: dict[str, list[str]]
    finish: str | None
    modelCalls: int
    inputTokens: int | None
    outputTokens: int | None
    latencyMs: int | None
    outcome: str


class Divergence(msgspec.Struct):
    """The first step whose behaviour differs: what the run did there and what the candidate did."""

    step: int
    recorded: str
    candidate: str


class UnseenCall(msgspec.Struct):
    """A call the recording never saw: the tool, its argument keys, how it was answered."""

    tool: str
    keys: list[str]
    answered: Literal["no (fail)", "static", "live"]


class Attempt(msgspec.Struct):
    """One continuation of one run: its class, whether it passes, its fork (`file`, relative to the output
    folder), why it stopped, where it diverged, what it did, and what went wrong when it could not run."""

    repeat: int
    verdict: Verdict
    passed: bool
    file: str | None = None
    stopped: str | None = None
    divergence: Divergence | None = None
    verdictText: str | None = None
    unseen: list[UnseenCall] = msgspec.field(default_factory=list)
    candidate: Facts | None = None
    error: str | None = None


class Skipped(msgspec.Struct):
    """A file of the folder that is not a run (not a cassette, or inside the output folder)."""

    file: str
    reason: str


@dataclass(frozen=True)
class Plan:
    """What every job needs: the candidate (`model`, `provider` name), the unseen-call policy, the folders,
    and how to make the model source (`LiveModel`, one per job: it keeps per-conversation state)."""

    model: str
    provider: str
    unseen: Unseen
    source: Path
    out: Path
    make_model: Callable[[], Any]
    env: Mapping[str, str] | None = None


# -- the folder ------------------------------------------------------------------------------------------


def find_runs(folder: Path, out: Path) -> tuple[list[Path], list[Skipped]]:
    """Every cassette under `folder` (recursively, in name order) and every file skipped, with why: not JSON
    named, not a cassette (what the loader said), or inside the output folder (a previous migration)."""
    runs: list[Path] = []
    skipped: list[Skipped] = []
    inside_out = out.resolve()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if path.resolve().is_relative_to(inside_out):
            skipped.append(Skipped(rel, "inside the output folder"))
        elif path.suffix != ".json":
            skipped.append(Skipped(rel, "not a .json file"))
        else:
            try:
                load(path)
            except CassetteError as exc:
                skipped.append(Skipped(rel, _reason(str(exc), path)))
                continue
            runs.append(path)
    return runs, skipped


def _reason(message: str, path: Path) -> str:
    """The loader's one line without the path it starts with (the report names the file)."""
    for prefix in (f"{inert(str(path))}: ", f"{path}: ", f"{path.name}: "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def out_name(rel: str, repeat: int, repeats: int) -> str:
    """The fork's path in the output folder: the run's own, `.2.json`… for the second and later repeats."""
    return rel if repeats <= 1 or repeat == 0 else re.sub(r"\.json$", f".{repeat + 1}.json", rel)


# -- one run ---------------------------------------------------------------------------------------------


def facts(cassette: Cassette) -> Facts:
    """`Facts` of a run, recorded or migrated."""
    keys: dict[str, set[str]] = {}
    finish: str | None = None
    calls = 0
    tokens_in: int | None = 0
    tokens_out: int | None = 0
    latency = 0
    asked_at: Any = None
    for step in cassette.steps:
        if step.type == "model_input":
            asked_at = step.timestamp
        elif step.type == "tool_call" and isinstance(step.payload, dict):
            given = step.payload.get("toolInput")
            keys.setdefault(str(step.payload.get("toolName")), set()).update(given if isinstance(given, dict) else ())
        elif step.type == "model_output":
            calls += 1
            finish = _finish(step.payload, step.view())
            if isinstance(asked_at, int | float) and isinstance(step.timestamp, int | float):
                latency += max(0, int(step.timestamp - asked_at))
            if step.tokens is None:
                tokens_in = tokens_out = None
            elif tokens_in is not None and tokens_out is not None:
                tokens_in, tokens_out = tokens_in + int(step.tokens.input), tokens_out + int(step.tokens.output)
    ended = outcome(cassette)
    return Facts(tools=list(ended.tools), argumentKeys={name: sorted(found) for name, found in keys.items()},
                 finish=finish, modelCalls=calls, inputTokens=tokens_in if calls else None,
                 outputTokens=tokens_out if calls else None, latencyMs=latency if calls else None,
                 outcome=ended.describe())


def _finish(payload: Any, view: Any) -> str:
    stop = payload.get("stop") if isinstance(payload, dict) else None
    if isinstance(stop, str):
        return stop
    return "tool_calls" if calls_in(view) else "end"


def recorded_facts(path: Path) -> Facts | None:
    """The recorded run's `Facts`, None when it cannot be read (its attempt says why)."""
    try:
        return facts(load(path))
    except CassetteError:
        return None


def migrate_run(plan: Plan, path: Path, repeat: int, repeats: int) -> Attempt:
    """Ask run `path` again (repeat number `repeat`), write its fork, judge it.  A job of the pool: it writes
    its fork only at its end (atomically), so a retried job (the API's 429) writes once; `RateLimited`
    propagates for the pool to retry, every other failure is this run's `error`."""
    from blackbox.fork.whatif import RateLimited, reask

    rel = path.relative_to(plan.source).as_posix()
    try:
        parent = load(path)
        broken = chain_break(parent)
        if broken is not None:
            raise broken_chain(rel, broken, "migrate")
        unseen: list[UnseenCall] = []
        name = out_name(rel, repeat, repeats)
        fork, stopped = reask(parent, plan.make_model(), plan.model, trace_id=f"{parent.id}-{_slug(plan.model)}-"
                              f"{repeat + 1}", tool_results=_answerer(plan.unseen, unseen))
        checked = verify(fork, env=plan.env)
        if not checked.ok:
            failure = checked.failure
            raise CassetteError(f"the fork does not verify ({failure.name if failure else '?'}); nothing written")
        save(fork, plan.out / name)
    except RateLimited:
        raise
    except (BlackboxError, OSError) as exc:
        text = f"{exc.strerror or exc} ({exc.filename})" if isinstance(exc, OSError) else str(exc)
        return Attempt(repeat=repeat, verdict="error", passed=False, error=text)
    return judge(parent, fork, stopped, unseen, repeat, name)


def judge(parent: Cassette, fork: Cassette, stopped: str, unseen: list[UnseenCall], repeat: int,
          name: str | None = None) -> Attempt:
    """The class of a continuation against its run (see the module docstring)."""
    report = diff(parent, fork, agents=True)
    kind = report.verdict.kind
    same_outcome = kind in ("no_change", "path_changed")
    same_path = report.first_divergence is None and kind != "path_changed"
    unanswered = stopped.startswith(NEVER_SEEN)
    if unanswered:
        verdict: Verdict = "changed path"
        same_outcome = same_path = False
        text = f"stopped at a call the recording never saw ({unseen[-1].tool if unseen else '?'}); --unseen fail"
    else:
        verdict = "changed outcome" if not same_outcome else "same" if same_path else "changed path"
        text = report.verdict.text
    divergence = None
    if report.first_divergence is not None:
        a, b = report.step_a, report.step_b
        divergence = Divergence(report.first_divergence, summarize_step(a) if a else "(the run ended)",
                                summarize_step(b) if b else "(the candidate ended)")
    return Attempt(repeat=repeat, verdict=verdict, passed=same_path or same_outcome, file=name, stopped=stopped,
                   divergence=divergence, verdictText=text, unseen=unseen, candidate=facts(fork))


def _answerer(policy: Unseen, seen: list[UnseenCall]) -> Callable[[dict[str, Any]], Any]:
    """`what_if`'s `tool_results` for an unseen call: the policy's answer, each call noted in `seen`."""

    def answer(call: dict[str, Any]) -> Any:
        name, given = str(call.get("toolName")), call.get("toolInput")
        keys = sorted(given) if isinstance(given, dict) else []
        result, how = policy.answer(name, given)
        seen.append(UnseenCall(name, keys, how))
        return result

    return answer


def _slug(model: str) -> str:
    """A model name as a file or id part (`claude-sonnet-4-5`, `accounts-fireworks-models-x`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.") or "model"


def default_out(folder: Path, model: str) -> Path:
    """`DIR-migrated-<model>` beside the folder."""
    return folder.parent / f"{folder.name}-migrated-{_slug(model)}"
