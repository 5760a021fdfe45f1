"""The launcher's correction of a run closed at exit: its terminal step says the status the agent really ended
with.

Inside the agent, `process_exit` infers the exit status from what Python lets it observe (a `SystemExit`
read at the top level, an uncaught exception, a signal); the launcher sees the status the kernel reports,
which no later `atexit` handler, `os._exit` or C extension can change.  So under `blackbox record` (and a
fork) the launcher is the source of truth and the in-process hook the fallback: when the cassette of a run
that did not call `finish()` ends otherwise than that status implies, its terminal step is replaced (or
added, or dropped) by the one `engines.terminal_payload` gives for the real status, only that last step is
re-hashed, and the file is verified and written atomically.  A terminal the exit did not decide (an error
Blackbox raised, `finish()`) is never touched.
"""

from __future__ import annotations

import os
from typing import Any

from blackbox.format.canonical import step_hash
from blackbox.format.cassette import Cassette, Step, load
from blackbox.format.firstdiff import json_equal
from blackbox.format.secrets import KeySearch
from blackbox.format.verify import verify
from blackbox.format.writing import atomic_write, dumps
from blackbox.live.engines import final_text, terminal_payload

__all__ = ["restamp_exit"]

_EXIT_REASONS = ("process_exit", "calls_in_flight")


def _exit_terminal(step: Step) -> dict[str, Any] | None:
    """The step's payload when it is a terminal the process exit decided, else None."""
    payload = step.payload
    if step.type != "metadata" or not isinstance(payload, dict):
        return None
    if payload.get("event") == "run_failed" and payload.get("reason") in _EXIT_REASONS:
        return payload
    if payload.get("event") == "run_completed":  # closed at exit 0: success from the last final answer
        return payload
    return None


def _final_answer(steps: list[Step]) -> str | None:
    answer = None
    for step in steps:
        if step.type == "model_output":
            text = final_text(step.payload)
            if text is not None:
                answer = text
    return answer


def restamp_exit(path: str | os.PathLike[str], status: int, now: int) -> Cassette | None:
    """Give the cassette at `path` (written at exit, without `finish()`) the terminal of exit `status`;
    returns the rewritten cassette, or None when it already had it (or its end was not the exit's to say)."""
    cassette = load(path)
    steps = list(cassette.steps)
    last = steps[-1] if steps else None
    old = _exit_terminal(last) if last is not None else None
    if last is not None and old is None and last.type == "metadata" and isinstance(last.payload, dict) \
            and last.payload.get("event") in ("run_failed", "run_completed"):
        return None  # a terminal the exit did not decide
    body = steps[:-1] if old is not None else steps
    in_flight = old.get("inFlight", 0) if old is not None and old.get("reason") == "calls_in_flight" else 0
    new = terminal_payload(exit_code=status, in_flight=in_flight if isinstance(in_flight, int) else 0,
                           final_answer=_final_answer(body))
    if (new is None and old is None) or (new is not None and old is not None and json_equal(new, old)):
        return None
    if new is not None:
        index = len(body)
        prev = body[-1].hash if body else None
        at = last.timestamp if old is not None and last is not None else max([now, *(s.timestamp for s in body[-1:])])
        step_id = last.id if old is not None and last is not None else f"{cassette.id}:{index}"
        body.append(Step(id=step_id, index=index, type="metadata", timestamp=at, payload=new,
                         prevHash=prev, hash=step_hash(index, "metadata", at, new, prev)))
    fixed = Cassette(version=cassette.version, id=cassette.id, createdAt=cassette.createdAt, steps=body,
                     parentId=cassette.parentId, forkedFromStepId=cassette.forkedFromStepId,
                     redaction=cassette.redaction, made=cassette.made)
    if not verify(fixed).ok:
        return None  # never replace a verified file by one that is not
    data = dumps(fixed)
    if KeySearch.of_environment().step_holding(fixed, data) is not None:
        return None  # nor by one holding a key (the check every writer of a cassette makes)
    atomic_write(path, data)
    return fixed

