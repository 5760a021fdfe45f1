"""Running a sweep's branches: each one a fork of the parent continued (what-if, or the agent), written under
`branches/`, judged, and recorded in the manifest as it finishes.

The prefix is never asked again: a what-if branch copies it (`fork.whatif.what_if`) and a branch run by the
agent replays it from the parent (`blackbox fork … -- agent`, which serves the recorded calls), so the only
requests are the continuation's.  Live branches share one pooled HTTP client (closed when the sweep ends).
Branches run through `many.pool.run_all`, each job made as it is handed out; the manifest is rewritten
(atomically) in this thread as branches finish (at most every `WRITE_EVERY` seconds, and at the end), so Ctrl-C
leaves it whole and naming every branch that finished.  A branch that could not run
(an API error, an agent that wrote nothing) ends with verdict `error`, and a resume runs it again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import msgspec

from blackbox.errors import BlackboxError
from blackbox.fork.whatif import (
    LiveModel,
    ModelSource,
    RateLimited,
    ScriptedModel,
    Unreachable,
    choose_provider,
    what_if,
)
from blackbox.format.canonical import canonical_bytes
from blackbox.format.cassette import Cassette
from blackbox.format.expectations import Expectations
from blackbox.format.inert import inert
from blackbox.format.writing import atomic_write, dumps
from blackbox.live.redaction import ACTIVE, active_redactor, chosen
from blackbox.many.folder import PARENT, Branch, Sweep, write_sweep
from blackbox.many.judge import expectations_of, judge
from blackbox.many.plan import variant_value
from blackbox.many.pool import Done, run_all

if TYPE_CHECKING:
    import httpx

__all__ = ["SEED_VARIABLE", "cost_of", "pending", "run_sweep"]

#: The branch seed given to an agent, to seed its own randomness with (the launcher clears BLACKBOX_*).
SEED_VARIABLE = "SWEEP_SEED"
#: Seconds between two writes of the manifest while branches finish (and once at the end, or on Ctrl-C): a
#: write per branch made the one writing thread the bottleneck of a 1,000-branch sweep (two fsyncs each).  A
#: sweep killed harder than Ctrl-C loses at most this much of the manifest, and a resume takes the what-if
#: branches written meanwhile from their files instead of asking for them again.
WRITE_EVERY = 0.5


def pending(sweep: Sweep, folder: Path | None = None) -> list[int]:
    """The branches still to run: never finished, ended in `error` (it could not run: a resume tries again),
    or (with `folder`) finished but their file is gone (branches are written without fsync: an OS crash)."""
    def todo(branch: Branch) -> bool:
        if branch.verdict is None or branch.verdict == "error":
            return True
        return folder is not None and branch.file is not None and not (folder / branch.file).is_file()

    return [i for i, b in enumerate(sweep.branches) if todo(b)]


def cost_of(prices: dict[str, float], input_tokens: int, output_tokens: int) -> float | None:
    """The branch's cost at `prices` (per million tokens), or None when none were given."""
    if not prices:
        return None
    return (input_tokens * prices.get("input", 0.0) + output_tokens * prices.get("output", 0.0)) / 1_000_000


