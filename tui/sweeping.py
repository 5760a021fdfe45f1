"""A sweep folder as the UI sees it: the manifest read through `blackbox.many.folder` (never parsed here), the
branches in the order the sweep screen lists them (failures first), and the one line that says what is wrong
when the folder cannot be shown.  No Textual here: the screen and its widgets draw what this holds.

A sweep that is still running rewrites its manifest after every branch; `Sweep.look` notices a new file by its
size and modification time, so a screen can look every so often without decoding an unchanged manifest."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from blackbox.errors import CassetteError
from blackbox.format.inert import inert
from blackbox.many.folder import MANIFEST, PARENT, Branch, Sweep, VariantSummary, read_sweep
from blackbox.many.report import rows as report_rows

__all__ = ["FILTERS", "ORDER", "SweepFolder", "branch_name", "money", "seconds", "tokens"]

#: How the branches are listed: what needs looking at first (a failed check, a branch that could not run), then
#: the passes, then the branches not finished yet.
ORDER = ("fail", "error", "pass", "running")
#: The filter's choices: its id (`all` or a verdict) and what the dialog calls it.
FILTERS = {"all": "All branches", "fail": "Failed a check", "error": "Could not run", "pass": "Passed",
           "running": "Not finished yet"}


def verdict_of(branch: Branch) -> str:
    """The branch's verdict, `running` until it has one."""
    return branch.verdict or "running"


def branch_name(branch: Branch) -> str:
    """`variant #repeat` (1-based, as a person counts repeats), inert: a variant's name is the user's text."""
    return inert(f"{branch.variant} #{branch.repeat + 1}")


def tokens(inp: int, out: int) -> str:
    """`1.2k→340`: input and output tokens in a column's room."""
    return f"{_short(inp)}→{_short(out)}"


def _short(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


def seconds(value: float) -> str:
    """`0.4 s`, `12 s`, `3 min`: a branch's (or a variant's summed) time in a column's room."""
    if value < 10:
        return f"{value:.1f} s"
    if value < 120:
        return f"{value:.0f} s"
    return f"{value / 60:.0f} min"


def money(value: float | None) -> str:
    """`$0.0123` (prices were given) or `—` (they were not)."""
    if value is None:
        return "—"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


@dataclass
class SweepFolder:
    """The sweep in `folder`: `sweep` as last read (None: never read whole), `problem` the one line saying why
    the last look could not read it (the last good manifest stays shown beside it); `rows` the pass-rate table
    and `labels` what each variant's rate says against the baseline's, both as the sweep's report has them."""

    folder: Path
    sweep: Sweep | None = None
    problem: str = ""
    rows: list[VariantSummary] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    _seen: tuple[int, int] | None = None

    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST

    @property
    def parent(self) -> Path:
        return self.folder / PARENT

    @property
    def shown(self) -> str:
        """The folder's name as the screen shows it (inert)."""
        return inert(str(self.folder))

    def look(self, *, force: bool = False) -> bool:
        """Read the manifest again if it changed since the last look (or `force`); whether anything shown
        changed (the manifest, or the problem)."""
        try:
            stat = os.stat(self.manifest)
            seen: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            seen = None
        if not force and seen is not None and seen == self._seen:
            return False
        self._seen = seen
        before = self.problem
        try:
            self.sweep = read_sweep(self.folder)
        except CassetteError as exc:
            self.problem = str(exc)  # (the model's message is already inert and one line)
            return self.problem != before or force
        self.problem = ""
        found = report_rows(self.sweep)
        self.rows = [row.summary for row in found]
        self.labels = {row.summary.variant: inert(row.label) for row in found}
        return True

    @property
    def branches(self) -> list[Branch]:
        return list(self.sweep.branches) if self.sweep is not None else []

    def counts(self) -> dict[str, int]:
        """How many branches have each verdict (`running`: not finished)."""
        found = dict.fromkeys(ORDER, 0)
        for branch in self.branches:
            found[verdict_of(branch)] += 1
        return found

    def listed(self, only: str = "all") -> list[Branch]:
        """The branches the list shows: `only` one verdict (or all), failures first, each verdict's branches in
        the sweep's order of variants, then by repeat."""
        sweep = self.sweep
        if sweep is None:
            return []
        place = {variant.name: i for i, variant in enumerate(sweep.variants)}
        kept = [b for b in sweep.branches if only == "all" or verdict_of(b) == only]
        return sorted(kept, key=lambda b: (ORDER.index(verdict_of(b)), place.get(b.variant, len(place)), b.repeat))

    @property
    def finished(self) -> bool:
        """Every branch has its verdict (a sweep still running, or killed, has some without)."""
        return self.sweep is not None and all(b.verdict is not None for b in self.sweep.branches)

    def branch_file(self, branch: Branch) -> tuple[Path | None, str]:
        """The branch's fork cassette, or None and the one line saying why there is none to open."""
        if self.sweep is None:
            return None, self.problem
        path = self.sweep.branch_path(self.folder, branch)
        name = branch_name(branch)
        if path is None:
            if branch.error:
                return None, f"{name} could not run, so it has no cassette: {inert(branch.error)}"
            return None, f"{name} has no cassette yet (the sweep has not finished it; r reads the folder again)"
        resolved = path.resolve()
        if not resolved.is_relative_to(self.folder.resolve()):
            return None, (f"{name}: its file {inert(branch.file or '')} is outside the sweep's folder; "
                          "the manifest was edited: run the sweep again")
        if not path.is_file():
            return None, (f"{name}: {inert(str(path))} is missing (moved or deleted?); the other branches "
                          "still open")
        return path, ""
