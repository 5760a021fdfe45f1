"""Session settings: explicit arguments beat the BLACKBOX_* environment, and every invalid value is a
`UsageError` naming where it came from (the argument or the variable).

This is the one place that names the BLACKBOX_* variables: the launcher sets them with `Settings.to_env()`,
the agent's session reads them with `Settings.from_env()` / `resolve_settings`."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, cast, get_args

import msgspec

from blackbox.errors import UsageError
from blackbox.format.canonical import CanonicalError, canonical_text, decode_json, json_value

__all__ = [
    "ENV_ALLOW_HOSTS",
    "ENV_NO_NETWORK",
    "ENV_PREFIX",
    "MODES",
    "SESSION_VARIABLES",
    "UNSET",
    "Continue",
    "Match",
    "Mode",
    "Pace",
    "Settings",
    "choose",
    "default_trace_id",
    "match_mode",
    "pace_mode",
    "policy_from_env",
    "redact_key_from_env",
    "resolve_settings",
    "session_names",
]

Mode = Literal["off", "record", "replay", "fork"]
Match = Literal["strict", "sequence"]
Continue = Literal["live", "script"]
Pace = Literal["fast", "recorded"]  # how fast a replayed stream is sent: at once, or over the recorded duration
MODES: tuple[str, ...] = get_args(Mode)
_MATCHES: tuple[str, ...] = get_args(Match)
_CONTINUES: tuple[str, ...] = get_args(Continue)
_PACES: tuple[str, ...] = get_args(Pace)
UNSET: Any = object()  # `fork_set` not given (None is a valid JSON value to fork with)

ENV_PREFIX = "BLACKBOX_"
ENV_MODE = "BLACKBOX_MODE"
ENV_OUT = "BLACKBOX_OUT"
ENV_CASSETTE = "BLACKBOX_CASSETTE"
ENV_TRACE_ID = "BLACKBOX_TRACE_ID"
ENV_FORK_AT = "BLACKBOX_FORK_AT"
ENV_FORK_SET = "BLACKBOX_FORK_SET"
ENV_CONTINUE = "BLACKBOX_CONTINUE"
ENV_SCRIPT = "BLACKBOX_SCRIPT"
ENV_MATCH = "BLACKBOX_MATCH"
ENV_PACE = "BLACKBOX_PACE"
ENV_REPORT = "BLACKBOX_REPORT"  # where the session writes its report for the launcher
# The redaction policy file and the key of its tokens (`blackbox.live.redaction`; docs/format.md, "Redaction").
ENV_POLICY = "BLACKBOX_POLICY"
ENV_REDACT_KEY = "BLACKBOX_REDACT_KEY"
# Set by the pytest plugin's network guard for the child processes of a replayed test (`blackbox.plugin.network`).
ENV_NO_NETWORK = "BLACKBOX_NO_NETWORK"  # what started the process ("tests/x.py::test_y replays ...")
ENV_ALLOW_HOSTS = "BLACKBOX_ALLOW_HOSTS"  # the hosts that test allows, as `parse_hosts` reads them
# Every variable a session reads (what `blackbox record|replay|fork -- cmd` sets for the agent).
SESSION_VARIABLES = (ENV_MODE, ENV_OUT, ENV_CASSETTE, ENV_TRACE_ID, ENV_FORK_AT, ENV_FORK_SET, ENV_CONTINUE,
                     ENV_SCRIPT, ENV_MATCH, ENV_PACE, ENV_REPORT)


class Settings(msgspec.Struct, omit_defaults=True):
    """What the session actually uses, after explicit arguments beat the environment."""

    mode: Mode = "off"
    out: str | None = None
    cassette: str | None = None
    trace_id: str | None = None
    fork_at: int | None = None
    fork_set: Any = None
    has_fork_set: bool = False
    continue_with: Continue | None = None
    script: str | None = None
    match: Match = "strict"
    pace: Pace = "fast"
    report: str | None = None
    policy: str | None = None  # the redaction policy file; None: the project's pyproject.toml, if it has one

    def to_env(self) -> dict[str, str]:
        """The BLACKBOX_* variables that make an agent's `blackbox.session()` use these settings (unset
        fields are left out; the match mode only where a cassette is replayed)."""
        env: dict[str, str] = {ENV_MODE: self.mode}
        for name, value in ((ENV_CASSETTE, self.cassette), (ENV_OUT, self.out), (ENV_TRACE_ID, self.trace_id),
                            (ENV_FORK_AT, self.fork_at), (ENV_CONTINUE, self.continue_with),
                            (ENV_SCRIPT, self.script), (ENV_REPORT, self.report), (ENV_POLICY, self.policy)):
            if value is not None:
                env[name] = str(value)
        if self.has_fork_set:
            env[ENV_FORK_SET] = canonical_text(self.fork_set)
        if self.mode in ("replay", "fork"):
            env[ENV_MATCH] = self.match
            if self.pace != "fast":
                env[ENV_PACE] = self.pace
        return env

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings BLACKBOX_* asks for (the process's environment by default), validated."""
        return resolve_settings(env=env)


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value if value else None


