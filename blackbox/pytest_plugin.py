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
- while a test replays, any request that does not go through Blackbox's client fails the test, naming the URL
  (loopback too; `allow_hosts` / `blackbox_allow_hosts` names the exceptions) - see `blackbox.netguard`;
- a divergence fails the test with the replay report (step, path, recorded, actual, hint), not a traceback
  through the SDK.

Only the public session API is used (`blackbox.session`, `http_client()`, `tools`, `finish()`,
`blackbox.verify`, `blackbox.outcome`).  The request a diverging call sent is seen through an httpx event hook
on the clients the fixture hands out, to name the nearest recorded request when the order of calls changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import itertools
import os
import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import msgspec
import pytest

import blackbox as bb_api
from blackbox.errors import BlackboxError, CassetteError, ReplayDivergenceError, is_blackbox_error
from blackbox.expectations import Expectations, check_expectations
from blackbox.inert import inert, inert_lines
from blackbox.netguard import NetGuard, parse_hosts
from blackbox.outcome import Outcome
from blackbox.secrets import KEY_VARIABLES
from blackbox.session import RunSummary

__all__ = ["BlackboxFixture", "CassetteRun"]

RECORD_MODES = ("none", "new", "all")
MATCHES = ("strict", "sequence")
_PLACEHOLDER = "blackbox-replay-placeholder"  # what `blackbox replay` sets; never sent anywhere
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")
_temp_counter = itertools.count()


class _State:
    """Per pytest run: the record mode, match mode and allowed hosts; the summary's tallies."""

    def __init__(self, config: pytest.Config, record: str, record_source: str) -> None:
        self.config = config
        self.record = record
        self.record_source = record_source
        option = config.getoption("blackbox_match")
        self.match: str | None = option if isinstance(option, str) else None
        self.allow = parse_hosts(config.getini("blackbox_allow_hosts"))
        self.events: Counter[str] = Counter()
        self.notes: list[str] = []


_STATE = pytest.StashKey[_State]()
_RUN = pytest.StashKey["_TestRun"]()
_CALL_PASSED = pytest.StashKey[bool]()


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
    state = config.stash[_STATE] = _State(config, record, source)
    config.pluginmanager.register(_Tally(state), "blackbox-tally")


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(_STATE, None)
    if state is None or (state.record == "none" and state.match is None):
        return None
    return f"blackbox: record {state.record}, match {state.match or 'strict'}"


# ---------------------------------------------------------------------------------------------------------
# paths and commands


def _safe(name: str) -> str:
    """A file name from a test name: `test_x[a-1]` → `test_x-a-1`; a hash is added when characters were lost
    (so `[a/b]` and `[a:b]` stay apart), and long names are cut."""
    base, _, params = name.partition("[")
    params = params[:-1] if params.endswith("]") else params
    text = f"{base}-{params}" if params else base
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "test"
    lost = cleaned != text
    if len(cleaned) > 100:
        cleaned, lost = cleaned[:80].rstrip("-."), True
    if lost:
        cleaned += "-" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return cleaned


def default_cassette(item: pytest.Item) -> Path:
    """`<test dir>/cassettes/<module>/<Class.>test_name[-params].json`."""
    path = Path(str(item.path))
    parts = item.nodeid.split("::")[1:]
    name = ".".join([*parts[:-1], parts[-1]]) if parts else item.name
    return path.parent / "cassettes" / path.stem / f"{_safe(name)}.json"


def _relative(path: Path, to: Path) -> str:
    try:
        return os.path.relpath(path, to)
    except ValueError:  # another drive
        return str(path)


def record_command(item: pytest.Item, mode: str = "new") -> str:
    """The command that records this test's cassettes, to run from where pytest was started."""
    invoked = item.config.invocation_params.dir
    where = _relative(Path(str(item.path)), invoked)
    rest = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
    target = f"{where}::{rest}" if rest else where
    flag = "--blackbox-record" if mode == "new" else f"--blackbox-record={mode}"
    return f"pytest {shlex.quote(target)} {flag}"


# ---------------------------------------------------------------------------------------------------------
# one cassette of one test


