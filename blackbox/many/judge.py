"""One branch of a sweep, judged: the checks `blackbox assert` runs, its first behavioural divergence from the
parent, the outcome verdict of the diff, and its tokens.

The judgement reads the branch cassette as written (the file, loaded and verified), so a branch passes only
when what is on disk verifies, is linked to the parent (its `parentId`, its fork point, the prefix's hashes)
and meets every expectation: `blackbox assert`'s `ok`, from the same `verify` and `check_expectations`.

"Behavioural" divergence: the fork point itself differs by construction (the edit), and a request after it
carries the edited value, so neither says anything about behaviour.  The first step after the fork point where
the model's output, a tool call, or the run's end differs from the parent's (by type or payload, JSON equality)
is the step where the model or the agent acted otherwise.  It is the diff's `compare_rows` with that notion of
"same"; the verdict is the diff's `verdict_of` of the two outcomes.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from blackbox.errors import CassetteError
from blackbox.format.cassette import Cassette, Step, load
from blackbox.format.diff import compare_rows, verdict_of
from blackbox.format.expectations import Expectations, check_expectations
from blackbox.format.firstdiff import json_equal
from blackbox.format.outcome import outcome
from blackbox.format.verify import verify

__all__ = ["Judged", "behavioural_divergence", "expectations_of", "judge"]

#: Steps that carry what was sent rather than what was done: the same type is the same behaviour.
CARRIERS = frozenset({"model_input", "tool_result"})
#: The verdicts of the diff that say the outcome changed (a path change alone is a divergence, not an outcome).
OUTCOME_CHANGES = frozenset({"status_flipped", "answer_changed", "reason_changed"})


class Judged(msgspec.Struct):
    """What one branch came to: `verdict` pass/fail, the one-line reasons of each failed check, the first
    behavioural divergence (None: it did what the parent did), the outcome verdict's kind and tokens."""

    verdict: str
    failed: list[str]
    divergence: int | None
    change: str
    outcomeChanged: bool
    inputTokens: int
    outputTokens: int


def expectations_of(expect: dict[str, str]) -> Expectations:
    """The sweep's checks (by their `assert` flag names, as the manifest keeps them) as `Expectations`; none
    given means the run must succeed."""
    if not expect:
        return Expectations(status="success")
    return Expectations.from_tool_list(expect.get("expect-tools"), status=expect.get("expect-status"),
                                       final_answer=expect.get("expect-final-answer"),
                                       failure_reason=expect.get("expect-failure-reason"))


def _same_behaviour(a: Step, b: Step, at: int) -> bool:
    if a.index <= at:
        return True  # the copied prefix, and the fork point (the edit itself)
    if a.type != b.type:
        return False
    return a.type in CARRIERS or json_equal(a.payload, b.payload)


def behavioural_divergence(parent: Cassette, fork: Cassette, at: int) -> int | None:
    """The first step after `at` where the fork acted otherwise than the parent (None: never)."""
    pa, fo = parent.steps, fork.steps
    _, first = compare_rows(len(pa), len(fo), lambda i: _same_behaviour(pa[i], fo[i], at))
    return first


def _linked(parent: Cassette, fork: Cassette, at: int) -> str | None:
    """Why the fork is not the parent's fork at `at`, or None."""
    if fork.parentId != parent.id or len(fork.steps) <= at or fork.forkedFromStepId != parent.steps[at].id:
        return "linked: the branch does not name the parent and its fork point"
    broken = next((i for i in range(at) if fork.steps[i].hash != parent.steps[i].hash), None)
    if broken is not None:
        return f"linked: step {broken} of the prefix differs from the parent's"
    return None


def judge(parent: Cassette, path: str | Path, at: int, expected: Expectations) -> Judged:
    """Judge the branch cassette at `path` (CassetteError when it cannot be read at all)."""
    try:
        fork = load(path)
    except CassetteError:
        raise
    except (OSError, ValueError) as exc:
        raise CassetteError(f"{path}: cannot be read ({exc})") from None
    report = verify(fork)
    found = outcome(fork)
    failed = [f"{c.name}: {c.detail}" if c.detail else c.name for c in report.checks if c.status == "fail"]
    results = check_expectations(expected, found if report.ok else None)
    failed += [f"{r.name}: expected {r.expected}, found {r.found}" for r in results if r.status == "fail"]
    unlinked = _linked(parent, fork, at)
    if unlinked is not None:
        failed.append(unlinked)
    verdict = verdict_of(outcome(parent), found)
    tokens = [step.tokens for step in fork.steps[at:] if step.tokens is not None]
    ok = report.ok and not failed and all(r.status == "pass" for r in results)
    return Judged(verdict="pass" if ok else "fail", failed=failed,
                  divergence=behavioural_divergence(parent, fork, at), change=verdict.kind,
                  outcomeChanged=verdict.kind in OUTCOME_CHANGES,
                  inputTokens=sum(t.input for t in tokens), outputTokens=sum(t.output for t in tokens))