def choose(value: Any, allowed: tuple[str, ...], source: str) -> str:
    """The one check of a choice, wherever it comes from (`--pace`, `pace=`, BLACKBOX_PACE): `value` in any
    case if it is one of `allowed`, else a UsageError naming `source` and the choices."""
    if isinstance(value, str) and value.lower() in allowed:
        return value.lower()
    raise UsageError(f"{source}={value!r} is not valid; use one of {', '.join(allowed)}")


def match_mode(value: Any, source: str = "match") -> Match:
    """`strict` or `sequence` (see `choose`)."""
    return cast(Match, choose(value, _MATCHES, source))


def pace_mode(value: Any, source: str = "pace") -> Pace:
    """`fast` or `recorded` (see `choose`)."""
    return cast(Pace, choose(value, _PACES, source))


def _choice(given: Any, env: Mapping[str, str], var: str, default: str | None, allowed: tuple[str, ...],
            arg: str) -> Any:
    """The argument, else the variable, else `default`; a value not `allowed` names where it came from."""
    value = given if given is not None else (_env(env, var) or default)
    return None if value is None else choose(value, allowed, arg if given is not None else var)


def resolve_settings(
    mode: Any = None, out: Any = None, cassette: Any = None, trace_id: Any = None, fork_at: Any = None,
    fork_set: Any = UNSET, continue_with: Any = None, script: Any = None, match: Any = None,
    pace: Any = None, *, policy: Any = None, env: Mapping[str, str] | None = None,
) -> Settings:
    """Arguments first, then BLACKBOX_* of `env` (default the process's; empty counts as unset); invalid
    values name their source."""
    env = os.environ if env is None else env
    s = Settings()
    s.mode = _choice(mode, env, ENV_MODE, "off", MODES, "mode")
    s.match = _choice(match, env, ENV_MATCH, "strict", _MATCHES, "match")
    s.pace = _choice(pace, env, ENV_PACE, "fast", _PACES, "pace")
    s.continue_with = _choice(continue_with, env, ENV_CONTINUE, None, _CONTINUES, "continue_with")
    s.out = _out_path(env, out)
    s.cassette = _path(env, cassette, ENV_CASSETTE)
    s.script = _path(env, script, ENV_SCRIPT)
    s.report = _env(env, ENV_REPORT)
    s.policy = _path(env, policy, ENV_POLICY)
    s.trace_id = str(trace_id) if trace_id is not None else _env(env, ENV_TRACE_ID)
    s.fork_at = _fork_at(env, fork_at)
    if fork_set is not UNSET:
        s.fork_set, s.has_fork_set = json_value(fork_set, where=lambda: "fork_set"), True
    elif (raw_set := _env(env, ENV_FORK_SET)) is not None:
        try:
            s.fork_set = json_value(decode_json(raw_set), where=lambda: ENV_FORK_SET)
            s.has_fork_set = True
        except CanonicalError as exc:  # 1e400 parses (as Infinity) but has no JSON form
            raise UsageError(str(exc)) from None
        except (msgspec.DecodeError, ValueError):
            raise UsageError("BLACKBOX_FORK_SET is not valid JSON; quote strings ('\"sunny\"')") from None
    _check_mode_needs(s)
    return s


