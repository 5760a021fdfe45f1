"""`blackbox inspect` (and the rows of the replay summary): a cassette's header and one line per step, or one
step in full.

Rows are written as they are made, one payload decoded at a time (the payloads stay undecoded views of the
file until then) and in blocks of 512 lines: 10,000 steps in well under a second, never one big table in
memory.  Light like `reports` (no typer; rich only for a highlighted payload on a terminal), so inspect runs
from the light dispatcher too.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from blackbox.cli.jsonout import print_json
from blackbox.cli.printed import printed_payload, printed_text, text_printer
from blackbox.cli.reports import missing_file, redaction_lines, shower, shown
from blackbox.cli.term import EXIT_USAGE, colour, error_line, paint
from blackbox.errors import CassetteError
from blackbox.format.diff import lazy_outcome
from blackbox.format.inert import inert_lines
from blackbox.format.lazy import LazyCassette, LazyStep, load_lazy
from blackbox.format.marks import count_in_bytes, rewritten_from
from blackbox.format.outcome import summarize_step
from blackbox.format.provenance import answering_models, made_dict, made_text, models_dicts
from blackbox.format.secrets import mask_secrets, masker
from blackbox.format.timeline import Totals, duration_text, timeline, tokens_text
from blackbox.format.writing import pretty_json

__all__ = ["created", "json_rows", "made_lines", "run_inspect", "totals_lines", "write_rows"]


def created(ms: float) -> str:
    """Milliseconds since the epoch as a UTC time; the number itself when it is no time."""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def _rows(steps: list[LazyStep]) -> Iterator[tuple[int, str, str, str]]:
    show = shower()
    for lazy in steps:
        step = lazy.decoded()
        yield step.index, step.type, step.hash[:12], show(summarize_step(step))


def write_rows(c: LazyCassette) -> None:
    """One line per step (index, type, short hash, summary), aligned, streamed to stdout in blocks."""
    on = colour()
    index_width = max(1, len(str(len(c.steps) - 1)))
    type_width = max([4, *(len(s.type) for s in c.steps)])
    out = sys.stdout
    out.write(paint(f"{'#':<{index_width}}  {'type':<{type_width}}  {'hash':<12}  summary", "bold", on) + "\n")
    block: list[str] = []
    for index, kind, short, summary in _rows(c.steps):
        block.append(f"{index:<{index_width}}  {kind:<{type_width}}  {short:<12}  {summary}\n")
        if len(block) >= 512:
            out.write("".join(block))
            block.clear()
    out.write("".join(block))
    out.flush()


def json_rows(c: LazyCassette) -> list[dict[str, Any]]:
    """The rows for `--json` (summaries with secrets masked)."""
    policy, mask = text_printer(), masker()
    return [{"index": d.index, "type": d.type, "hash": d.hash, "summary": mask(policy(summarize_step(d)))}
            for d in (s.decoded() for s in c.steps)]


def made_lines(c: LazyCassette) -> list[str]:
    """When and with what the file was made (its unhashed `made`), and each model that answered in place of the
    one requested (docs/format.md, "Origin"); text from the file made inert."""
    lines = [f"made:    {created(c.made.at)} with {shown(made_text(c.made))}" if c.made is not None else
             "made:    not recorded (an import, the demo, or a file older than Blackbox's `made`)"]
    for pair in answering_models(c.steps):
        if pair.differs:
            calls = f"{pair.calls} call{'' if pair.calls == 1 else 's'}"
            lines.append(f"model:   requested {shown(pair.requested or '(none)')}, answered by "
                         f"{shown(pair.answered or '?')} ({calls})")
    return lines


def totals_lines(totals: Totals) -> list[str]:
    """The run's totals as `inspect` prints them: tokens, then model, tool and wall time."""
    counted = (f" ({totals.calls_with_tokens} of {totals.model_calls} model calls)"
               if totals.tokens is not None and totals.calls_with_tokens < totals.model_calls else "")
    calls = f"{totals.tool_calls} call{'' if totals.tool_calls == 1 else 's'}"
    return [f"tokens:  {tokens_text(totals.tokens)}{counted}",
            f"time:    model {duration_text(totals.model_ms)} ({totals.model_calls} calls) · tools "
            f"{duration_text(totals.tool_ms)} ({calls}) · wall {duration_text(totals.wall_ms)}"]


