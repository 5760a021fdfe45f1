"""A failure whose message holds a lone surrogate is reported under xdist as the failed test it is, never an
internal error of the worker (`tests.report_text`, the suite's plugin)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report_text import escaped

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
SURROGATE_FAILURE = '''
def test_names_a_lone_surrogate():
    print("captured \\udc80 too")
    assert "a\\ud800b" == "x"


def test_passes():
    pass
'''


def test_escaped_keeps_plain_text_and_escapes_lone_surrogates() -> None:
    assert escaped("plain ✓ text") == "plain ✓ text"
    assert escaped("a\ud800b") == "a\\ud800b"


def test_a_surrogate_in_a_failure_names_the_test_under_xdist(pytester: pytest.Pytester,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_surrogate=SURROGATE_FAILURE)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:blackbox", "-p", "tests.report_text",
                                           "-n", "2", "-q")
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text, text
    result.assert_outcomes(passed=1, failed=1)
    assert "FAILED test_surrogate.py::test_names_a_lone_surrogate" in text
    assert "a\\ud800b" in text
