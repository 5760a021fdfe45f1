"""The pytest plugin: committed cassettes as fast, key-free, tamper-checked regression tests.

Installed with the package (entry point `pytest11: blackbox`); no conftest needed.

    def test_agent(blackbox):
        client = anthropic.Anthropic(http_client=blackbox.http_client())
        answer = run_agent(client, blackbox.tools({"get_weather": get_weather}))
        blackbox.assert_outcome(status="success", tools=["get_weather"])

Safe by default, because the failures users of recording libraries know best are silent ones:

- a test replays its cassette; a missing cassette fails the test with the command that records it, never a
  live call (`--blackbox-record` records missing ones, `--blackbox-record=all` every one);
- a recording is made into a temporary file and moved over the cassette only when the test passed, so a
  failing test never replaces a good cassette;
- a cassette is verified (hash chain, neutrality) before it is replayed;
- while a test replays (its setup, call and teardown: every function-scoped fixture), any request that does not
  go through Blackbox's client fails the test, naming the URL (loopback too; `allow_hosts` /
  `blackbox_allow_hosts` names the exceptions) - see `blackbox.plugin.network`; a child pytest run honours it;
- a divergence fails the test with the replay report (step, path, recorded, actual, hint), not a traceback
  through the SDK.

This module holds the hooks, options, fixtures (`blackbox`, and `blackbox_cassette_dir`, `blackbox_config`,
`blackbox_allow_hosts` for a conftest to override) and the marker; one test's state (its marker, cassettes,
guard and failure) is `blackbox.plugin.per_test`; one cassette's life (its path, verify, replay or record, the
move into place, the nearest recorded request on a divergence) is `blackbox.plugin.cassettes`; the run summary
is `blackbox.plugin.summary`.
Only the public session API is used (`blackbox.live.session`, `http_client()`, `tools`, `finish()`,
`blackbox.format.verify`, `blackbox.format.outcome`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.outcome import Outcome
from blackbox.plugin.age import ACTIONS
from blackbox.plugin.cassettes import (
    MATCHES,
    RECORD_MODES,
    CassetteRun,
    default_cassette_dir,
    fail,
)
from blackbox.plugin.network import NetGuard, guard_from_environment
from blackbox.plugin.per_test import State, TestRun
from blackbox.plugin.summary import CassetteTally

__all__ = ["BlackboxFixture", "CassetteRun"]

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")

_STATE = pytest.StashKey[State]()
_RUN = pytest.StashKey[TestRun]()
_OUTCOME = pytest.StashKey[str]()  # passed | failed | skipped | xfailed | xpassed | error (setup)
_PROCESS_GUARD = pytest.StashKey[NetGuard]()


# ---------------------------------------------------------------------------------------------------------
# options


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("blackbox", "Blackbox cassettes")
    group.addoption(
        "--blackbox-record", dest="blackbox_record", nargs="?", const="new", default=None, choices=RECORD_MODES,
        help="Record cassettes: 'new' (the default when given alone) records the missing ones, 'all' re-records "
             "every one, 'none' replays only. A cassette is written only when its test passes. Put it after the "
             "test paths or write --blackbox-record=new. Env: BLACKBOX_RECORD (refused under CI unless "
             "BLACKBOX_RECORD_IN_CI=1).")
    group.addoption(
        "--blackbox-match", dest="blackbox_match", default=None, choices=MATCHES,
        help="How replay compares requests: 'strict' (the whole request) or 'sequence' (only the order of model "
             "and tool calls and the outcome; for nondeterministic request details).")
    parser.addini("blackbox_allow_hosts", type="linelist", default=[],
                  help="Hosts (or host:port) a replayed test may still reach, e.g. a server the test runs itself.")
    group.addoption(
        "--blackbox-max-age", dest="blackbox_max_age", default=None, metavar="AGE",
        help="Warn about (or fail, see --blackbox-max-age-action) a test whose replayed cassette is older than "
             "AGE (90m, 12h, 30d, 2w), from its made.at, else its createdAt. Ini: blackbox_max_age.")
    group.addoption(
        "--blackbox-max-age-action", dest="blackbox_max_age_action", default=None, choices=ACTIONS,
        help="What a cassette older than the max age does: 'warn' (the default) or 'fail' the test. Ini: "
             "blackbox_max_age_action.")
    parser.addini("blackbox_max_age", default="", help="The age past which a replayed cassette is stale (30d).")
    parser.addini("blackbox_max_age_action", default="",
                  help="What a stale cassette does: warn (the default) or fail.")


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in _FALSE


def _record_mode(config: pytest.Config) -> tuple[str, str]:
    """(mode, where it came from): the option beats BLACKBOX_RECORD; the variable is refused under CI."""
    option = config.getoption("blackbox_record")
    if isinstance(option, str):
        return option, "--blackbox-record"
    raw = os.environ.get("BLACKBOX_RECORD", "").strip().lower()
    if raw in _FALSE:
        return "none", ""
    mode = "new" if raw in _TRUE else raw
    if mode not in RECORD_MODES:
        raise pytest.UsageError(f"BLACKBOX_RECORD={raw!r} is not valid; use one of new, all, none (or unset it)")
    if mode != "none" and _in_ci() and os.environ.get("BLACKBOX_RECORD_IN_CI", "").strip().lower() not in _TRUE:
        raise pytest.UsageError(
            f"BLACKBOX_RECORD={raw} is set under CI, where tests must replay committed cassettes, not call live "
            "APIs; unset it, or set BLACKBOX_RECORD_IN_CI=1 (or pass --blackbox-record) if this job is meant to "
            "record")
    return mode, "BLACKBOX_RECORD"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "blackbox(path=None, *, match=None, allow_hosts=()): the test's cassette (relative to the test file) and "
        "how it replays; see the blackbox fixture")
    record, source = _record_mode(config)
    config.stash[_STATE] = State(config, record, source)
    config.pluginmanager.register(CassetteTally(), "blackbox-tally")
    guard = guard_from_environment(fail)  # this pytest was started by a replayed test: no network at all
    if guard is not None:
        config.stash[_PROCESS_GUARD] = guard


def pytest_unconfigure(config: pytest.Config) -> None:
    guard = config.stash.get(_PROCESS_GUARD, None)
    if guard is not None:
        guard.uninstall()


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(_STATE, None)
    if state is None or (state.record == "none" and state.match is None):
        return None
    return f"blackbox: record {state.record}, match {state.match or 'strict'}"



# ---------------------------------------------------------------------------------------------------------
# the fixture


class BlackboxFixture:
    """What the `blackbox` fixture gives a test: its default cassette's session API, and more cassettes.

    `blackbox.http_client()`, `.async_http_client()`, `.tools()`, `.tool()`, `.finish()`, `.outcome()`,
    `.assert_outcome()` act on the default cassette (the marker's path, or one named after the test);
    `blackbox.session("planner")` is another cassette of the same test (`<default>.planner.json`, or a path
    relative to the test file when the name ends in .json), with the same methods."""

    def __init__(self, test: TestRun) -> None:
        self._test = test

    def session(self, name: str | os.PathLike[str] | None = None, *, match: str | None = None) -> CassetteRun:
        """Another cassette of this test (one per agent when a test runs several); the same name, the same one."""
        return self._test.cassette(name, match=match)

    @property
    def default(self) -> CassetteRun:
        return self._test.cassette()

    @property
    def path(self) -> Path:
        """Where the default cassette lives."""
        return self._test.default_path

    @property
    def mode(self) -> str:
        """"replay" or "record" (starts the default session)."""
        self.default.start()
        return self.default.mode or "replay"

    def http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        return self.default.http_client(flavor, **kwargs)

    def async_http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        return self.default.async_http_client(flavor, **kwargs)

    def genai_http_options(self, flavor: str | None = None, **kwargs: Any) -> Any:
        return self.default.genai_http_options(flavor, **kwargs)

    def tools(self, mapping: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
        return self.default.tools(mapping)

    def tool(self, name: str, fn: Callable[..., Any] | None = None) -> Any:
        return self.default.tool(name, fn)

    def finish(self, result: Any = None, error: BaseException | str | None = None) -> Any:
        return self.default.finish(result=result, error=error)

    def outcome(self) -> Outcome:
        return self.default.outcome()

    def assert_outcome(self, *, status: str | None = None, final_answer: str | None = None,
                       tools: Sequence[str] | str | None = None, failure_reason: str | None = None) -> Outcome:
        return self.default.assert_outcome(status=status, final_answer=final_answer, tools=tools,
                                           failure_reason=failure_reason)

    def __repr__(self) -> str:
        return f"<blackbox fixture {self._test.default_path}>"


def _test_run(item: pytest.Item, request: pytest.FixtureRequest) -> TestRun:
    test = item.stash.get(_RUN, None)
    if test is None:
        test = item.stash[_RUN] = TestRun(item, item.config.stash[_STATE],
                                           request.getfixturevalue("blackbox_cassette_dir"),
                                           request.getfixturevalue("blackbox_config"))
    return test


@pytest.fixture
def blackbox_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """The folder of a test's default cassette: `cassettes/<module>/` beside the test file.  Override it in a
    conftest or a module to keep cassettes elsewhere (a relative path is relative to the test file); a marker's
    path is still relative to the test file."""
    item = request.node
    assert isinstance(item, pytest.Item)
    return default_cassette_dir(item)


@pytest.fixture
def blackbox_config() -> Mapping[str, Any]:
    """Defaults for a test's cassettes, under the marker's options: `match` (`"strict"` / `"sequence"`) and
    `allow_hosts`.  Override it in a conftest, a module or a class (as pytest-recording's `vcr_config`)."""
    return {}


@pytest.fixture
def blackbox_allow_hosts() -> Sequence[str]:
    """Hosts a replayed test may reach besides the marker's and the ini's; override it in a conftest to allow
    a server a fixture starts (`return [f"127.0.0.1:{server.port}"]`)."""
    return ()


@pytest.fixture(autouse=True)
def _blackbox_network_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """The network guard of a test that uses `blackbox`, up through every function-scoped fixture's setup and
    teardown (autouse: set up before them, torn down after).  Fixtures of a wider scope are shared with tests
    that do not replay and set up by whichever test comes first, so they stay outside it."""
    item = request.node
    if not isinstance(item, pytest.Item) or "blackbox" not in request.fixturenames:
        yield
        return
    test = _test_run(item, request)
    test.allow_more(request.getfixturevalue("blackbox_allow_hosts"))
    with test.guard.active():
        yield


@pytest.fixture(name="blackbox")
def blackbox_fixture(request: pytest.FixtureRequest) -> Iterator[BlackboxFixture]:
    """Replay (or, with --blackbox-record, record) the test's cassettes; see the plugin's docs."""
    item = request.node
    assert isinstance(item, pytest.Item)
    test = _test_run(item, request)
    if test.state.record != "all":
        test.placeholders()
    try:
        with test.guard.active():  # already up, unless the test asked for the fixture by getfixturevalue
            yield BlackboxFixture(test)
    finally:
        outcome = item.stash.get(_OUTCOME, "error")
        try:
            for run in test.cassettes.values():
                run.settle(outcome)
        finally:
            test.restore_env()
            for run in test.cassettes.values():
                item.user_properties.append(("blackbox", f"{run.fate or 'unused'}|{run.why}|{run.shown}"))


# ---------------------------------------------------------------------------------------------------------
# hooks around the test


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    test = item.stash.get(_RUN, None)
    if test is None:
        return (yield)
    error: BaseException | None = None
    try:  # the guard is up (the autouse fixture's) until a recording starts
        result = yield
    except (Exception, pytest.fail.Exception) as exc:  # not KeyboardInterrupt, SystemExit, skip or exit
        error = exc
    # Out of the except block, so a Blackbox failure does not show the SDK's error as its context.
    test.ended(error)
    if error is not None:
        raise error
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """After every fixture is torn down: a request refused and swallowed there fails the teardown."""
    test = item.stash.get(_RUN, None)
    before = len(test.guard.violations) if test is not None else 0
    try:
        result = yield
    finally:
        if test is not None and test.guard.violations:
            item.user_properties.append(("blackbox", f"bypass||{item.nodeid}"))
    if test is not None and (late := test.guard.violations[before:]):
        fail(f"[blackbox] the test's teardown made requests around Blackbox (caught and swallowed): "
             f"{'; '.join(late)}")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if item.stash.get(_RUN, None) is not None and (call.when == "call" or not report.passed):
        item.stash[_OUTCOME] = _outcome(report) if call.when == "call" or report.skipped else "error"
    return report


def _outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    return str(report.outcome)
