"""Two steps many session tests take on a recorded run, as one call each: a replay that must diverge at a given
step and path, and a scripted fork at a tool result (the model's next answer from a script)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import blackbox
from blackbox.errors import ReplayDivergenceError
from blackbox.format.cassette import Cassette, load
from blackbox.format.verify import verify


def diverges(cassette: Path, run: Callable[[blackbox.Session], object], step: int, path: str) -> None:
    """Replaying `cassette` with `run` diverges at `step`, at `path` of its payload: the agent's SDK raises the
    replay's refusal in the agent, and `finish()` raises the divergence."""
    bb = blackbox.session("replay", cassette=cassette)
    with pytest.raises(Exception, match=f"replay diverged at step {step}"):
        run(bb)
    with pytest.raises(ReplayDivergenceError) as diverged:
        bb.finish()
    assert (diverged.value.step, diverged.value.path) == (step, path)


def scripted_fork(cassette: Path, out: Path, run: Callable[[blackbox.Session], str], *, at: int, value: str,
                  answer: str) -> Cassette:
    """The fork of `cassette` at the tool result `at` set to `value`, the model answering `answer` next from a
    script: `run` drives the agent and returns its answer.  The fork verifies and keeps its parent's prefix."""
    script = out.with_name(f"{out.stem}.replies.json")
    script.write_text(json.dumps([{"type": "final_answer", "text": answer}]))
    bb = blackbox.session("fork", cassette=cassette, out=out, fork_at=at, fork_set=value, continue_with="script",
                          script=script)
    assert run(bb) == answer
    bb.finish(result=answer)
    fork = load(out)
    assert verify(fork).ok and fork.steps[at].payload["result"] == value
    assert [step.hash for step in fork.steps[:at]] == [step.hash for step in load(cassette).steps[:at]]
    return fork
