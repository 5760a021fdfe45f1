"""The demo's fork, as `blackbox demo fork` runs it (and `blackbox fork` with no agent command, the TypeScript
Blackbox's form): its options, declared once, and the run that forks the demo's cassette offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from blackbox.cli.policy import redactor_for
from blackbox.cli.render import EXIT_USAGE, console, fail
from blackbox.demo.fork import (
    DEFAULT_FORK_INDEX,
    DEFAULT_MUTATION_STEP,
    DEFAULT_PAYLOAD,
    DEFAULT_TRACE,
    default_out,
    demo_fork,
    parse_payload_json,
)
from blackbox.errors import BlackboxError, CassetteError, UsageError
from blackbox.format.inert import inert
from blackbox.format.outcome import outcome

__all__ = ["DEMO_OPTIONS", "demo_option", "run_demo_fork"]

#: The demo fork's options: (parameter, flag, help).  `--out` is the fork's own option in both commands.
DEMO_OPTIONS = (
    ("trace", "--trace", "The cassette to fork (default traces/example-trace.json)."),
    ("fork_index", "--fork-index", "Where the fork continues (default 4)."),
    ("mutation_step", "--mutation-step", "The tool_result step to change (default 3)."),
    ("payload_json", "--payload-json", "The new tool result as JSON (default: no hotels)."),
    ("mode", "--mode", "Change a tool result (tool-result), or the prompt (prompt)."),
    ("prompt", "--prompt", "The new prompt (--mode prompt)."),
)
_HELP = {name: (flag, text) for name, flag, text in DEMO_OPTIONS}


def demo_option(name: str, *, hidden: bool = False, **extra: Any) -> Any:
    """The typer option `name` of the demo fork: shown by `blackbox demo fork`, hidden (still accepted) by
    `blackbox fork`, where it is the TypeScript Blackbox's form."""
    flag, text = _HELP[name]
    return typer.Option(flag, help=text, hidden=hidden, **extra)


def run_demo_fork(trace: Path | None, out: Path | None, fork_index: int | None, mutation_step: int | None,
                  payload_json: str | None, mode: str, prompt: str | None, *, policy: Path | None = None,
                  cassette: Path | None = None) -> None:
    """Fork the built-in demo's cassette offline, then say what was written.

    Defaults as in the TypeScript Blackbox: --trace traces/example-trace.json, --out traces/<parent id>-fork.json,
    --fork-index 4, --mutation-step 3, --payload-json the no-hotels result, --mode tool-result.  `cassette`: the
    parent given as `blackbox fork`'s argument (its original form).  Every message names only the flags typed.
    """
    if trace is not None and cassette is not None:
        fail("give the cassette to fork once: as the argument or as --trace", EXIT_USAGE)
    _check_mode_options(mode, mutation_step, payload_json, prompt)
    redactor = redactor_for(policy)  # the child is made under the policy in force, as every cassette is
    parent_path = trace or cassette or DEFAULT_TRACE
    if trace is None and cassette is None and not parent_path.exists():
        fail(f"no cassette to fork: the demo's {parent_path} is not here; run `blackbox demo` first, or name "
             "one with --trace FILE", EXIT_USAGE)
    given = {name for name, value in (("trace", trace), ("out", out), ("fork_index", fork_index),
                                      ("mutation_step", mutation_step)) if value is not None}
    try:
        payload = DEFAULT_PAYLOAD if payload_json is None else parse_payload_json(payload_json)
        child = demo_fork(parent_path, out, fork_index=fork_index, mutation_step=mutation_step,
                          payload=payload, mode=mode, prompt=prompt, redactor=redactor, given=given)
    except (UsageError, CassetteError) as exc:  # a parent that cannot be read or forked: cannot be asked
        fail(str(exc), EXIT_USAGE)
    except BlackboxError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the fork: {exc.strerror or exc} ({exc.filename}); choose another --out")
    _say_written(child, parent_path, out, mode, fork_index, mutation_step)


def _check_mode_options(mode: str, mutation_step: int | None, payload_json: str | None,
                        prompt: str | None) -> None:
    """An option the chosen mode would ignore is one line, not a fork that silently left it out."""
    if mode == "prompt":
        for flag, value in (("--mutation-step", mutation_step), ("--payload-json", payload_json)):
            if value is not None:
                fail(f"{flag} changes a tool result (the default --mode tool-result); --mode prompt changes the "
                     "prompt instead: drop one of them", EXIT_USAGE)
    elif prompt is not None and mode == "tool-result":
        fail("--prompt is for --mode prompt (the fork starts over with a new user message); add --mode prompt",
             EXIT_USAGE)


def _say_written(child: Any, parent_path: Path, out: Path | None, mode: str, fork_index: int | None,
                 mutation_step: int | None) -> None:
    at = DEFAULT_FORK_INDEX if fork_index is None else fork_index
    written = out or default_out(child.parentId or "")
    changed = at if mode == "prompt" else DEFAULT_MUTATION_STEP if mutation_step is None else mutation_step
    lines = [
        ("Parent:", str(parent_path)),
        ("Mode:", mode),
        ("Fork index:", str(at)),
        ("Changed step:", str(changed)),
        ("Child:", f"{written} ({len(child.steps)} steps, id {child.id})"),
        ("Outcome:", outcome(child).describe()),
    ]
    out_console = console()
    for label, value in lines:
        out_console.print(f"{label:<14}{inert(value)}", markup=False, highlight=False)
    out_console.print(f"next: blackbox diff {inert(str(parent_path))} {inert(str(written))}", markup=False,
                      highlight=False)
