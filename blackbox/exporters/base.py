"""What every exporter is: `Exporter`, its facts as class data (the CLI's `--to`, its checks and its help read
them) and `export`; `Target`, where an export goes; `ExportError`, an export that did not happen.

An exporter module imports this one (and what it needs), never the registry, so a new exporter is its own
module and its entry in `exporters.registry`, with no cycle.  What an exporter needs beyond Blackbox is its
own fact (`extra`, `modules`): `blackbox export` asks the chosen one, so a target that needs nothing more runs
where the others' extras are not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from blackbox.errors import BlackboxError

if TYPE_CHECKING:
    from blackbox.exporters.spans import SpanData

__all__ = ["ExportError", "Exporter", "Target"]


class ExportError(BlackboxError):
    """An export that did not happen; one line, never a span's content."""


class Target:
    """Where an export goes: `--out` for a file target, `--endpoint` and `--header` for a network one."""

    def __init__(self, out: Path | None = None, endpoint: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        self.out, self.endpoint, self.headers = out, endpoint, dict(headers or {})


class Exporter:
    """One export target: its facts as class data and `export`."""

    name: ClassVar[str]  # the `--to` value
    description: ClassVar[str]  # one line for `--help`
    needs_out: ClassVar[bool] = False  # a file target: `--out` is required (and only then allowed)
    network: ClassVar[bool] = False  # sends to an endpoint: `--endpoint` and `--header` apply
    extra: ClassVar[str | None] = None  # the package extra it needs (`pip install 'blackbox-agent[extra]'`)
    modules: ClassVar[tuple[str, ...]] = ()  # what that extra brings, imported by `require` to see it is there

    def require(self) -> None:
        """ExportError naming the extra when a module the export needs is not installed (nothing is read or sent
        before this is asked)."""
        from importlib import import_module

        for module in self.modules:
            try:
                import_module(module)
            except ImportError:
                raise ExportError(f"--to {self.name} needs the {self.extra} extra (no {module} here): pip install "
                                  f"'blackbox-agent[{self.extra}]'") from None

    def check(self, target: Target) -> None:
        """UsageError when the target cannot be used (a malformed endpoint), before any file is read."""

    def where(self, target: Target) -> str:
        """Where the export goes, as a message may show it (never a password or a query string)."""
        return str(target.out) if target.out is not None else self.name

    def export(self, batches: Sequence[Sequence[SpanData]], target: Target,
               done: Callable[[int], None] | None = None, note: Callable[[str], None] | None = None) -> None:
        """Send or write the batches (one per cassette); `done(n)` after the n-th batch is out, `note(text)` when
        it waits (a retry).  ExportError (or WriteError) when it fails."""
        raise NotImplementedError
