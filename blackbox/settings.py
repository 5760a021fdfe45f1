"""Session settings (SPEC §5.1 arguments, §5.2 environment): explicit arguments beat BLACKBOX_*, and every
invalid value is a `UsageError` naming where it came from (the argument or the variable)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from blackbox.canonical import CanonicalError, decode_json, json_value
from blackbox.errors import UsageError

__all__ = ["UNSET", "Settings", "default_trace_id", "resolve_settings"]

MODES = ("off", "record", "replay", "fork")
_MATCHES = ("strict", "sequence")
_CONTINUES = ("live", "script")
UNSET: Any = object()  # `fork_set` not given (None is a valid JSON value to fork with)


class Settings(msgspec.Struct, omit_defaults=True):
    """What the session actually uses, after explicit arguments beat the environment."""

    mode: str = "off"
    out: str | None = None
    cassette: str | None = None
    trace_id: str | None = None
    fork_at: int | None = None
    fork_set: Any = None
    has_fork_set: bool = False
    continue_with: str | None = None
    script: str | None = None
    match: str = "strict"
    report: str | None = None

    def for_report(self) -> dict[str, Any]:
        return {"mode": self.mode, "out": self.out, "cassette": self.cassette, "traceId": self.trace_id,
                "forkAt": self.fork_at, "forkSet": self.fork_set if self.has_fork_set else None,
                "continue": self.continue_with, "script": self.script, "match": self.match}


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def _choice(value: Any, allowed: tuple[str, ...], arg: str, var: str, from_env: bool) -> str:
    if value in allowed:
        return value
    source = f"{var}={value!r}" if from_env else f"{arg}={value!r}"
    raise UsageError(f"{source} is not valid; use one of {', '.join(allowed)}")


def resolve_settings(
    mode: Any = None, out: Any = None, cassette: Any = None, trace_id: Any = None, fork_at: Any = None,
    fork_set: Any = UNSET, continue_with: Any = None, script: Any = None, match: Any = None,
) -> Settings:
    """Arguments first, then BLACKBOX_* (empty counts as unset); invalid values name their source."""
    s = Settings()
    mode_env = mode is None and _env("BLACKBOX_MODE") is not None
    s.mode = _choice(mode if mode is not None else (_env("BLACKBOX_MODE") or "off"), MODES, "mode",
                     "BLACKBOX_MODE", mode_env)
    match_env = match is None and _env("BLACKBOX_MATCH") is not None
    s.match = _choice(match if match is not None else (_env("BLACKBOX_MATCH") or "strict"), _MATCHES, "match",
                      "BLACKBOX_MATCH", match_env)
    cont = continue_with if continue_with is not None else _env("BLACKBOX_CONTINUE")
    if cont is not None:
        s.continue_with = _choice(cont, _CONTINUES, "continue_with", "BLACKBOX_CONTINUE", continue_with is None)
    s.out = _path(out, "BLACKBOX_OUT")
    s.cassette = _path(cassette, "BLACKBOX_CASSETTE")
    s.script = _path(script, "BLACKBOX_SCRIPT")
    s.report = _env("BLACKBOX_REPORT")
    s.trace_id = str(trace_id) if trace_id is not None else _env("BLACKBOX_TRACE_ID")
    s.fork_at = _fork_at(fork_at)
    if fork_set is not UNSET:
        s.fork_set, s.has_fork_set = json_value(fork_set, where=lambda: "fork_set"), True
    elif _env("BLACKBOX_FORK_SET") is not None:
        try:
            s.fork_set = json_value(decode_json(os.environ["BLACKBOX_FORK_SET"]), where=lambda: "BLACKBOX_FORK_SET")
            s.has_fork_set = True
        except CanonicalError as exc:  # 1e400 parses (as Infinity) but has no JSON form
            raise UsageError(str(exc)) from None
        except (msgspec.DecodeError, ValueError):
            raise UsageError("BLACKBOX_FORK_SET is not valid JSON; quote strings ('\"sunny\"')") from None
    _check_mode_needs(s)
    return s


def _path(value: Any, var: str) -> str | None:
    if value is not None:
        return os.fspath(value)
    return _env(var)


def _fork_at(value: Any) -> int | None:
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"fork_at={value!r} is not valid; use a non-negative integer step index")
        return value
    raw = _env("BLACKBOX_FORK_AT")
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


def default_trace_id(out: str | None) -> str:
    """The `--out` file's name without `.json`, or `run` (SPEC §1)."""
    name = Path(out).name if out else ""
    if name.endswith(".json"):
        name = name[: -len(".json")]
    return name or "run"
