"""Importing one transcript, the pieces `blackbox import` shares between one file (`cli/imports`) and a folder
of sessions (`cli/import_folders`): convert, check and write one file; the tool path, the failure line and
the `--json` result of an import; the bar of bytes read."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blackbox.cli.render import err_console
from blackbox.errors import WriteError
from blackbox.importers.common import Progress
from blackbox.importers.registry import IMPORTERS
from blackbox.live.redaction import ACTIVE

if TYPE_CHECKING:
    from blackbox.format.cassette import Cassette

__all__ = ["Bar", "failure", "import_one", "progress_bar", "result_of", "skipped_text", "tools_path"]


class Bar:
    """Progress by bytes read; then the phase after reading, so a full bar is never mistaken for done."""

    def __init__(self, bar: Any, task: Any) -> None:
        self.bar, self.task = bar, task

    def advance(self, n: int) -> None:
        self.bar.advance(self.task, n)

    def phase(self, description: str) -> None:
        self.bar.update(self.task, description=description, refresh=True)


@contextmanager
def progress_bar(total: int) -> Iterator[Bar | None]:
    """A bar on a terminal; nothing otherwise (pipes and CI logs stay clean)."""
    if not sys.stderr.isatty() or total == 0:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    with Progress(
        "[progress.description]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
        TimeRemainingColumn(), console=err_console(), transient=True,
    ) as bar:
        yield Bar(bar, bar.add_task("reading", total=total))


def import_one(source: str, path: Path, out: Path, trace_id: str,
               bar: Bar | None = None, redactor: Any = ACTIVE) -> tuple[Cassette, Progress]:
    """Convert, check and write; TranscriptError or OSError when nothing was written."""
    from blackbox.format.writing import atomic_write
    from blackbox.importers.common import check_writable
    from blackbox.live.redaction import chosen
    from blackbox.redaction import redact_cassette

    if bar is not None:
        bar.phase(f"reading {path.name}")
    progress = Progress(bar.advance if bar is not None else None)
    cassette = IMPORTERS[source].import_file(path, trace_id, progress)
    redact = chosen(redactor)  # the policy applies to an import as to a recording (before it is checked)
    if redact is not None:
        cassette = redact_cassette(cassette, redact)
    if bar is not None:
        bar.phase(f"verifying and writing {out.name}")
    atomic_write(out, check_writable(cassette))
    return cassette, progress


def tools_path(cassette: Cassette, shown: int = 12) -> str:
    """The tool path; a long one shows its start and end (a long session calls hundreds of tools)."""
    from blackbox.format.outcome import outcome

    tools = outcome(cassette).tools
    if not tools:
        return "(none)"
    if len(tools) <= shown:
        return " → ".join(tools)
    head, tail = tools[: shown - 3], tools[-3:]
    return " → ".join(head) + f" → … {len(tools) - len(head) - len(tail)} more … → " + " → ".join(tail)


def failure(exc: Exception) -> str:
    from blackbox.importers.common import NOTHING_WRITTEN, TranscriptError

    if isinstance(exc, TranscriptError):
        message = str(exc)
        return f"{message}{'' if message.endswith(('.', '?')) else '.'} {NOTHING_WRITTEN}"
    if isinstance(exc, WriteError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"no such file; check the path. {NOTHING_WRITTEN}"
    return f"cannot read or write: {getattr(exc, 'strerror', None) or type(exc).__name__}. {NOTHING_WRITTEN}"


def result_of(cassette: Cassette, progress: Progress) -> dict[str, Any]:
    """What `--json` says of a written cassette (and of the records its import skipped)."""
    from blackbox.format.outcome import outcome

    o = outcome(cassette)
    return {"id": cassette.id, "steps": len(cassette.steps), "status": o.status, "tools": list(o.tools),
            "skipped": dict(progress.skipped)}


def skipped_text(progress: Progress) -> str | None:
    """`3 records of unknown types (world_state ×2, …)`, or None when nothing was skipped."""
    if not progress.skipped:
        return None
    total = sum(progress.skipped.values())
    kinds = ", ".join(f"{kind} ×{count}" for kind, count in sorted(progress.skipped.items()))
    return f"{total} record(s) of unknown types ({kinds})"
