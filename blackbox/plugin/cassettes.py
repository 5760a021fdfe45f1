"""One cassette of one pytest test: where it lives, and the Blackbox session that replays or records it.

The plugin (`blackbox.plugin.plugin`) owns the hooks, the fixture and the marker; this module owns a cassette's
life: its default path (from the test's module and name, parametrized ids made safe for a file name), the
command that records it, verify before replay, a recording made into a temporary file and moved over the
cassette only when the test passed, and the nearest recorded request when a replay diverged.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn, Protocol

import msgspec
import pytest

import blackbox as bb_api
from blackbox.errors import BlackboxError, CassetteError, ReplayDivergenceError
from blackbox.format.expectations import Expectations, check_expectations
from blackbox.format.inert import inert
from blackbox.format.outcome import Outcome
from blackbox.format.secrets import KEY_VARIABLES, PLACEHOLDER_KEYS
from blackbox.live.sdk_clients import genai_http_options
from blackbox.live.session import RunSummary
from blackbox.live.settings import SESSION_VARIABLES
from blackbox.live.transport import http_module
from blackbox.plugin.age import MaxAge, judge_age

__all__ = ["MATCHES", "RECORD_MODES", "CassetteOwner", "CassetteRun", "default_cassette", "fail", "record_command",
           "safe_name", "shown_path"]

RECORD_MODES = ("none", "new", "all")
MATCHES = ("strict", "sequence")
_temp_counter = itertools.count()


def fail(message: str) -> NoReturn:
    """Fail the test with Blackbox's own text, not a traceback."""
    pytest.fail(message, pytrace=False)


class RunSettings(Protocol):
    record: str
    match: str | None
    max_age: MaxAge | None


class CassetteOwner(Protocol):
    """What a cassette needs from the test that owns it (the plugin's per-test record)."""

    item: pytest.Item

    @property
    def state(self) -> RunSettings: ...

    def fail_missing(self, run: CassetteRun) -> NoReturn: ...

    def fail_with(self, exc: BlackboxError, run: CassetteRun | None) -> NoReturn: ...

    def placeholders(self) -> None: ...

    def recording_started(self) -> None: ...

    def replay_started(self) -> None: ...


# -- paths and commands --------------------------------------------------------------------------------------


def safe_name(name: str) -> str:
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


def default_cassette_dir(item: pytest.Item) -> Path:
    """`<test dir>/cassettes/<module>/`: what the `blackbox_cassette_dir` fixture returns unless overridden."""
    path = Path(str(item.path))
    return path.parent / "cassettes" / path.stem


def cassette_name(item: pytest.Item) -> str:
    """`<Class.>test_name[-params].json`, the default cassette's name in its folder."""
    parts = item.nodeid.split("::")[1:]
    name = ".".join([*parts[:-1], parts[-1]]) if parts else item.name
    return f"{safe_name(name)}.json"


def default_cassette(item: pytest.Item) -> Path:
    """`<test dir>/cassettes/<module>/<Class.>test_name[-params].json`."""
    return default_cassette_dir(item) / cassette_name(item)


def _relative(path: Path, to: Path) -> str:
    try:
        return os.path.relpath(path, to)
    except ValueError:  # another drive
        return str(path)


def shown_path(item: pytest.Item, path: Path) -> str:
    """A path as the user sees it: relative to where pytest was started."""
    return _relative(path, item.config.invocation_params.dir)


def record_command(item: pytest.Item, mode: str = "new") -> str:
    """The command that records this test's cassettes, to run from where pytest was started."""
    invoked = item.config.invocation_params.dir
    where = _relative(Path(str(item.path)), invoked)
    rest = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
    target = f"{where}::{rest}" if rest else where
    flag = "--blackbox-record" if mode == "new" else f"--blackbox-record={mode}"
    return f"pytest {shlex.quote(target)} {flag}"



# -- one cassette of one test --------------------------------------------------------------------------------


