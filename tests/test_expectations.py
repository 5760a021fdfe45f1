"""The expectation checks `blackbox assert` and the pytest plugin share."""

import pytest

from blackbox import load
from blackbox.format.expectations import Expectations, check_expectations
from blackbox.format.outcome import outcome
from tests.conftest import FIXTURES


def test_rows_pass_fail_and_skip() -> None:
    found = outcome(load(FIXTURES / "traces" / "success-tool-use.v2.json"))
    expected = Expectations.from_tool_list("search, calendar,booking", status="success", failure_reason="x")
    rows = check_expectations(expected, found)
    assert [(r.name, r.status) for r in rows] == [("status", "pass"), ("tools", "pass"), ("failure_reason", "fail")]
    assert rows[1].found == "search,calendar,booking"
    assert [r.status for r in check_expectations(expected, None)] == ["skip"] * 3


def test_no_tools_and_bad_status() -> None:
    found = outcome(load(FIXTURES / "traces" / "success-final-answer.v2.json"))
    assert check_expectations(Expectations.from_tool_list(""), found)[0].status == "pass"
    assert check_expectations(Expectations(tools=("search",)), found)[0].status == "fail"
    with pytest.raises(ValueError, match="status must be"):
        Expectations(status="done")
