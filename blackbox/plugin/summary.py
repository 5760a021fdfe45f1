"""The pytest plugin's run summary: what happened to each cassette, counted once, and why one was not written.

Counted from the teardown reports, whose user properties carry `fate|why|where` (on the xdist controller too:
it sees the workers' reports).  A fate is the word `plugin_cassettes.CassetteRun.settle` gives a cassette;
`bypass` is a test (not a cassette) that made a request around Blackbox.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from blackbox.format.inert import inert

__all__ = ["CassetteTally"]

# Why a recording was not written, from the test's outcome.
_WHY = {
    "failed": "the test failed",
    "error": "the test's setup failed",
    "skipped": "the test was skipped",
    "xfailed": "the test is marked xfail",
    "xpassed": "the test is marked xfail (it passed: remove the mark to record it)",
    "passed": "the recording did not finish",
}
_NOTES = {
    "missing": "missing (record with --blackbox-record)",
    "kept-old": "not re-recorded: {why}, the old cassette is kept",
    "not-written": "not recorded: {why}",
    "diverged": "diverged",
    "broken": "does not verify",
    "bypass": "made a request around Blackbox",
}
_LIMIT = 20


class CassetteTally:
    """A pytest plugin object: the counts, and the line per cassette that needs a look."""

    def __init__(self) -> None:
        self.events: Counter[str] = Counter()
        self.notes: list[tuple[str, str, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        for key, value in report.user_properties:
            if key != "blackbox" or not isinstance(value, str):
                continue
            fate, why, where = [*value.split("|", 2), "", ""][:3]
            self.events[fate] += 1
            if fate in _NOTES:
                self.notes.append((fate, why, where))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.events:
            return
        e = self.events
        # A diverged cassette replayed until it diverged: it is counted there, not also as replayed.
        parts = [f"{e['replayed'] + e['replayed-failed']} replayed", f"{e['recorded']} recorded",
                 f"{e['missing']} missing", f"{e['diverged']} diverged"]
        for word, label in (("broken", "broken"), ("kept-old", "not re-recorded"), ("not-written", "not recorded"),
                            ("bypass", "bypassed Blackbox")):
            if e[word]:
                parts.append(f"{e[word]} {label}")
        terminalreporter.section("blackbox", sep="-", bold=False)
        terminalreporter.write_line("cassettes: " + ", ".join(parts))
        for fate, why, where in self.notes[:_LIMIT]:
            note = _NOTES[fate].format(why=_WHY.get(why, "the test did not pass"))
            terminalreporter.write_line(f"  {inert(where)}: {note}")
        if len(self.notes) > _LIMIT:
            terminalreporter.write_line(f"  ... and {len(self.notes) - _LIMIT} more")
