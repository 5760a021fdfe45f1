"""`blackbox check`: the whole loop offline — record, verify, fork with a changed tool result, verify, diff.

Composes the demo agent, the demo fork and the core's verify and diff; it adds no logic of its own beyond
saying, stage by stage, whether each did what it must.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import msgspec

from blackbox.demo.clock import Clock, wall_clock
from blackbox.demo.fork import DEFAULT_FORK_INDEX, DEFAULT_MUTATION_STEP, demo_fork
from blackbox.demo.scenarios import record_success
from blackbox.errors import BlackboxError
from blackbox.format.cassette import load, save

__all__ = ["CHILD_FILE", "PARENT_FILE", "CheckReport", "Stage", "run_check"]

PARENT_ID = "selfcheck-parent-001"
PARENT_FILE = "check-parent.json"
CHILD_FILE = "check-child.json"
STAGES = ("record", "verify_parent", "fork", "verify_child", "diff")


class Stage(msgspec.Struct, frozen=True):
    name: str
    status: Literal["pass", "FAIL", "skip"]
    detail: str


class CheckReport(msgspec.Struct, frozen=True):
    stages: list[Stage]
    parent: Path
    child: Path

    @property
    def ok(self) -> bool:
        return all(s.status == "pass" for s in self.stages)

    @property
    def verdict(self) -> str:
        failed = next((s for s in self.stages if s.status == "FAIL"), None)
        if failed is None:
            return ("PASS: recorded, verified, forked, verified and diffed offline; the fork diverges exactly "
                    "at the changed tool result")
        return f"FAIL at {failed.name}: {failed.detail}"


class _StageFailed(Exception):
    pass


def run_check(out_dir: Path, *, clock: Clock = wall_clock) -> CheckReport:
    """Run every stage in order into `out_dir`; after the first failure the rest are skipped."""
    parent, child = out_dir / PARENT_FILE, out_dir / CHILD_FILE

    def record() -> str:
        cassette = record_success(PARENT_ID, clock=clock)
        save(cassette, parent)
        return f"demo run recorded: {len(cassette.steps)} steps → {parent.name}"

    def fork() -> str:
        cassette = demo_fork(parent, child, clock=clock)
        return (f"tool_result at step {DEFAULT_MUTATION_STEP} changed, continued from step {DEFAULT_FORK_INDEX}: "
                f"{len(cassette.steps)} steps → {child.name}")

    def diff_stage() -> str:
        from blackbox.format.diff import diff

        report = diff(load(parent), load(child))
        index = report.first_divergence
        if index != DEFAULT_MUTATION_STEP:
            raise _StageFailed(f"first divergence at {index}; expected step {DEFAULT_MUTATION_STEP}, the changed "
                               "result")
        return f"first divergence at step {index}; {report.verdict.text}"

    actions: dict[str, Callable[[], str]] = {
        "record": record,
        "verify_parent": lambda: _verify(parent),
        "fork": fork,
        "verify_child": lambda: _verify(child),
        "diff": diff_stage,
    }
    stages: list[Stage] = []
    for name in STAGES:
        if stages and stages[-1].status != "pass":
            stages.append(Stage(name, "skip", "skipped after the failure above"))
            continue
        try:
            stages.append(Stage(name, "pass", actions[name]()))
        except (_StageFailed, BlackboxError, OSError) as exc:
            stages.append(Stage(name, "FAIL", str(exc)))
    return CheckReport(stages, parent, child)


def _verify(path: Path) -> str:
    from blackbox.format.verify import verify

    report = verify(path)
    failure = report.failure
    if failure is not None:
        where = f" at step {failure.step}" if failure.step is not None else ""
        raise _StageFailed(f"{failure.name} failed{where}: {failure.detail}")
    return f"{path.name}: {len(report.checks)}/{len(report.checks)} checks pass"