class _Context:
    """What every branch of one sweep shares."""

    def __init__(self, folder: Path, sweep: Sweep, parent: Cassette, script: list[dict[str, Any]] | None,
                 client: httpx.Client | None, redactor: Any) -> None:
        self.folder, self.sweep, self.parent, self.script, self.client = folder, sweep, parent, script, client
        self.redactor = chosen(redactor)  # found once (reading pyproject.toml), not per branch
        self.expected: Expectations = expectations_of(sweep.settings.expect)
        self.variants = {v.name: v for v in sweep.variants}
        self.policy: Path | None = None  # passed on to an agent's fork

    def model(self, ask: str | None) -> ModelSource:
        if self.script is not None:
            return ScriptedModel(self.script)
        settings = self.sweep.settings
        return LiveModel(choose_provider(self.parent, settings.provider, ask), client=self.client)

    def what_if_job(self, branch: Branch) -> Branch:
        variant = self.variants[branch.variant]
        at = self.sweep.settings.at
        out = self.folder / str(branch.file)
        if branch.verdict is None and out.is_file():
            return msgspec.structs.replace(branch, stopped="taken from its file (finished before a resume)")
        fork, reason = what_if(self.parent, at, variant_value(variant, self.parent, at), self.model(variant.model),
                               trace_id=Path(str(branch.file)).stem, ask_model=variant.model,
                               redactor=self.redactor)
        atomic_write(out, dumps(fork), durable=False)  # atomic; one OS crash may lose it: a resume redoes it
        return msgspec.structs.replace(branch, stopped=reason)

    def agent_job(self, branch: Branch) -> Branch:
        settings, variant = self.sweep.settings, self.variants[branch.variant]
        out = self.folder / str(branch.file)
        out.unlink(missing_ok=True)  # a half-run branch from a killed sweep: the agent's fork writes it anew
        value = canonical_bytes(variant_value(variant, self.parent, settings.at)).decode()
        how = ["--script", str(settings.script)] if settings.script else ["--live"]
        if self.policy is not None:
            how += ["--policy", str(self.policy)]
        args = [sys.executable, "-m", "blackbox", "fork", str(self.folder / PARENT), "--at", str(settings.at),
                "--set", value, "--out", str(out), *how, "--", *settings.command]
        env = {**os.environ, SEED_VARIABLE: str(branch.seed)}
        done = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
        if not out.is_file():
            lines = [line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
            raise BlackboxError(f"the agent's fork wrote no branch (exit {done.returncode})"
                                + (f": {lines[-1].strip()}" if lines else ""))
        return msgspec.structs.replace(branch, stopped=f"agent exit {done.returncode}")

    def job(self, branch: Branch) -> Callable[[], Branch]:
        run = self.agent_job if self.sweep.settings.mode == "agent" else self.what_if_job

        def one() -> Branch:
            started = time.perf_counter()
            try:
                ran = run(branch)
            except (RateLimited, Unreachable):
                raise  # the pool waits and runs it again
            except (BlackboxError, OSError) as exc:
                return msgspec.structs.replace(branch, verdict="error", error=inert(str(exc)),
                                               seconds=time.perf_counter() - started)
            return self.judged(ran, time.perf_counter() - started)

        return one

    def judged(self, branch: Branch, seconds: float) -> Branch:
        try:
            found = judge(self.parent, self.folder / str(branch.file), self.sweep.settings.at, self.expected)
        except BlackboxError as exc:
            return msgspec.structs.replace(branch, verdict="error", error=inert(str(exc)), seconds=seconds)
        return msgspec.structs.replace(
            branch, verdict=found.verdict, failed=found.failed, error=None, divergence=found.divergence,
            outcomeChanged=found.outcomeChanged, change=found.change, inputTokens=found.inputTokens,
            outputTokens=found.outputTokens, seconds=seconds,
            cost=cost_of(self.sweep.settings.prices, found.inputTokens, found.outputTokens))


class _Jobs(Sequence[Callable[[], Branch]]):
    """The pending branches' jobs, each made when the pool hands it out: a list of them made up front would
    hold a closure and the branch's pre-run record per branch for the whole sweep (memory growing with it)."""

    def __init__(self, context: _Context, todo: list[int]) -> None:
        self.context, self.todo = context, todo

    def __len__(self) -> int:
        return len(self.todo)

    @overload
    def __getitem__(self, index: int) -> Callable[[], Branch]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Callable[[], Branch]]: ...

    def __getitem__(self, index: int | slice) -> Callable[[], Branch] | Sequence[Callable[[], Branch]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self.context.job(self.context.sweep.branches[self.todo[index]])


def run_sweep(folder: Path, sweep: Sweep, parent: Cassette, *, script: list[dict[str, Any]] | None = None,
              client: httpx.Client | None = None, on_progress: Callable[[int, int], None] | None = None,
              on_wait: Callable[[str], None] | None = None, policy: Path | None = None) -> Sweep:
    """Run every pending branch of `sweep` in `folder` (its manifest rewritten as they finish), return it done.
    KeyboardInterrupt is re-raised once the manifest holds every branch finished so far.  `policy`: the
    redaction policy file (`--policy`; None: the one in force, as every writer of a cassette finds it)."""
    (folder / "branches").mkdir(parents=True, exist_ok=True)
    context = _Context(folder, sweep, parent, script, client,
                       ACTIVE if policy is None else active_redactor(policy))
    context.policy = policy
    todo = pending(sweep, folder)
    for index in todo:  # a finished branch whose file is gone runs again from scratch
        sweep.branches[index] = msgspec.structs.replace(sweep.branches[index], verdict=None)
    total = len(sweep.branches)
    finished = [total - len(todo)]
    if on_progress is not None:
        on_progress(finished[0], total)

    written = [float("-inf")]  # the first finished branch is written at once

    def on_done(done: Done[Branch]) -> None:
        index = todo[done.index]
        if done.error is not None:  # refused (429/503) every time, or a fault the job did not expect
            sweep.branches[index] = msgspec.structs.replace(
                sweep.branches[index], verdict="error", error=inert(str(done.error)), seconds=done.seconds)
        elif done.value is not None:
            sweep.branches[index] = done.value
        finished[0] += 1
        if time.monotonic() - written[0] >= WRITE_EVERY:
            write_sweep(folder, sweep)
            written[0] = time.monotonic()
        if on_progress is not None:
            on_progress(finished[0], total)

    try:
        run_all(_Jobs(context, todo), sweep.settings.concurrency, on_done, on_wait=on_wait)
    finally:  # Ctrl-C included: the manifest names every branch finished so far
        write_sweep(folder, sweep)
    return sweep