def policy_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The redaction policy file BLACKBOX_POLICY names (None when unset or empty)."""
    return _env(os.environ if env is None else env, ENV_POLICY)


def redact_key_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The key of the redaction tokens, BLACKBOX_REDACT_KEY (None when unset or empty)."""
    return _env(os.environ if env is None else env, ENV_REDACT_KEY)


def _path(env: Mapping[str, str], value: Any, var: str) -> str | None:
    if value is not None:
        return str(os.fspath(value))
    return _env(env, var)


def _out_path(env: Mapping[str, str], value: Any) -> str | None:
    """The output file; one that can never be a file (a folder, a name that is not UTF-8) is refused here,
    naming where it came from."""
    path = _path(env, value, ENV_OUT)
    if path is None:
        return None
    source = f"{ENV_OUT}={path!r}" if value is None else f"out={path!r}"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{source} is not valid: the name is not UTF-8; choose a file name in UTF-8") from None
    if not Path(path).name or path.endswith(os.sep):
        raise UsageError(f"{source} is not valid: it names a folder; give a file path such as run.json")
    return path


def _fork_at(env: Mapping[str, str], value: Any) -> int | None:
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"fork_at={value!r} is not valid; use a non-negative integer step index")
        return value
    raw = _env(env, ENV_FORK_AT)
    if raw is None:
        return None
    if not raw.strip().isdecimal():  # isdigit() would pass "²", which int() refuses
        raise UsageError(f"BLACKBOX_FORK_AT={raw!r} is not valid; use a non-negative integer step index")
    return int(raw)


def _check_mode_needs(s: Settings) -> None:
    if s.mode == "record" and not s.out:
        raise UsageError("record mode needs an output file: pass out=... or set BLACKBOX_OUT")
    if s.mode in ("replay", "fork") and not s.cassette:
        raise UsageError(f"{s.mode} mode needs a cassette: pass cassette=... or set BLACKBOX_CASSETTE")
    if s.mode == "fork":
        missing = [name for name, ok in (("out", s.out), ("fork_at", s.fork_at is not None),
                                         ("fork_set", s.has_fork_set), ("continue_with", s.continue_with))
                   if not ok]
        if missing:
            raise UsageError(f"fork mode needs {', '.join(missing)} (or BLACKBOX_OUT, BLACKBOX_FORK_AT, "
                             "BLACKBOX_FORK_SET, BLACKBOX_CONTINUE)")
        if s.continue_with == "script" and not s.script:
            raise UsageError("continue_with='script' needs script=... (or BLACKBOX_SCRIPT)")


_FLAGS = {"--at": f"fork_at ({ENV_FORK_AT})", "--set": f"fork_set ({ENV_FORK_SET})", "--out": f"out ({ENV_OUT})",
          "--script": f"script ({ENV_SCRIPT})", "--match": f"match ({ENV_MATCH})"}
_FLAG = re.compile("|".join(rf"{re.escape(flag)}(?![\w-])" for flag in _FLAGS))


def session_names(text: str) -> str:
    """A message the CLI's checks word with its flags (`--at 9 is outside…`), reworded for a session, whose
    settings come from arguments or BLACKBOX_* variables (`fork_at (BLACKBOX_FORK_AT) 9 is outside…`)."""
    return _FLAG.sub(lambda m: _FLAGS[m.group(0)], text)


def default_trace_id(out: str | None) -> str:
    """The `--out` file's name without `.json`, or `run`."""
    name = Path(out).name if out else ""
    if name.endswith(".json"):
        name = name[: -len(".json")]
    return name or "run"
