"""A recording that may not be written: the first step holding what no cassette may, and the run before it kept.

A cassette must pass verify and hold no key the session saw (docs/format.md, "Writing a cassette").  When a
step fails that, the cassette is refused — but the run is not lost: the steps before that step (which pass
both checks) are written beside the output as `<name>.refused.json`, an incomplete cassette to inspect, and
the refusal is one line: the step, the JSON path, and what to do.  `RecordingRefused` says it is that line
(`one_line`): uncaught in the agent it is printed as the line, never as a traceback (`process_exit`).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from blackbox.errors import SessionError
from blackbox.format.cassette import Cassette
from blackbox.format.inert import inert
from blackbox.format.secrets import CREDENTIAL_SHAPES, KeySearch, mask_secrets
from blackbox.format.verify import verify
from blackbox.format.writing import atomic_write, dumps, pretty_json

__all__ = ["RecordingRefused", "Refusal", "beside", "find_refusal", "refuse"]

_REFUSE = "refusing to write the cassette: "


class RecordingRefused(SessionError):
    """A step holds a value no cassette may hold; `kept` is where the run before it was written (None: nothing
    was kept).  `str()` is the whole one-line message."""

    one_line = True  # process_exit prints it as its line when it reaches the top of the agent

    def __init__(self, message: str, *, step: int | None, kept: Path | None) -> None:
        super().__init__(message)
        self.step = step
        self.kept = kept


@dataclass(frozen=True)
class Refusal:
    """Why the cassette cannot be written: the first step at fault (None: not a step's), what it holds and
    where, and the remedy."""

    step: int | None
    what: str
    remedy: str


def _strings(payload: Any) -> Iterator[tuple[str, str]]:
    """Every string and key below `payload`, with its path as verify names it (a stack, not recursion)."""
    stack: list[tuple[Any, str]] = [(payload, "payload")]
    while stack:
        node, at = stack.pop()
        if isinstance(node, str):
            yield at, node
        elif isinstance(node, dict):
            for key, child in node.items():
                yield f"{at}.{key}", str(key)
                stack.append((child, f"{at}.{key}"))
        elif isinstance(node, list):
            stack.extend((child, f"{at}[{i}]") for i, child in enumerate(node))


def find_refusal(cassette: Cassette, secrets: Collection[str], detectors: Collection[str] = (), *,
                 data: bytes | None = None) -> Refusal | None:
    """The first reason `cassette` may not be written, or None.  `detectors`: the detectors of the policy in
    force (a shape one of them masks can only be left where no policy reaches: the run's structure); `data`:
    the bytes that will be written (`dumps(cassette)`), when the caller has them."""
    search = KeySearch(secrets)
    where = search.step_holding(cassette, dumps(cassette) if data is None else data) if search else None
    if where is not None:  # the one check every writer makes; then the step and the path, to keep what precedes
        for step in cassette.steps:
            origin = b"" if step.origin is None else msgspec.json.encode(step.origin)
            if search.found_in(pretty_json(step.payload, indent=0).encode("utf-8", "surrogatepass") + b"\n" + origin
                               + b"\n" + str(step.id).encode("utf-8", "surrogatepass")):
                at = next((at for at, text in _strings(step.payload)
                           if search.found_in(text.encode("utf-8", "surrogatepass"))), "payload")
                return Refusal(step.index, f"step {step.index} contains the API key sent with the requests (or a "
                               f"long piece of it, also split by spaces, line ends or escapes), at {inert(at)}",
                               "keep keys out of prompts and tool results")
        return Refusal(None, f"{where} contains the API key sent with the requests (or a long piece of it)",
                       "keep keys out of ids and prompts")
    report = verify(cassette, extra_secrets=list(secrets))
    failure = report.failure
    if failure is None:
        return None
    where = f" at step {failure.step}" if failure.step is not None else ""
    detail = failure.detail or ""
    shape = next((detector for label, detector, _, _ in CREDENTIAL_SHAPES  # (verify masks the label's `sk-…`)
                  if detail.endswith(label) or detail.endswith(mask_secrets(label, env={}))), None)
    if shape is None:
        remedy = report.advice
    elif shape in detectors:
        remedy = ("it is in the run's structure (a tool's name or id), which no policy changes; rename it at its "
                  "source")
    else:
        remedy = (f"mask it with the `{shape}` detector of a redaction policy (docs/format.md#redaction), or keep "
                  "it out of prompts and tool results")
    return Refusal(failure.step, f"verify {failure.name} failed{where}: {detail}", remedy)


def beside(out: str | os.PathLike[str], kind: str) -> Path:
    """`<name>.<kind>.json` beside `out` (then `.<kind>-2.json`, …): a name taken by anything, a dangling symlink
    included, is skipped."""
    out = Path(out)
    stem = out.name.removesuffix(".json")
    candidate = out.with_name(f"{stem}.{kind}.json")
    n = 2
    while os.path.lexists(candidate):
        candidate = out.with_name(f"{stem}.{kind}-{n}.json")
        n += 1
    return candidate


def refuse(cassette: Cassette, out: str | os.PathLike[str], refusal: Refusal, secrets: Collection[str],
           detectors: Collection[str] = ()) -> RecordingRefused:
    """Keep the run before the refused step beside `out` (checked again: the kept part passes both checks) and
    return the error that says so in one line."""
    steps = cassette.steps[:refusal.step] if refusal.step is not None else []
    kept: Path | None = None
    note = "nothing was kept"
    while steps:
        prefix = Cassette(cassette.version, cassette.id, cassette.createdAt, steps, cassette.parentId,
                          cassette.forkedFromStepId, cassette.redaction, cassette.made)
        again = find_refusal(prefix, secrets, detectors)
        if again is not None:  # not a step's (an id): nothing can be kept; else cut before that step too
            steps = steps[:again.step] if again.step is not None else []
            continue
        target = beside(out, "refused")
        try:
            atomic_write(target, dumps(prefix))
        except OSError as exc:
            note = f"the run before it could not be kept ({exc.strerror or exc})"
            break
        kept = target
        run = "step 0" if len(steps) == 1 else f"steps 0–{len(steps) - 1}"
        note = f"the run before it ({run}) was kept in {inert(str(target))}, incomplete: inspect it there"
        break
    return RecordingRefused(f"{_REFUSE}{refusal.what}; {note}; {refusal.remedy}", step=refusal.step, kept=kept)
