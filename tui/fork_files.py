"""The files a fork from the UI writes: a fork's output path that no earlier fork holds, and the value and
replies its command reads, kept beside the output so the command shown in the log can be run again.

The inputs are named `<fork>.value` and `<fork>.replies` (not `.json`: `blackbox list` would count them as
cassettes that cannot be read)."""

from __future__ import annotations

import sys
from pathlib import Path

from blackbox.format.writing import atomic_write

__all__ = ["default_out", "fork_argv", "input_paths", "write_inputs"]

MAX_TRIES = 1000  # forks of one step before the name stops counting (then the last one is proposed)


def default_out(parent: Path, index: int) -> Path:
    """`<parent>-fork-at-<N>.json` beside the parent, or `…-fork-at-<N>-2.json` (3, …) when an earlier fork
    already holds that name, so a second fork never overwrites the first; relative to here if inside."""
    out = parent.with_name(f"{parent.stem}-fork-at-{index}.json")
    for n in range(2, MAX_TRIES):
        if not out.exists():
            break
        out = parent.with_name(f"{parent.stem}-fork-at-{index}-{n}.json")
    try:
        return out.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return out


def input_paths(out: Path) -> tuple[Path, Path]:
    """Where the value and the inline replies of the fork written to `out` are kept (the command reads them)."""
    return out.with_name(out.stem + ".value"), out.with_name(out.stem + ".replies")


def write_inputs(out: Path, value_text: str, replies_text: str | None) -> tuple[Path, Path | None]:
    """Write the new value (and the inline replies, if any) beside the fork's output; their paths."""
    value_file, replies_file = input_paths(out)
    atomic_write(value_file, value_text.encode("utf-8"))
    if replies_text is None:
        return value_file, None
    atomic_write(replies_file, replies_text.encode("utf-8"))
    return value_file, replies_file


def fork_argv(parent: Path, index: int, value_file: Path, out: Path, continuation: list[str],
              command: list[str]) -> list[str]:
    """The CLI call that makes the fork; `continuation` is `["--live"]` or `["--script", path]`."""
    return [sys.executable, "-m", "blackbox", "fork", str(parent), "--at", str(index), "--set",
            f"@{value_file}", "--out", str(out), *continuation, "--", *command]