def _step_json(step: LazyStep) -> dict[str, Any]:
    decoded = step.decoded()
    doc = {"id": decoded.id, "index": decoded.index, "type": decoded.type, "timestamp": decoded.timestamp,
           "summary": mask_secrets(printed_text(summarize_step(decoded))),
           "payload": printed_payload(decoded.type, decoded.payload),
           "prevHash": decoded.prevHash, "hash": decoded.hash}
    if decoded.tokens is not None:
        doc["tokens"] = msgspec.to_builtins(decoded.tokens)
    return doc


def _one_step(lazy: LazyStep, json_out: bool) -> None:
    if json_out:
        print_json(_step_json(lazy))
        return
    s = lazy.decoded()
    on = colour()
    sys.stdout.write(f"{paint(f'step {s.index}', 'bold', on)} {s.type} — {shown(summarize_step(s))}\n"
                     f"hash:     {s.hash}\nprevHash: {s.prevHash}\n"
                     f"time:     {created(s.timestamp)} ({pretty_json(s.timestamp)})\n")
    if s.tokens is not None:
        sys.stdout.write(f"tokens:   {tokens_text(s.tokens)} (not hashed)\n")
    text = inert_lines(mask_secrets(pretty_json(printed_payload(s.type, s.payload))))
    if on:  # highlighted on a terminal; rich is imported only then
        from rich.syntax import Syntax

        from blackbox.cli.render import console

        console().print(Syntax(text, "json", word_wrap=True, background_color="default"), soft_wrap=False)
    else:
        sys.stdout.write(text + "\n")
    sys.stdout.flush()


def run_inspect(path: Path, step: int | None, json_out: bool) -> int:
    """`blackbox inspect`: exit 0; 2 when there is no file, it cannot be loaded or `step` is out of range."""
    problem = missing_file(path)
    if problem is not None:
        error_line(problem, EXIT_USAGE)
        return EXIT_USAGE
    try:
        c = load_lazy(path)
    except CassetteError as exc:
        error_line(shown(str(exc)), EXIT_USAGE)
        return EXIT_USAGE
    if step is not None:
        if not 0 <= step < len(c.steps):
            has = f"steps 0 to {len(c.steps) - 1}" if c.steps else "no steps"
            error_line(f"--step {step} is out of range; this cassette has {has}", EXIT_USAGE)
            return EXIT_USAGE
        _one_step(c.steps[step], json_out)
        return 0
    o = lazy_outcome(c)
    totals = timeline(c.steps, model_names=False).totals  # the totals need no request payload
    marks: Counter[str] = Counter()
    for s in c.steps:
        count_in_bytes(bytes(s.payload), marks)
    redacted, link = dict(sorted(marks.items())) or None, rewritten_from(c.redaction)
    if json_out:
        doc = {"id": c.id, "version": c.version, "parentId": c.parentId, "forkedFromStepId": c.forkedFromStepId,
               "createdAt": c.createdAt, "steps": len(c.steps),
               "outcome": {k: printed_text(v) if isinstance(v, str) else v for k, v in msgspec.to_builtins(o).items()},
               "totals": totals.to_dict(),
               "rows": json_rows(c)}
        if redacted or link:
            doc["redaction"] = {"redacted": redacted, "rewrittenFrom": link}
        doc["made"] = made_dict(c.made)
        doc["models"] = models_dicts(answering_models(c.steps))
        print_json(doc)
        return 0
    on = colour()
    lines = [f"{paint(shown(c.id), 'bold', on)}  version {c.version}"]
    if c.parentId:
        lines.append(f"parent:  {shown(c.parentId)} (forked from {shown(c.forkedFromStepId or '?')})")
    lines.append(f"created: {created(c.createdAt)}\nsteps:   {len(c.steps)}\noutcome: {shown(o.describe())}")
    lines += made_lines(c)
    lines += totals_lines(totals)
    lines += redaction_lines(redacted, link)
    sys.stdout.write("\n".join(lines) + "\n")
    write_rows(c)
    return 0
