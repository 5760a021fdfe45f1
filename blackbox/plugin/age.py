"""The pytest plugin's age limit: warn about, or fail, a test whose cassette is older than a set age.

A cassette replays what the provider answered when it was recorded; the older it is, the likelier the live API
answers otherwise (docs/format.md, "Drift").  `blackbox_max_age = 30d` (ini) or `--blackbox-max-age 30d` sets the
limit (`s`, `m`, `h`, `d`, `w`; a bare number is days); `blackbox_max_age_action` / `--blackbox-max-age-action`
says what an older cassette does: `warn` (a `StaleCassetteWarning`, the default) or `fail` (the test fails,
naming the age and the command that re-records it).  The age is from the cassette's `made.at`, else its
`createdAt`; only a replayed cassette is judged (a recording is new by definition).
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest

from blackbox.format.origin import Made
from blackbox.format.provenance import made_at

__all__ = ["ACTIONS", "MaxAge", "StaleCassetteWarning", "age_problem", "judge_age", "max_age_of", "parse_age"]

ACTIONS = ("warn", "fail")
_UNITS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_AGE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*")


class StaleCassetteWarning(pytest.PytestWarning):
    """A replayed cassette is older than `blackbox_max_age`."""


@dataclass(frozen=True)
class MaxAge:
    ms: float
    action: str
    said: str  # as the user wrote it, for messages


class _Header(msgspec.Struct):
    """The two fields the age is read from (the rest of the file is skipped unread)."""

    createdAt: float
    made: Made | None = None


def parse_age(text: str) -> float:
    """`30d` → milliseconds; ValueError naming the accepted form."""
    found = _AGE.fullmatch(text)
    if found is None or float(found.group(1)) <= 0:
        raise ValueError(f"{text!r} is not an age; write a positive number with a unit: 90m, 12h, 30d, 2w")
    return float(found.group(1)) * _UNITS[found.group(2) or "d"]


def max_age_of(config: pytest.Config) -> MaxAge | None:
    """The limit in force: the command line's over the ini's; None when none is set."""
    option, ini = config.getoption("blackbox_max_age"), config.getini("blackbox_max_age")
    text = option if isinstance(option, str) and option else ini if isinstance(ini, str) and ini.strip() else None
    chosen = config.getoption("blackbox_max_age_action") or config.getini("blackbox_max_age_action") or "warn"
    action = str(chosen).strip().lower()
    if action not in ACTIONS:
        raise pytest.UsageError(f"blackbox_max_age_action = {action!r} is not valid; use warn or fail")
    if text is None:
        return None
    try:
        return MaxAge(parse_age(text), action, text.strip())
    except ValueError as exc:
        raise pytest.UsageError(f"blackbox_max_age: {exc}") from None


def _days(ms: float) -> str:
    return f"{ms / 86_400_000:.1f} days"


def age_problem(path: Path, limit: MaxAge, now: float | None = None) -> str | None:
    """Why the cassette at `path` is too old (its age and the limit), or None when it is young enough or its
    age cannot be read (verify, which runs first, judges the file)."""
    try:
        header = msgspec.json.decode(path.read_bytes(), type=_Header)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    at = made_at(header.made, header.createdAt)
    age = (time.time() * 1000 if now is None else now) - at
    if age <= limit.ms:
        return None
    source = "made.at" if header.made is not None else "createdAt"
    return f"is {_days(age)} old ({source}), older than blackbox_max_age = {limit.said}"


def judge_age(path: Path, limit: MaxAge | None, shown: str, rerecord: str) -> None:
    """Warn about, or fail, a replayed cassette older than `limit` (nothing without a limit)."""
    if limit is None:
        return
    problem = age_problem(path, limit)
    if problem is None:
        return
    message = f"[blackbox] {shown} {problem}; re-record it: {rerecord}"
    if limit.action == "fail":
        pytest.fail(message, pytrace=False)
    warnings.warn(StaleCassetteWarning(message), stacklevel=2)
