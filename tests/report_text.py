"""A pytest plugin of the suite: a test's report holds only text that UTF-8 can carry.

A failure message (or captured output) with a lone surrogate — the kind of string Blackbox's tests feed it
on purpose — cannot be sent from an xdist worker to the controller (execnet refuses it), which then crashes
with an internal error instead of naming the failed test.  The report's text gets the surrogates escaped
(`\\udcxx`, as Python prints them), so the failure is reported like any other.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest


def escaped(text: str) -> str:
    """`text` with each lone surrogate written as its escape; any other text is returned unchanged."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.longrepr is not None:
        text = report.longreprtext
        if escaped(text) != text:
            report.longrepr = escaped(text)
    report.sections = [(escaped(title), escaped(body)) for title, body in report.sections]