class CassetteRun:
    """One cassette of a test: a Blackbox session that replays it, or records it (moved into place on pass).

    The session starts at first use (`http_client()`, `tools()`, `mode`, ...), so a test that only uses named
    cassettes never needs the default one."""

    def __init__(self, test: CassetteOwner, path: Path, *, match: str | None) -> None:
        self.test = test
        self.path = path
        self.match = match
        self.mode: str | None = None  # replay | record, once started
        self.session: bb_api.Session | None = None
        self.summary: RunSummary | None = None
        self.error: BaseException | None = None
        self.fate: str | None = None  # the summary's word for what happened to this cassette
        self.why = ""  # the test's outcome, when a recording was not written
        self._temp: Path | None = None
        self._last_request: bytes | None = None
        self._clients: list[Any] = []  # the sync HTTP clients handed out: closed as the test ends

    # -- starting ----------------------------------------------------------------------------------

    @functools.cached_property
    def shown(self) -> str:
        return shown_path(self.test.item, self.path)

    def start(self) -> bb_api.Session:
        if self.session is not None:
            return self.session
        if self.fate == "missing":
            self.test.fail_missing(self)
        record = self.test.state.record
        exists = self.path.exists()
        if exists and not self.path.is_file():
            self.fate = "broken"
            fail(f"[blackbox] {self.shown} is not a regular file; a cassette must be one")
        if record == "all" or (record == "new" and not exists):
            self.session = self._start_recording()
            self.mode = "record"
        elif exists:
            self._check_before_replay()
            judge_age(self.path, self.test.state.max_age, self.shown, record_command(self.test.item, "all"))
            self.test.placeholders()
            with _clean_blackbox_env():
                self.session = bb_api.session(mode="replay", cassette=self.path, match=self._match())  # type: ignore[arg-type]
            self.mode = "replay"
            self.test.replay_started()
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
            env = {name: value for name in KEY_VARIABLES
                   if (value := os.environ.get(name, "")) != PLACEHOLDER_KEYS.get(name)}
            report = bb_api.verify(self.path, env=env)
        except CassetteError as exc:
            self.fate = "broken"
            fail(f"[blackbox] {self.shown}: {inert(str(exc))}\n  re-record it: "
                  f"{record_command(self.test.item, 'all')}")
        if not report.ok:
            failure = report.failure
            assert failure is not None
            where = f" at step {failure.step}" if failure.step is not None else ""
            self.fate = "broken"
            fail(f"[blackbox] {self.shown}: {failure.name} failed{where}: {inert(failure.detail)}; "
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
        client = session.http_client(flavor, **self._hooked(kwargs, asynchronous=False, flavor=flavor))
        self._clients.append(client)
        return client

    def async_http_client(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """`Session.async_http_client()`: for `AsyncAnthropic` / `AsyncOpenAI`."""
        session = self.start()
        return session.async_http_client(flavor, **self._hooked(kwargs, asynchronous=True, flavor=flavor))

    def genai_http_options(self, flavor: str | None = None, **kwargs: Any) -> Any:
        """`Session.genai_http_options()`: google-genai's `HttpOptions` with both clients this cassette's."""
        return genai_http_options(self, flavor, **kwargs)

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
            fail(f"[blackbox] assert_outcome failed for {self.shown}:\n" + "\n".join(lines))
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

    def settle(self, outcome: str) -> None:
        """After the test (`outcome`: passed, failed, skipped, xfailed, xpassed or error): move a recording into
        place if the test passed; otherwise drop it, and say why."""
        passed = outcome == "passed"
        self._close_clients()
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
                self.fate, self.why = ("kept-old" if self.path.exists() else "not-written"), outcome
            for leftover in self._temp.parent.glob(self._temp.name + "*"):
                with contextlib.suppress(OSError):
                    leftover.unlink()

    def _close_clients(self) -> None:
        """The test's sync clients are of no use after it (its session has finished): closed, so their kept-alive
        connections are not left for the garbage collector (a `ResourceWarning` in the test that follows).  An
        async client belongs to its event loop, gone by now: `async with` it in the test."""
        clients, self._clients = self._clients, []
        for client in clients:
            with contextlib.suppress(Exception):
                client.close()


def _offline_transport(flavor: str | None, asynchronous: bool) -> Any:
    """A transport of the client's HTTP module that refuses every request (replay never hands it one)."""
    http = http_module(flavor)

    def refuse(request: Any) -> NoReturn:
        fail(f"[blackbox] replay tried to send {request.method} {request.url} to the network; replay never "
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


@contextlib.contextmanager
def _clean_blackbox_env() -> Iterator[None]:
    """The session reads BLACKBOX_* (set by `blackbox record|replay -- cmd`); under the plugin the plugin
    decides, and no launcher report is written."""
    saved = {name: os.environ.pop(name) for name in SESSION_VARIABLES if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)

