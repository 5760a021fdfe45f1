"""Redaction: a policy applied to every payload before it is hashed, wherever a cassette is made.

`active_redactor()` finds the policy (`--policy` / BLACKBOX_POLICY, else `[tool.blackbox.redact]` in the
project's pyproject.toml) and its key (BLACKBOX_REDACT_KEY, else the policy's `key-file`, else none: tokens
are then an unkeyed hash).  `redact_payload(step_type, payload)` is the one function every writer of payloads
outside a cassette (an exporter, a printer) calls.  docs/format.md, "Redaction", has the rules.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from blackbox.cassette import Cassette, rechain
from blackbox.redaction.apply import Redactor
from blackbox.redaction.policy import Policy, PolicyError, find_pyproject, policy_from_file
from blackbox.settings import ENV_REDACT_KEY, policy_from_env, redact_key_from_env

__all__ = ["ACTIVE", "MIN_KEY_LENGTH", "Policy", "PolicyError", "Redactor", "active_redactor", "chosen", "key_id",
           "load_redactor", "policy_file", "redact_cassette", "redact_payload"]

#: "The policy in force": the default of every function that makes a cassette, so none can skip it.
ACTIVE: Any = object()

#: A key shorter than this is refused: tokens behind it could be guessed by trying values.
MIN_KEY_LENGTH = 16


def key_id(key: bytes) -> str:
    """8 hex digits that name a key without revealing it (`unkeyed` for none): written into the cassette, so
    a replay with another key can say so."""
    return hmac.new(key, b"blackbox redaction key id", hashlib.sha256).hexdigest()[:8] if key else "unkeyed"


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
    named = os.fspath(policy) if policy is not None else policy_from_env(env)
    if named is not None:
        return load_redactor(named, env)
    found = find_pyproject(Path(cwd) if cwd is not None else Path.cwd())
    return load_redactor(found, env) if found is not None else None


def chosen(redactor: Any) -> Redactor | None:
    """`redactor`, or the one in force when it is `ACTIVE`."""
    return active_redactor() if redactor is ACTIVE else redactor


def redact_payload(step_type: str, payload: Any, redactor: Redactor | None = None) -> Any:
    """A step's payload as the policy lets it out (the active policy when `redactor` is None; the payload
    itself when there is none).  Exporters and printers call this before content leaves Blackbox."""
    chosen = redactor if redactor is not None else active_redactor()
    return payload if chosen is None else chosen(step_type, payload)


def redact_cassette(cassette: Cassette, redactor: Redactor, *, link: bool = False) -> Cassette:
    """The cassette with the policy applied to every step, re-chained from the first changed step; `link`
    records what it was rewritten from (`blackbox redact`), so verify shows it."""
    steps = rechain(cassette.steps, redactor)
    redaction: dict[str, Any] = dict(redactor.info)
    if link:
        previous = cassette.redaction if isinstance(cassette.redaction, dict) else {}
        redaction["rewrittenFrom"] = {"id": cassette.id,
                                      "finalHash": cassette.steps[-1].hash if cassette.steps else None,
                                      "steps": len(cassette.steps)}
        if isinstance(previous.get("rewrittenFrom"), dict):
            redaction["rewrittenFrom"]["rewrittenFrom"] = previous["rewrittenFrom"]
    return Cassette(cassette.version, cassette.id, cassette.createdAt, steps, cassette.parentId,
                    cassette.forkedFromStepId, redaction)
