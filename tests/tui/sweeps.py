"""A sweep's folder for the UI tests, written as `blackbox sweep` writes one: the demo run copied as
`parent.json`, each finished branch a real what-if fork cassette (`blackbox.fork.whatif.what_if`, scripted
replies) judged by the real `assert` checks (`format/expectations`), its first behavioural divergence found by
the diff's own classifier, and the manifest written by `many.folder.write_sweep`.

Scripted replies carry no token counts and take no time, so each branch is given the sweep's book-keeping
figures by its model calls (`TOKENS_IN`/`TOKENS_OUT` and `SECONDS` each), and a cost from `PRICES`."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec

from blackbox.demo import demo_pair
from blackbox.fork.whatif import ScriptedModel, what_if
from blackbox.format.cassette import Cassette, load, save
from blackbox.format.expectations import Expectations, check_expectations
from blackbox.format.outcome import outcome
from blackbox.many.folder import PARENT, Branch, Settings, Sweep, Variant, write_sweep
from blackbox.many.plan import BASELINE
from blackbox_tui.diffing import Classifier, compare
from blackbox_tui.run import Run

AT = 3  # the demo's search result
EXPECT = Expectations(status="success", tools=("search", "calendar", "booking"))
TOKENS_IN, TOKENS_OUT, SECONDS = 1200, 45, 0.8
PRICES = {"input": 3.0, "output": 15.0}  # per million tokens


def recorded_path(parent: Cassette) -> list[dict[str, Any]]:
    """The model's recorded outputs after the fork point: replayed, the branch books the hotel (a pass)."""
    return [step.payload for step in parent.steps[AT + 1:] if step.type == "model_output"]


GIVE_UP = [{"type": "final_answer", "text": "No hotels that weekend, so nothing was booked for Alice."}]

#: (variant, the value at the fork point or UNSET for the recorded one, one entry per repeat: "booked" follows the
#: recorded path, "gave up" answers at once, "error: …" could not run, None not finished yet).
PLAN: list[tuple[str, Any, list[str | None]]] = [
    (BASELINE, msgspec.UNSET, ["booked", "booked", "gave up"]),
    ("no-hotels", {"results": []}, ["gave up", "booked", "gave up"]),
    ("search-timeout", {"error": "timeout"},
     ["error: the provider answered 429 three times (retry-after honoured); resume the sweep", "gave up", None]),
]


def write_sweep_folder(folder: Path, plan: list[tuple[str, Any, list[str | None]]] = PLAN, *,
                       prices: bool = True) -> Sweep:
    """Write the sweep of `plan` into `folder` (made); returns its manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / ".demo"
    parent_path, _ = demo_pair(scratch)
    shutil.copyfile(parent_path, folder / PARENT)
    shutil.rmtree(scratch)
    parent = load(folder / PARENT)
    recorded_value = parent.steps[AT].payload["result"]
    (folder / "branches").mkdir(exist_ok=True)
    repeats = max(len(runs) for _, _, runs in plan)
    variants, branches = [], []
    seed = 0
    for name, value, runs in plan:
        variants.append(Variant(name=name, value=value, source=None if value is msgspec.UNSET else f"@{name}.json"))
        for repeat, how in enumerate(runs):
            seed += 1
            branch = Branch(variant=name, repeat=repeat, seed=seed)
            if how is not None and how.startswith("error: "):
                branch.verdict, branch.error = "error", how.removeprefix("error: ")
            elif how is not None:
                replies = recorded_path(parent) if how == "booked" else GIVE_UP
                fork, _ = what_if(parent, AT, recorded_value if value is msgspec.UNSET else value,
                                  ScriptedModel(replies), trace_id=f"sweep-{name}-{repeat}",
                                  clock=lambda: 1_733_000_000_000)
                file = f"branches/{name}-{repeat}.json"
                save(fork, folder / file)
                _judge(branch, folder / PARENT, folder / file, fork, len(replies), prices=prices)
                branch.file = file
            branches.append(branch)
    sweep = Sweep(settings=Settings(at=AT, repeat=repeats, mode="script", parentId=parent.id,
                                    source="runs/example-trace.json", script="replies.json",
                                    expect={"expect-status": "success", "expect-tools": "search,calendar,booking"},
                                    prices=PRICES if prices else {}),
                  variants=variants, branches=branches)
    write_sweep(folder, sweep)
    return sweep


def _judge(branch: Branch, parent: Path, file: Path, fork: Cassette, calls: int, *, prices: bool) -> None:
    """The branch's verdict by the `assert` checks and its first behavioural divergence by the diff's own
    classifier (what the diff screen opens at)."""
    rows = check_expectations(EXPECT, outcome(fork))
    branch.failed = [f"{row.name}: expected {row.expected}, found {row.found}" for row in rows if row.status == "fail"]
    branch.verdict = "fail" if branch.failed else "pass"
    a, b = Run.open(parent), Run.open(file)
    branch.divergence = Classifier(a, b, compare(a, b, semantic=False)).first_behavioural()
    branch.outcomeChanged = outcome(fork) != outcome(load(parent))
    branch.inputTokens, branch.outputTokens, branch.seconds = TOKENS_IN * calls, TOKENS_OUT * calls, SECONDS * calls
    if prices:
        branch.cost = (branch.inputTokens * PRICES["input"] + branch.outputTokens * PRICES["output"]) / 1e6
