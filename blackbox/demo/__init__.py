"""The built-in, offline demo agent: a scripted model, three fixture tools, the demo fork and the self-check."""

from __future__ import annotations

from pathlib import Path

from blackbox.demo.clock import Clock, wall_clock

__all__ = ["demo_pair"]


def demo_pair(out_dir: Path, *, clock: Clock = wall_clock) -> tuple[Path, Path]:
    """Write the demo's success cassette and a fork of it with a changed search result; both verify.

    Returns (parent, fork): `example-trace.json` and `example-run-001-fork.json` in `out_dir`.
    """
    from blackbox.demo.fork import demo_fork
    from blackbox.demo.scenarios import SUCCESS_FILE, SUCCESS_ID, record_success
    from blackbox.format.cassette import save

    parent = out_dir / SUCCESS_FILE
    save(record_success(clock=clock), parent)
    fork = out_dir / f"{SUCCESS_ID}-fork.json"
    demo_fork(parent, fork, clock=clock)
    return parent, fork
