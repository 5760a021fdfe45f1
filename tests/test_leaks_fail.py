"""The suite's guard against leaks (pyproject's `filterwarnings`, tests/leak_check.py):
a test that leaves a file or a socket unclosed fails, alone or under xdist, even when only the garbage collector
frees it, after the last test.  Run in a pytester project given the same settings."""

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


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["alone", "xdist"])
def test_a_leak_fails_the_run_under_the_projects_settings(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                         workers: list[str]) -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    pytester.makeini("[pytest]\nfilterwarnings =\n" + "".join(f"    {rule}\n" for rule in options["filterwarnings"]))
    pytester.makeconftest('pytest_plugins = ["tests.leak_check"]\n')
    pytester.makepyfile(test_leaky=LEAKY)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rfE", *workers)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    failed = [line for line in out.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert any("test_leaves_a_file_open" in line for line in failed), out
    assert "ResourceWarning: unclosed file <_io.TextIOWrapper name=" in out
    assert "Exception ignored in: <socket.socket" in out  # freed by the collector: still a failure
    assert not any("test_closes_what_it_opens" in line for line in failed), out
