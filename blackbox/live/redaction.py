"""The redaction policy in force and its key (docs/format.md, "Redaction").

The policy: `--policy` / BLACKBOX_POLICY, else `[tool.blackbox.redact]` in the project's pyproject.toml.  The
key: BLACKBOX_REDACT_KEY, else the policy's `key-file`, else none (tokens are then an unkeyed hash).
`redact_payload(step_type, payload)` is the one function every writer of payloads outside a cassette (an
exporter, a printer) calls.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from blackbox.format.secrets import key_values
from blackbox.live.settings import ENV_REDACT_KEY, policy_from_env, redact_key_from_env
from blackbox.redaction import key_id
from blackbox.redaction.apply import Redactor
from blackbox.redaction.keys import KnownKeys
from blackbox.redaction.policy import Policy, PolicyError, Rule, find_pyproject, policy_from_file, policy_from_table

__all__ = ["ACTIVE", "MIN_KEY_LENGTH", "active_redactor", "builtin_redactor", "chosen", "content_policy",
           "known_key_rules", "load_redactor", "policy_file", "redact_payload"]

#: "The policy in force": the default of every function that makes a cassette, so none can skip it.
ACTIVE: Any = object()

#: A key shorter than this is refused: tokens behind it could be guessed by trying values.
MIN_KEY_LENGTH = 16


def _key(policy: Policy, env: Mapping[str, str] | None) -> bytes:
    raw = redact_key_from_env(env)
    if raw is not None:
        if len(raw) < MIN_KEY_LENGTH:
            raise PolicyError(f"{ENV_REDACT_KEY} is too short: use at least {MIN_KEY_LENGTH} characters "
                              "(e.g. 32 random hex digits)")
        return raw.encode("utf-8", "surrogateescape")
    if policy.key_file is None:
        return b""
    try:
        key = policy.key_file.read_bytes().strip()
    except OSError as exc:
        raise PolicyError(f"policy {policy.source}: `key-file` {policy.key_file}: cannot read it "
                          f"({exc.strerror or exc}); create it with 32 random hex digits or set "
                          f"{ENV_REDACT_KEY}") from None
    if len(key) < MIN_KEY_LENGTH:
        raise PolicyError(f"policy {policy.source}: `key-file` {policy.key_file} holds fewer than "
                          f"{MIN_KEY_LENGTH} characters; put 32 random hex digits in it")
    return key


def known_key_rules(redactor: Redactor | None, env: Mapping[str, str] | None = None) -> list[Rule]:
    """Rules that mask the known keys and any long piece of one: `api-key`, the environment's API keys;
    `redaction-key`, the redaction key (BLACKBOX_REDACT_KEY, the one `redactor` uses, its policy's key-file even
    when the variable overrides it).  What `blackbox scan` reports first; none when no key is known."""
    own = [redact_key_from_env(env) or ""]
    if redactor is not None:
        own.append(redactor.key.decode("utf-8", "replace"))
        if redactor.policy.key_file is not None:
            with contextlib.suppress(OSError):
                own.append(redactor.policy.key_file.read_bytes().strip().decode("utf-8", "replace"))
    found = [("api-key", KnownKeys("api-key", key_values(env))), ("redaction-key", KnownKeys("redaction-key", own))]
    return [Rule(name, "mask", detector=finder) for name, finder in found if finder.keys]


def builtin_redactor(env: Mapping[str, str] | None = None) -> Redactor:
    """The built-in detectors with every known key (`known_key_rules`), keyed like any policy: what `blackbox
    redact` applies when no policy is in force, and what `blackbox scan` reports."""
    policy = policy_from_table({}, "the built-in detectors")
    key = _key(policy, env)
    rules = (*known_key_rules(None, env), *policy.rules)
    return Redactor(Policy(rules, policy.source, None, policy.digest), key, key_id(key))


def load_redactor(path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Redactor:
    """The redactor of the policy file at `path`, with its key."""
    policy = policy_from_file(Path(path))
    key = _key(policy, env)
    return Redactor(policy, key, key_id(key))


def policy_file(policy: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
                cwd: str | os.PathLike[str] | None = None) -> Path | None:
    """The policy file in force (what `active_redactor` reads), absolute; None when there is none."""
    named = os.fspath(policy) if policy is not None else policy_from_env(env)
    found = Path(named) if named is not None else find_pyproject(Path(cwd) if cwd is not None else Path.cwd())
    return found.absolute() if found is not None else None


def active_redactor(policy: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
                    cwd: str | os.PathLike[str] | None = None) -> Redactor | None:
    """The redactor in force: the `policy` file, else BLACKBOX_POLICY's, else the pyproject.toml at or above
    `cwd` that has `[tool.blackbox.redact]`; None when there is no policy.  `PolicyError` when it is wrong."""
    found = policy_file(policy, env=env, cwd=cwd)
    return load_redactor(found, env) if found is not None else None


def chosen(redactor: Any) -> Redactor | None:
    """`redactor`, or the one in force when it is `ACTIVE`."""
    return active_redactor() if redactor is ACTIVE else redactor


def content_policy(redactor: Redactor | None) -> Callable[[Any], Any]:
    """A redaction of content cut out of its step (an exporter's message, arguments or result): the value read
    as a tool result's user data, so the detectors, patterns and header rules apply (rules placed by a step's
    path or a tool's name need the step: they apply when the cassette itself is redacted)."""
    if redactor is None:
        return lambda value: value

    def redact(value: Any) -> Any:
        return redactor("tool_result", {"toolCallId": "", "toolName": "", "result": value})["result"]

    return redact


def redact_payload(step_type: str, payload: Any, redactor: Redactor | None = None) -> Any:
    """A step's payload as the policy lets it out (the active policy when `redactor` is None; the payload
    itself when there is none).  Exporters and printers call this before content leaves Blackbox."""
    use = redactor if redactor is not None else active_redactor()
    return payload if use is None else use(step_type, payload)
