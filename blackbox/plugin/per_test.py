"""One pytest test as the plugin sees it (`TestRun`: its marker and `blackbox_config`, its cassettes, its network
guard, the failure it ends with) and one pytest run (`State`: the record and match modes, the allowed hosts).
The hooks and fixtures that drive them are `blackbox.plugin.plugin`."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import pytest

from blackbox.errors import BlackboxError, ReplayDivergenceError, is_blackbox_error
from blackbox.format.inert import inert_lines
from blackbox.format.secrets import replay_placeholders
from blackbox.plugin.age import max_age_of
from blackbox.plugin.cassettes import (
    MATCHES,
    CassetteRun,
    cassette_name,
    default_cassette_dir,
    fail,
    record_command,
    safe_name,
    shown_path,
)
from blackbox.plugin.network import NetGuard, parse_hosts

__all__ = ["State", "TestRun"]


class State:
    """Per pytest run: the record mode, match mode, allowed hosts and age limit; the summary's tallies."""

    def __init__(self, config: pytest.Config, record: str, record_source: str) -> None:
        self.config = config
        self.record = record
        self.record_source = record_source
        option = config.getoption("blackbox_match")
        self.match: str | None = option if isinstance(option, str) else None
        try:
            self.allow = parse_hosts(config.getini("blackbox_allow_hosts"))
        except ValueError as exc:
            raise pytest.UsageError(f"blackbox_allow_hosts: {exc}") from None
        self.max_age = max_age_of(config)  # stale cassettes: warn or fail (`plugin.age`)


class TestRun:
    """Everything the plugin keeps for one test: its cassettes and its network guard."""

    __test__ = False  # a pytest plugin's class, not a test class

    def __init__(self, item: pytest.Item, state: State, cassette_dir: str | os.PathLike[str] | None = None,
                 config: Mapping[str, Any] | None = None) -> None:
        self.item = item
        self.state = state
        defaults = _config(config)  # the blackbox_config fixture's; the marker's options override them
        marker = item.get_closest_marker("blackbox")
        args = marker.args if marker is not None else ()
        kwargs = dict(marker.kwargs) if marker is not None else {}
        path = kwargs.pop("path", args[0] if args else None)
        self.match = kwargs.pop("match", defaults.get("match"))
        if self.match is not None and self.match not in MATCHES:
            fail(f"[blackbox] @pytest.mark.blackbox(match={self.match!r}): use strict or sequence")
        allow = kwargs.pop("allow_hosts", ())
        if kwargs or len(args) > 1:
            fail("[blackbox] @pytest.mark.blackbox takes one cassette path and match=, allow_hosts=; use "
                  "blackbox.session(name) in the test for more cassettes")
        folder = self._resolve(cassette_dir) if cassette_dir is not None else default_cassette_dir(item)
        self.default_path = self._resolve(path) if path is not None else folder / cassette_name(item)
        self.cassettes: dict[Path, CassetteRun] = {}
        self._default: CassetteRun | None = None
        hosts = (_hosts(allow, "@pytest.mark.blackbox(allow_hosts=...)")
                 | _hosts(defaults.get("allow_hosts", ()), "the blackbox_config fixture's allow_hosts"))
        self.guard = NetGuard(state.allow | hosts, fail, self.explain, started_by=self.started_by)
        # Up from the start of the test's setup, unless its default cassette is about to be recorded.
        self.guard.enabled = not (state.record == "all" or (state.record == "new" and not self.default_path.exists()))
        self._env_saved: dict[str, str | None] = {}

    def allow_more(self, hosts: Any) -> None:
        """The hosts the `blackbox_allow_hosts` fixture returns (a conftest's, for a server with its port)."""
        if hosts:
            self.guard.allow = self.guard.allow | _hosts(hosts, "the blackbox_allow_hosts fixture")

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
                path = self.default_path.with_name(f"{self.default_path.stem}.{safe_name(text)}.json")
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
        """Replay needs no key, but SDK clients refuse to be built without one (and Azure's without a version and
        an endpoint): set the placeholders `secrets.replay_placeholders` names for what is unset."""
        for name, value in replay_placeholders(os.environ).items():
            if name not in self._env_saved:
                self._env_saved[name] = os.environ.get(name)
                os.environ[name] = value

    def restore_env(self) -> None:
        for name, value in self._env_saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._env_saved.clear()

    def recording_started(self) -> None:
        """A recording goes to the real API: from here on the test may use the network."""
        self.guard.enabled = False

    def replay_started(self) -> None:
        """A cassette replays: no network, unless another cassette of this test records."""
        if not any(run.mode == "record" for run in self.cassettes.values()):
            self.guard.enabled = True

    def _replaying(self) -> str:
        shown = [run.shown for run in self.cassettes.values() if run.mode == "replay"]
        if not shown:
            shown = [self.default_shown]
        return ", ".join(shown)

    @functools.cached_property
    def default_shown(self) -> str:
        return shown_path(self.item, self.default_path)

    def started_by(self) -> str:
        return f"{self.item.nodeid} replays {self._replaying()}"

    def explain(self) -> str:
        """Why a refused request may not go out (the lines after the refusal's first)."""
        why = f"this test replays {self._replaying()}"
        if self.state.record == "new":
            why += (" (it exists, so --blackbox-record replays it; --blackbox-record=all re-records every "
                    "cassette)")
        return (f"{why}, so every model call must go through the session's client "
                "(http_client=blackbox.http_client(), or async_http_client() for an async SDK client) and nothing "
                "else may use the network, in the test or its fixtures.\n"
                "  If the test runs its own server, allow it: @pytest.mark.blackbox(allow_hosts=[\"127.0.0.1\"]), "
                "the ini setting blackbox_allow_hosts, or a blackbox_allow_hosts fixture.")

    # -- failures ----------------------------------------------------------------------------------

    def fail_missing(self, run: CassetteRun) -> NoReturn:
        fail(f"[blackbox] no cassette at {run.shown}; this test replays it and never calls a live API.\n"
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
        fail(self.report(exc, run))

    def ended(self, test_error: BaseException | None) -> None:
        """After the test function: finish every session, then fail the test for what Blackbox saw."""
        errors = [(run, run.end(test_error)) for run in self.cassettes.values()]
        if self.guard.violations:
            if isinstance(test_error, pytest.fail.Exception):
                return  # the guard's own failure already says it
            fail(f"[blackbox] the test made requests around Blackbox (caught and swallowed): "
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
            fail(self.report(own, None) if own is not None else "[blackbox] " + _blackbox_message(test_error))


_CONFIG_KEYS = ("match", "allow_hosts")


def _config(config: Any) -> Mapping[str, Any]:
    """The `blackbox_config` fixture's value, checked: a mapping of the marker's options."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        fail(f"[blackbox] the blackbox_config fixture returned a {type(config).__name__}; return a dict such as "
             "{\"match\": \"sequence\"}")
    unknown = sorted(str(key) for key in config if key not in _CONFIG_KEYS)
    if unknown:
        fail(f"[blackbox] the blackbox_config fixture has unknown keys {', '.join(unknown)}; use "
             f"{', '.join(_CONFIG_KEYS)}")
    match = config.get("match")
    if match is not None and match not in MATCHES:
        fail(f"[blackbox] the blackbox_config fixture's match={match!r}: use strict or sequence")
    return config


def _hosts(values: Any, where: str) -> frozenset[tuple[str, int | None]]:
    try:
        return parse_hosts([values] if isinstance(values, str) else values)
    except (TypeError, ValueError) as exc:
        fail(f"[blackbox] {where}: {exc}")


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
