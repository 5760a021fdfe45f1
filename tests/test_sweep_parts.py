"""The sweep's parts on their own, for what the end-to-end tests (tests/test_sweep.py) cannot steer: a resume
that takes a branch written before the manifest named it, a branch that ended in `error` run again, the
Wilson interval's bounds, the first divergence and cost of a variant, and a branch that is not its parent's
fork judged a failure.  Scripted (no API) or pure: each runs in well under a second."""

from __future__ import annotations

import json
import math
from pathlib import Path

import msgspec
import pytest

from blackbox.format.cassette import Cassette, load, rechain
from blackbox.format.expectations import Expectations
from blackbox.format.writing import atomic_write, dumps
from blackbox.many.folder import PARENT, Branch, Settings, Sweep, Variant, read_sweep, summarize, wilson, write_sweep
from blackbox.many.judge import judge
from blackbox.many.plan import plan
from blackbox.many.running import run_sweep

TRACE = Path(__file__).parent / "fixtures" / "traces" / "success-tool-use.v2.json"

AT = 3


def scripted_sweep(tmp_path: Path, repeat: int = 3) -> tuple[Path, Sweep, Cassette, list[dict[str, str]]]:
    parent = load(TRACE)
    folder = tmp_path / "sweep"
    folder.mkdir()
    atomic_write(folder / PARENT, TRACE.read_bytes())
    settings = Settings(at=AT, repeat=repeat, mode="script", parentId=parent.id, source=str(TRACE),
                        prices={"input": 2.0, "output": 10.0})
    script = [{"type": "final_answer", "text": "done"}]
    sweep = plan(settings, [])
    write_sweep(folder, sweep)
    return folder, run_sweep(folder, sweep, parent, script=script), parent, script


def test_a_resume_takes_a_branch_written_before_the_manifest_named_it_and_reruns_an_error(tmp_path: Path) -> None:
    folder, sweep, parent, script = scripted_sweep(tmp_path)
    assert [b.verdict for b in sweep.branches] == ["pass"] * 3
    written, failed = sweep.branches[0], sweep.branches[1]
    stamp = (folder / str(written.file)).stat().st_mtime_ns
    # killed after branch 0's file was written but before the manifest said so; branch 1 could not run
    sweep.branches[0] = msgspec.structs.replace(written, verdict=None, stopped=None)
    sweep.branches[1] = msgspec.structs.replace(failed, verdict="error", error="could not be judged")
    sweep.branches[2] = msgspec.structs.replace(sweep.branches[2], verdict="error", error="the API was unreachable")
    (folder / str(sweep.branches[2].file)).unlink()
    write_sweep(folder, sweep)

    again = run_sweep(folder, read_sweep(folder), parent, script=script)
    assert [b.verdict for b in again.branches] == ["pass"] * 3
    assert again.branches[0].stopped is not None and again.branches[0].stopped.startswith("taken from its file")
    assert (folder / str(written.file)).stat().st_mtime_ns == stamp  # not asked for again
    assert [b.error for b in again.branches] == [None] * 3 and (folder / str(sweep.branches[2].file)).is_file()
    assert read_sweep(folder).branches == again.branches


@pytest.mark.parametrize("runs", [1, 2, 5, 17, 40, 1000])
def test_the_wilson_interval_holds_the_rate_and_stays_inside_0_and_1(runs: int) -> None:
    for passed in range(0, runs + 1, max(1, runs // 20)):
        low, high = wilson(passed, runs)
        assert 0.0 <= low <= passed / runs <= high <= 1.0
        assert math.copysign(1.0, low) == 1.0  # never -0.0 or a rounding below zero
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)  # nothing run: nothing known


def test_a_variants_row_has_its_earliest_divergence_and_its_cost() -> None:
    settings = Settings(at=AT, repeat=3, mode="script", parentId="p", source="p.json")
    branches = [Branch("v", 0, 1, verdict="pass", divergence=7, inputTokens=1000, outputTokens=10, cost=0.5),
                Branch("v", 1, 2, verdict="fail", divergence=5, cost=0.25),
                Branch("v", 2, 3, verdict="pass", divergence=None),
                Branch("v", 3, 4)]  # not finished: not counted
    [row] = summarize(Sweep(settings, [Variant("v")], branches))
    assert (row.runs, row.passed, row.firstDivergence, row.cost, row.inputTokens) == (3, 2, 5, 0.75, 1000)


def test_a_scripted_sweep_prices_each_branch(tmp_path: Path) -> None:
    _, sweep, _, _ = scripted_sweep(tmp_path, repeat=2)
    for branch in sweep.branches:
        assert branch.cost == pytest.approx((branch.inputTokens * 2.0 + branch.outputTokens * 10.0) / 1e6)
        assert branch.cost is not None


def test_a_branch_whose_prefix_is_not_its_parents_fails_as_unlinked(tmp_path: Path) -> None:
    folder, sweep, parent, _ = scripted_sweep(tmp_path, repeat=1)
    path = folder / str(sweep.branches[0].file)
    fork = load(path)
    fork.steps = rechain(fork.steps, lambda kind, payload: (
        json.loads(json.dumps(payload).replace("weekend", "weekday")) if kind == "model_output" else payload))
    atomic_write(path, dumps(fork))
    found = judge(parent, path, AT, Expectations())
    assert found.verdict == "fail" and "linked: step 1 of the prefix differs from the parent's" in found.failed
