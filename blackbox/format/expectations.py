"""What a run was expected to do, checked against its outcome: `blackbox assert` and the pytest plugin share it.

Every expectation is an exact match.  When the cassette does not verify, every expectation is skipped: a
broken chain says nothing trustworthy about what the run did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from blackbox.format.outcome import Outcome

__all__ = ["Expectation", "ExpectationResult", "Expectations", "check_expectations"]

ExpectationName = Literal["status", "final_answer", "tools", "failure_reason"]
STATUSES = ("success", "error", "incomplete")


class Expectations(msgspec.Struct, frozen=True, kw_only=True):
    """What the caller expects; None = not checked.  `tools` is the tool names in call order."""

    status: str | None = None
    final_answer: str | None = None
    tools: tuple[str, ...] | None = None
    failure_reason: str | None = None

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in STATUSES:
            raise ValueError(f"status must be success, error or incomplete, not {self.status!r}")

    @classmethod
    def from_tool_list(cls, tools: str | Sequence[str] | None, **others: str | None) -> Expectations:
        """`tools` as the CLI takes it ("a,b", "" = no tools) or as a sequence of names."""
        names: tuple[str, ...] | None
        if tools is None:
            names = None
        elif isinstance(tools, str):
            names = tuple(t.strip() for t in tools.split(",") if t.strip())
        else:
            names = tuple(tools)
        return cls(tools=names, **others)


class ExpectationResult(msgspec.Struct, frozen=True):
    """One expectation's row: pass, fail, or skip (the cassette did not verify)."""

    name: ExpectationName
    status: Literal["pass", "fail", "skip"]
    expected: str | None
    found: str | None = None


Expectation = ExpectationResult  # the row's short name


def _shown(value: str | tuple[str, ...] | None) -> str | None:
    return ",".join(value) if isinstance(value, tuple) else value


def check_expectations(expected: Expectations, found: Outcome | None) -> list[ExpectationResult]:
    """One row per expectation set, in a fixed order; `found` None (verify failed) skips them all."""
    if found is None:
        got: dict[str, str | tuple[str, ...] | None] = {}
    else:
        got = {"status": found.status, "final_answer": found.final_answer, "tools": found.tools,
               "failure_reason": found.failure_reason}
    names: tuple[ExpectationName, ...] = ("status", "final_answer", "tools", "failure_reason")
    wanted = [(name, want) for name in names if (want := getattr(expected, name)) is not None]
    rows = []
    for name, want in wanted:
        if found is None:
            rows.append(ExpectationResult(name, "skip", _shown(want)))
        else:
            rows.append(ExpectationResult(name, "pass" if want == got[name] else "fail", _shown(want),
                                          _shown(got[name])))
    return rows