class CassetteRun:
    """One cassette of a test: a Blackbox session that replays it, or records it (moved into place on pass).

    The session starts at first use (`http_client()`, `tools()`, `mode`, ...), so a test that only uses named
    cassettes never needs the default one."""

    def __init__(self, test: _TestRun, path: Path, *, match: str | None) -> None:
        self.test = test
        self.path = path
        self.match = match
        self.mode: str | None = None  # replay | record, once started
        self.session: bb_api.Session | None = None
        self.summary: RunSummary | None = None
        self.error: BaseException | None = None
        self.fate: str | None = None  # the summary's word for what happened to this cassette
        self._temp: Path | None = None
        self._last_request: bytes | None = None

    # -- starting ----------------------------------------------------------------------------------

    @property
    def shown(self) -> str:
        return _relative(self.path, self.test.item.config.invocation_params.dir)

    def start(self) -> bb_api.Session:
        if self.session is not None:
            return self.session
        if self.fate == "missing":
            self.test.fail_missing(self)
        record = self.test.state.record
        exists = self.path.exists()
        if exists and not self.path.is_file():
            self.fate = "broken"
            _fail(f"[blackbox] {self.shown} is not a regular file; a cassette must be one")
        if record == "all" or (record == "new" and not exists):
            self.session = self._start_recording()
            self.mode = "record"
        elif exists:
            self._check_before_replay()
            self.test.placeholders()
            with _clean_blackbox_env():
                self.session = bb_api.session(mode="replay", cassette=self.path, match=self._match())  # type: ignore[arg-type]
            self.mode = "replay"
        else:
            self.fate = "missing"
            self.test.fail_missing(self)
        return self.session

    def _match(self) -> str | None:
        return self.match or self.test.state.match

    def _check_before_replay(self) -> None:
        """A cassette that does not verify (tampered, truncated, a leaked provider field) is not replayed."""
        try:
            # The environment's keys are looked for in the file; the replay placeholder is not a key.
            env = {name: value for name in KEY_VARIABLES if (value := os.environ.get(name, "")) != _PLACEHOLDER}
            report = bb_api.verify(self.path, env=env)
        except CassetteError as exc:
            self.fate = "broken"
            _fail(f"[blackbox] {self.shown}: {inert(str(exc))}\n  re-record it: "
                  f"{record_command(self.test.item, 'all')}")
        if not report.ok:
            failure = report.failure
            assert failure is not None
            where = f" at step {failure.step}" if failure.step is not None else ""
            self.fate = "broken"
            _fail(f"[blackbox] {self.shown}: {failure.name} failed{where}: {inert(failure.detail)}; "
                  f"{report.advice}\n  re-record it: {record_command(self.test.item, 'all')}")

    def _start_recording(self) -> bb_api.Session:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self._temp = self.path.with_name(
            f".{self.path.stem}.{worker}-{os.getpid()}-{next(_temp_counter)}.blackbox-tmp.json")
        self.test.recording_started()
        with _clean_blackbox_env():
            return bb_api.session(mode="record", out=self._temp, trace_id=self.path.stem)

    # -- the session's API --------------------------------------------------------------------------

    def http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """`Session.http_client()`: the client to give the SDK (`anthropic.Anthropic(http_client=...)`)."""
        session = self.start()
        return session.http_client(flavor, **self._hooked(kwargs, asynchronous=False, flavor=flavor))

    def async_http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """`Session.async_http_client()`: for `AsyncAnthropic` / `AsyncOpenAI`."""
        session = self.start()
        return session.async_http_client(flavor, **self._hooked(kwargs, asynchronous=True, flavor=flavor))

    def tools(self, mapping: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
        """Wrap tools (keys are the model's tool names): replayed from the cassette, never run in replay."""
        return self.start().tools(mapping)

    def tool(self, name: str, fn: Callable[..., Any] | None = None) -> Any:
        """Wrap one tool; without `fn`, a decorator."""
        return self.start().tool(name, fn)

    def finish(self, result: Any = None, error: BaseException | str | None = None) -> Any:
        """End the run now (the plugin does it after the test otherwise); returns the `RunSummary`."""
        session = self.start()
        try:
            self.summary = session.finish(result=result, error=error)
        except BlackboxError as exc:
            self.error = exc
            raise
        return self.summary

    def outcome(self) -> Outcome:
        """The run's outcome (status, final answer or failure reason, tools in call order); ends the run."""
        if self.summary is None:
            if self.error is not None:
                raise self.error
            try:
                self.finish()
            except BlackboxError as exc:
                self.test.fail_with(exc, self)
        path = self._temp if self.mode == "record" else self.path
        assert path is not None
        return bb_api.outcome(bb_api.load(path))

    def assert_outcome(self, *, status: str | None = None, final_answer: str | None = None,
                       tools: Sequence[str] | str | None = None, failure_reason: str | None = None) -> Outcome:
        """Check what the run did, as `blackbox assert` does (exact matches; `tools` in call order)."""
        expected = Expectations.from_tool_list(tools, status=status, final_answer=final_answer,
                                               failure_reason=failure_reason)
        found = self.outcome()
        rows = [row for row in check_expectations(expected, found) if row.status == "fail"]
        if rows:
            lines = [f"  {row.name}: expected {_quoted(row.expected)}, found {_quoted(row.found)}" for row in rows]
            _fail(f"[blackbox] assert_outcome failed for {self.shown}:\n" + "\n".join(lines))
        return found

    # -- the request the agent sent (for the nearest recorded request) ------------------------------

    def _hooked(self, kwargs: dict[str, Any], *, asynchronous: bool, flavor: str | None) -> dict[str, Any]:
        if self.mode == "replay":
            # Replay answers every request itself and never reaches the client's own transport; an offline one
            # costs nothing to build (a default transport loads the system's certificates: ~40 ms a client) and
            # could not reach the network if it were ever asked.
            kwargs.setdefault("transport", _offline_transport(flavor, asynchronous))
            kwargs.setdefault("trust_env", False)  # no proxy transports from the environment either
        hooks = {key: list(value) for key, value in (kwargs.pop("event_hooks", None) or {}).items()}

        def note(request: Any) -> None:
            with contextlib.suppress(Exception):  # a streamed upload has no content to read; nothing to note
                self._last_request = bytes(request.content)

        async def anote(request: Any) -> None:
            note(request)

        hooks.setdefault("request", []).append(anote if asynchronous else note)
        kwargs["event_hooks"] = hooks
        return kwargs

    def nearest(self, exc: ReplayDivergenceError) -> str | None:
        """When the request the agent sent matches another recorded request better than the one it was checked
        against (the order of calls changed), a line naming that step."""
        if self._last_request is None or exc.step is None or exc.path in ("end of run", "outcome"):
            return None
        try:
            sent = msgspec.json.decode(self._last_request)
            steps = bb_api.load(self.path).steps
        except (msgspec.DecodeError, CassetteError):
            return None
        words = _leaves(sent)
        if not words:
            return None
        scores = {s.index: _similarity(words, _leaves(s.payload)) for s in steps if s.type == "model_input"}
        if not scores:
            return None
        best = max(scores, key=lambda index: (scores[index], -abs(index - (exc.step or 0))))
        checked = scores.get(exc.step, 0.0)
        if best == exc.step or scores[best] <= checked:
            return None
        return (f"  nearest recorded request: step {best} ({scores[best]:.0%} of its text matches the request the "
                f"agent sent, step {exc.step} {checked:.0%}); did the order of the calls change?")

    # -- the end -----------------------------------------------------------------------------------

    def end(self, test_error: BaseException | None) -> BlackboxError | None:
        """Finish the session if the test did not; the Blackbox error that made (or makes) the run fail."""
        if self.session is None:
            return None
        if self.summary is None and self.error is None:
            try:
                self.summary = self.session.finish(error=test_error) if test_error is not None else \
                    self.session.finish()
            except BlackboxError as exc:
                self.error = exc
        return self.error if isinstance(self.error, BlackboxError) else None

    def settle(self, passed: bool) -> None:
        """After the test: move a recording into place if the test passed; otherwise drop it."""
        if self.session is not None and self.summary is None and self.error is None:
            with contextlib.suppress(BlackboxError):  # a test that never reached its call phase
                self.summary = self.session.finish(error="the test ended before the run finished")
        if self.mode == "replay":
            self.fate = "diverged" if isinstance(self.error, ReplayDivergenceError) else (
                "replayed" if passed else "replayed-failed")
        elif self.mode == "record":
            assert self._temp is not None
            if passed and self.error is None and self._temp.is_file():
                os.replace(self._temp, self.path)
                self.fate = "recorded"
            else:
                self.fate = "kept-old" if self.path.exists() else "not-written"
            for leftover in self._temp.parent.glob(self._temp.name + "*"):
                with contextlib.suppress(OSError):
                    leftover.unlink()


def _offline_transport(flavor: str | None, asynchronous: bool) -> Any:
    """A transport of the client's HTTP module that refuses every request (replay never hands it one)."""
    http = importlib.import_module(flavor or ("httpx2" if importlib.util.find_spec("httpx2") else "httpx"))

    def refuse(request: Any) -> NoReturn:
        _fail(f"[blackbox] replay tried to send {request.method} {request.url} to the network; replay never "
              "does: this is a bug in Blackbox, please report it")

    if asynchronous:
        class AsyncOffline(http.AsyncBaseTransport):  # type: ignore[name-defined,misc]
            async def handle_async_request(self, request: Any) -> Any:
                refuse(request)

        return AsyncOffline()

    class Offline(http.BaseTransport):  # type: ignore[name-defined,misc]
        def handle_request(self, request: Any) -> Any:
            refuse(request)

    return Offline()


def _leaves(value: Any) -> Counter[str]:
    """The strings and numbers of a JSON value: what a provider request and its neutral form share."""
    found: Counter[str] = Counter()
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
        elif isinstance(current, str):
            found[current] += 1
        elif isinstance(current, int | float) and not isinstance(current, bool):
            found[repr(current)] += 1
    return found


def _similarity(a: Counter[str], b: Counter[str]) -> float:
    shared = sum((a & b).values())
    total = sum((a | b).values())
    return shared / total if total else 0.0


def _quoted(value: str | None) -> str:
    return "(none)" if value is None else inert(repr(value))


def _fail(message: str) -> NoReturn:
    pytest.fail(message, pytrace=False)


# What `blackbox record|replay|fork -- cmd` sets for the agent's session.
_SESSION_VARS = ("BLACKBOX_MODE", "BLACKBOX_CASSETTE", "BLACKBOX_OUT", "BLACKBOX_TRACE_ID", "BLACKBOX_FORK_AT",
                 "BLACKBOX_FORK_SET", "BLACKBOX_CONTINUE", "BLACKBOX_SCRIPT", "BLACKBOX_MATCH", "BLACKBOX_REPORT")


@contextlib.contextmanager
def _clean_blackbox_env() -> Iterator[None]:
    """The session reads BLACKBOX_* (set by `blackbox record|replay -- cmd`); under the plugin the plugin
    decides, and no launcher report is written."""
    saved = {name: os.environ.pop(name) for name in _SESSION_VARS if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


# ---------------------------------------------------------------------------------------------------------
# one test


class _TestRun:
    """Everything the plugin keeps for one test: its cassettes and its network guard."""

    def __init__(self, item: pytest.Item, state: _State) -> None:
        self.item = item
        self.state = state
        marker = item.get_closest_marker("blackbox")
        args = marker.args if marker is not None else ()
        kwargs = dict(marker.kwargs) if marker is not None else {}
        path = kwargs.pop("path", args[0] if args else None)
        self.match = kwargs.pop("match", None)
        if self.match is not None and self.match not in MATCHES:
            _fail(f"[blackbox] @pytest.mark.blackbox(match={self.match!r}): use strict or sequence")
        allow = kwargs.pop("allow_hosts", ())
        if isinstance(allow, str):
            allow = [allow]
        if kwargs or len(args) > 1:
            _fail("[blackbox] @pytest.mark.blackbox takes one cassette path and match=, allow_hosts=; use "
                  "blackbox.session(name) in the test for more cassettes")
        self.default_path = self._resolve(path) if path is not None else default_cassette(item)
        self.cassettes: dict[Path, CassetteRun] = {}
        self._default: CassetteRun | None = None
        self.guard = NetGuard(state.allow | parse_hosts(allow), _fail, "this test replays its cassettes")
        self.guard_on = False
        self._env_saved: dict[str, str | None] = {}

    def _resolve(self, path: str | os.PathLike[str]) -> Path:
        given = Path(path)
        return given if given.is_absolute() else Path(str(self.item.path)).parent / given

    def cassette(self, name: str | os.PathLike[str] | None = None, *, match: str | None = None) -> CassetteRun:
        if name is None and match is None and self._default is not None:
            return self._default
        if name is None:
            path = self.default_path
        else:
            text = os.fspath(name)
            if text.endswith(".json") or "/" in text or os.sep in text:
                path = self._resolve(text)
            else:
                path = self.default_path.with_name(f"{self.default_path.stem}.{_safe(text)}.json")
        path = path.resolve()
        run = self.cassettes.get(path)
        if run is None:
            if match is not None and match not in MATCHES:
                raise ValueError(f"match must be strict or sequence, not {match!r}")
            run = self.cassettes[path] = CassetteRun(self, path, match=match or self.match)
        if name is None and self._default is None:
            self._default = run
        return run

    # -- keys, the guard ---------------------------------------------------------------------------

    def placeholders(self) -> None:
        """Replay needs no key, but SDK clients refuse to be built without one: set a placeholder if unset."""
        for name in KEY_VARIABLES:
            if not os.environ.get(name) and name not in self._env_saved:
                self._env_saved[name] = os.environ.get(name)
                os.environ[name] = _PLACEHOLDER

    def restore_env(self) -> None:
        for name, value in self._env_saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._env_saved.clear()

    def recording_started(self) -> None:
        """A recording goes to the real API: from here on the test may use the network."""
        self.guard_on = False
        self.guard.enabled = False

    # -- failures ----------------------------------------------------------------------------------

    def fail_missing(self, run: CassetteRun) -> NoReturn:
        _fail(f"[blackbox] no cassette at {run.shown}; this test replays it and never calls a live API.\n"
              f"  record it: {record_command(self.item)}")

    def report(self, exc: BlackboxError, run: CassetteRun | None) -> str:
        """The failure text for a Blackbox error: the replay report, the nearest request, what to do."""
        text = inert_lines(str(exc))
        if not text.startswith("[blackbox]"):
            text = "[blackbox] " + text
        lines = [text]
        if isinstance(exc, ReplayDivergenceError) and run is not None:
            lines[0] = f"[blackbox] {run.shown}: " + text.removeprefix("[blackbox] ")
            nearest = run.nearest(exc)
            if nearest is not None:
                lines.append(nearest)
            lines.append(f"  if the change is intended, re-record: {record_command(self.item, 'all')}")
        return "\n".join(lines)

    def fail_with(self, exc: BlackboxError, run: CassetteRun | None) -> NoReturn:
        _fail(self.report(exc, run))

    def ended(self, test_error: BaseException | None) -> None:
        """After the test function: finish every session, then fail the test for what Blackbox saw."""
        errors = [(run, run.end(test_error)) for run in self.cassettes.values()]
        if self.guard.violations:
            if isinstance(test_error, pytest.fail.Exception):
                return  # the guard's own failure already says it
            _fail(f"[blackbox] the test made requests around Blackbox (caught and swallowed): "
                  f"{'; '.join(self.guard.violations)}")
        missing = [run for run in self.cassettes.values() if run.fate == "missing"]
        if missing and not isinstance(test_error, pytest.fail.Exception):
            self.fail_missing(missing[0])
        if isinstance(test_error, pytest.fail.Exception):
            return
        for run, error in errors:
            if error is None:
                continue
            finish_time = isinstance(error, ReplayDivergenceError) and error.path in ("end of run", "outcome")
            if test_error is not None and finish_time and not is_blackbox_error(test_error):
                continue  # the test failed for its own reason; the run ending early follows from it
            self.fail_with(error, run)
        if test_error is not None and is_blackbox_error(test_error):
            own = test_error if isinstance(test_error, BlackboxError) else None
            _fail(self.report(own, None) if own is not None else "[blackbox] " + _blackbox_message(test_error))


def _blackbox_message(exc: BaseException) -> str:
    """The `[blackbox] ...` message an SDK error carries in its body."""
    current: BaseException | None = exc
    while current is not None:
        body = getattr(current, "body", None)
        error = body.get("error", body) if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str) and message.startswith("[blackbox]"):
            return inert_lines(message.removeprefix("[blackbox]").strip())
        current = current.__cause__ or current.__context__
    return inert_lines(str(exc))


# ---------------------------------------------------------------------------------------------------------
# the fixture


class BlackboxFixture:
    """What the `blackbox` fixture gives a test: its default cassette's session API, and more cassettes.

    `blackbox.http_client()`, `.async_http_client()`, `.tools()`, `.tool()`, `.finish()`, `.outcome()`,
    `.assert_outcome()` act on the default cassette (the marker's path, or one named after the test);
    `blackbox.session("planner")` is another cassette of the same test (`<default>.planner.json`, or a path
    relative to the test file when the name ends in .json), with the same methods."""

    def __init__(self, test: _TestRun) -> None:
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


@pytest.fixture(name="blackbox")
def blackbox_fixture(request: pytest.FixtureRequest) -> Iterator[BlackboxFixture]:
    """Replay (or, with --blackbox-record, record) the test's cassettes; see the plugin's docs."""
    item = request.node
    assert isinstance(item, pytest.Item)
    test = _TestRun(item, item.config.stash[_STATE])
    item.stash[_RUN] = test
    if test.state.record != "all":
        test.placeholders()
    try:
        yield BlackboxFixture(test)
    finally:
        passed = item.stash.get(_CALL_PASSED, False)
        try:
            for run in test.cassettes.values():
                run.settle(passed)
        finally:
            test.restore_env()
            for run in test.cassettes.values():
                item.user_properties.append(("blackbox", f"{run.fate or 'unused'}|{run.shown}"))
            if test.guard.violations:
                item.user_properties.append(("blackbox", f"bypass|{item.nodeid}"))


# ---------------------------------------------------------------------------------------------------------
# hooks around the test


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    test = item.stash.get(_RUN, None)
    if test is None:
        return (yield)
    error: BaseException | None = None
    with test.guard.active():
        test.guard.enabled = True
        try:
            result = yield
        except (Exception, pytest.fail.Exception) as exc:  # not KeyboardInterrupt, SystemExit, skip or exit
            error = exc
        finally:
            test.guard.enabled = False
    # Out of the except block, so a Blackbox failure does not show the SDK's error as its context.
    test.ended(error)
    if error is not None:
        raise error
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and item.stash.get(_RUN, None) is not None:
        item.stash[_CALL_PASSED] = bool(report.passed and not hasattr(report, "wasxfail"))
    return report


class _Tally:
    """Counts what happened to each cassette, from the teardown reports (on the xdist controller too: it sees
    the workers' reports, which carry the counts as user properties)."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        for key, value in report.user_properties:
            if key != "blackbox" or not isinstance(value, str):
                continue
            fate, _, where = value.partition("|")
            self.state.events[fate] += 1
            if fate in _NOTE_WORDS:
                self.state.notes.append(f"{fate}|{where}")


_NOTE_WORDS = {
    "missing": "missing (record with --blackbox-record)",
    "kept-old": "not re-recorded: the test failed, the old cassette is kept",
    "not-written": "not recorded: the test failed",
    "diverged": "diverged",
    "broken": "does not verify",
    "bypass": "made a request around Blackbox",
}


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or not state.events:
        return
    e = state.events
    parts = [f"{e['replayed'] + e['replayed-failed'] + e['diverged']} replayed", f"{e['recorded']} recorded",
             f"{e['missing']} missing", f"{e['diverged']} diverged"]
    for word, label in (("broken", "broken"), ("kept-old", "not re-recorded"), ("not-written", "not recorded"),
                        ("bypass", "bypassed Blackbox")):
        if e[word]:
            parts.append(f"{e[word]} {label}")
    terminalreporter.section("blackbox", sep="-", bold=False)
    terminalreporter.write_line("cassettes: " + ", ".join(parts))
    for note in state.notes[:20]:
        fate, _, where = note.partition("|")
        terminalreporter.write_line(f"  {inert(where)}: {_NOTE_WORDS.get(fate, fate)}")
    if len(state.notes) > 20:
        terminalreporter.write_line(f"  ... and {len(state.notes) - 20} more")
