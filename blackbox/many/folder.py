"""A sweep's folder, as a file model: what was asked, and what each branch came to.

`blackbox sweep` writes one folder per sweep: a copy of the parent run (`parent.json`), one fork cassette per
branch under `branches/`, and `sweep.json`, the manifest read here.  The manifest is written again (atomically)
as branches finish (at most every half second, and at the end), so a killed sweep resumes from it without
redoing a finished branch, and it holds everything needed to run the sweep again (the settings, each variant's
edit, the seeds, the versions).  The terminal report, `--json`, `--format markdown` and the UI all read this one
model; none of them reads another's
output.  No widget and no SDK here: the UI imports it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

import msgspec

from blackbox.errors import CassetteError
from blackbox.format.inert import inert
from blackbox.format.origin import Made
from blackbox.format.writing import atomic_write

__all__ = [
    "MANIFEST",
    "PARENT",
    "Branch",
    "Settings",
    "Sweep",
    "Variant",
    "VariantSummary",
    "is_sweep_folder",
    "read_sweep",
    "summarize",
    "wilson",
    "write_sweep",
]

MANIFEST = "sweep.json"
PARENT = "parent.json"
KIND = "blackbox-sweep"
VERSION = 1

Verdict = Literal["pass", "fail", "error"]
Mode = Literal["live", "script", "agent"]


class Variant(msgspec.Struct, omit_defaults=True):
    """One edit the sweep tries: the tool result at the fork point set to `value` (UNSET: the recorded value,
    the baseline whose repeats give the run's flap rate), with `model` asked instead of the recorded one."""

    name: str
    value: Any = msgspec.UNSET
    model: str | None = None
    source: str | None = None  # where the value came from (`@a.json`), as the user wrote it


class Branch(msgspec.Struct, omit_defaults=True):
    """One continuation: variant `variant`, repeat `repeat` (0-based), its fork cassette `file` (relative to the
    folder) once written.  `verdict` is None until it finished; `failed` lists the checks it failed (their
    one-line reasons), `error` why it could not run at all.  `divergence`: the first step whose behaviour
    differs from the parent (None: none does); `outcomeChanged`: whether the run's outcome differs."""

    variant: str
    repeat: int
    seed: int
    file: str | None = None
    verdict: Verdict | None = None
    failed: list[str] = msgspec.field(default_factory=list)
    error: str | None = None
    divergence: int | None = None
    outcomeChanged: bool | None = None
    inputTokens: int = 0
    outputTokens: int = 0
    seconds: float = 0.0
    cost: float | None = None
    change: str | None = None  # the diff's outcome verdict kind (`status_flipped`, …, `no_change`)
    stopped: str | None = None  # why the continuation ended (`final answer`, or why it is incomplete)


class Settings(msgspec.Struct, omit_defaults=True):
    """What the sweep was asked, as given: enough to run it again (`command` is the agent's, for `agent`)."""

    at: int
    repeat: int
    mode: Mode
    parentId: str
    source: str  # the parent cassette's path as the user named it
    concurrency: int = 8
    provider: str | None = None
    script: str | None = None
    command: list[str] = msgspec.field(default_factory=list)
    expect: dict[str, Any] = msgspec.field(default_factory=dict)  # the `assert` checks, by their flag names
    prices: dict[str, float] = msgspec.field(default_factory=dict)  # per million tokens: input, output
    seed: int = 0
    models: list[str] = msgspec.field(default_factory=list)  # `--model`, as given
    parentHash: str | None = None  # the parent's last step hash: a resume refuses another parent
    scriptHash: str | None = None  # the `--script` file's SHA-256: a resume refuses other replies


class Sweep(msgspec.Struct):
    """The manifest: `kind` and `version` say what the file is; `made` when and with what it was started.
    (Not `omit_defaults`: `kind` and `version` are defaults, and a manifest without them would not read.)"""

    settings: Settings
    variants: list[Variant]
    branches: list[Branch]
    kind: str = KIND
    version: int = VERSION
    made: Made | None = None

    def branch_path(self, folder: str | os.PathLike[str], branch: Branch) -> Path | None:
        return None if branch.file is None else Path(folder) / branch.file


class VariantSummary(msgspec.Struct):
    """One row of the pass-rate table: `runs` finished branches of which `passed` passed, the 95% Wilson
    interval of the pass rate, and the branches' totals."""

    variant: str
    runs: int
    passed: int
    errors: int
    low: float
    high: float
    firstDivergence: int | None
    outcomeChanged: int
    inputTokens: int
    outputTokens: int
    seconds: float
    cost: float | None

    @property
    def rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0


def wilson(passed: int, runs: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of `passed` out of `runs` (95% by default): unlike the normal approximation it
    stays inside [0, 1] and means something at 0 or `runs` passes, which small sweeps hit all the time."""
    if runs <= 0:
        return 0.0, 1.0
    p = passed / runs
    denominator = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denominator
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denominator
    # At no pass (every pass) the bound is exactly 0 (1); computed, it can land a rounding away from it.
    low = 0.0 if passed <= 0 else max(0.0, centre - half)
    high = 1.0 if passed >= runs else min(1.0, centre + half)
    return low, high


def summarize(sweep: Sweep) -> list[VariantSummary]:
    """The pass-rate table, one row per variant in the sweep's order; a branch not finished is not counted."""
    rows = []
    for variant in sweep.variants:
        done = [b for b in sweep.branches if b.variant == variant.name and b.verdict is not None]
        passed = sum(b.verdict == "pass" for b in done)
        low, high = wilson(passed, len(done))
        divergences = [b.divergence for b in done if b.divergence is not None]
        costs = [b.cost for b in done if b.cost is not None]
        rows.append(VariantSummary(
            variant=variant.name, runs=len(done), passed=passed, errors=sum(b.verdict == "error" for b in done),
            low=low, high=high, firstDivergence=min(divergences) if divergences else None,
            outcomeChanged=sum(bool(b.outcomeChanged) for b in done),
            inputTokens=sum(b.inputTokens for b in done), outputTokens=sum(b.outputTokens for b in done),
            seconds=sum(b.seconds for b in done), cost=sum(costs) if costs else None))
    return rows


_DECODER = msgspec.json.Decoder(Sweep)


def is_sweep_folder(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a folder holding a sweep's manifest (how `blackbox tui` tells a sweep from a run)."""
    return Path(path).is_dir() and (Path(path) / MANIFEST).is_file()


def read_sweep(folder: str | os.PathLike[str]) -> Sweep:
    """The manifest of the sweep in `folder`; CassetteError (one line: which file, what is wrong, what to do)
    when it is missing, not JSON, not a sweep's or of a later version."""
    path = Path(folder) / MANIFEST
    shown = inert(str(path))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CassetteError(f"{shown}: no sweep here; run `blackbox sweep` with --out {inert(str(folder))}") from None
    except OSError as exc:
        raise CassetteError(f"{shown}: cannot be read ({exc.strerror or exc})") from None
    try:
        head = msgspec.json.decode(data)
    except msgspec.DecodeError:
        raise CassetteError(f"{shown}: not JSON (truncated?); run the sweep again to rewrite it") from None
    if not isinstance(head, dict) or head.get("kind") != KIND:
        raise CassetteError(f"{shown}: not a Blackbox sweep's manifest (no \"kind\": \"{KIND}\")")
    if head.get("version") != VERSION:
        raise CassetteError(f"{shown}: sweep manifest version {inert(str(head.get('version')))} is not "
                            f"{VERSION}; use the Blackbox that wrote it")
    try:
        return _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        raise CassetteError(f"{shown}: {inert(str(exc))}; run the sweep again to rewrite it") from None


def write_sweep(folder: str | os.PathLike[str], sweep: Sweep) -> None:
    """Write the manifest atomically (a sweep killed while writing leaves the previous one whole)."""
    atomic_write(Path(folder) / MANIFEST, msgspec.json.format(msgspec.json.encode(sweep), indent=2))
