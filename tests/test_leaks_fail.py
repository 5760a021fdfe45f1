"""The suite's guard against leaks (pyproject's `filterwarnings`, tests/leak_check.py):
a test that leaves a file or a socket unclosed fails, alone or under xdist, even when only the garbage collector
frees it, after the last test; and it is that test which fails, not the one that happens to run the next
collection.  Run in a pytester project given the same settings."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).parent.parent

LEAKY = '''
import socket


def test_closes_what_it_opens(tmp_path):
    with open(tmp_path / "kept", "w") as handle:
        handle.write("kept")


def test_leaves_a_file_open(tmp_path):
    handle = open(tmp_path / "left", "w")
    del handle


class Holder:
    pass


def test_leaves_a_socket_in_a_reference_cycle():
    holder = Holder()
    holder.me, holder.sock = holder, socket.socket()
'''


def projects_settings(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    pytester.makeini("[pytest]\nfilterwarnings =\n" + "".join(f"    {rule}\n" for rule in options["filterwarnings"]))
    pytester.makeconftest('pytest_plugins = ["tests.leak_check"]\n')
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["alone", "xdist"])
def test_a_leak_fails_the_run_under_the_projects_settings(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                         workers: list[str]) -> None:
    projects_settings(pytester, monkeypatch)
    pytester.makepyfile(test_leaky=LEAKY)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rfE", *workers)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    failed = [line for line in out.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert any("test_leaves_a_file_open" in line for line in failed), out
    assert "ResourceWarning: unclosed file <_io.TextIOWrapper name=" in out
    assert "Exception ignored in: <socket.socket" in out  # freed by the collector: still a failure
    assert not any("test_closes_what_it_opens" in line for line in failed), out


LEAK_THEN_CLEAN = '''
import gc
import socket

import httpx2


class Holder:
    pass


def test_a_leaks_a_client():
    holder = Holder()
    holder.me = holder
    holder.client = httpx2.Client()
    holder.sock = holder.client.sock = socket.socket()  # a client's connection, never closed
    gc.collect()  # a long test ages what it made: the cycle is old now, left to a rare full collection


def test_b_leaks_nothing(tmp_path):
    with open(tmp_path / "kept", "w") as handle:
        handle.write("kept")
'''


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["alone", "xdist"])
def test_the_test_that_leaks_fails_not_the_next(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                workers: list[str]) -> None:
    """Test A leaks a client in a reference cycle (freed by a full collection only); test B, run after it,
    leaks nothing: A fails in its own teardown, B passes."""
    projects_settings(pytester, monkeypatch)
    pytester.makepyfile(test_order=LEAK_THEN_CLEAN)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-rfE", *workers)
    out = result.stdout.str()
    result.assert_outcomes(passed=2, errors=1)
    failed = [line for line in out.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert len(failed) == 1 and failed[0].startswith("ERROR test_order.py::test_a_leaks_a_client"), out
    assert "Exception ignored in: <socket.socket" in out
