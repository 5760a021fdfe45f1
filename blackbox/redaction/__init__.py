"""Redaction: a policy applied to every payload before it is hashed, wherever a cassette is made.

This wing is pure (the detectors, the policy file, the `Redactor`, a cassette re-chained under a policy); the
policy and key in force, read from the environment and the project, are `blackbox.live.redaction`'s.
docs/format.md, "Redaction", has the rules.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from blackbox.format.cassette import Cassette, rechain
from blackbox.redaction.apply import Redactor
from blackbox.redaction.policy import Policy, PolicyError

__all__ = ["Policy", "PolicyError", "Redactor", "key_id", "redact_cassette"]


def key_id(key: bytes) -> str:
    """8 hex digits that name a key without revealing it (`unkeyed` for none): written into the cassette, so
    a replay with another key can say so."""
    return hmac.new(key, b"blackbox redaction key id", hashlib.sha256).hexdigest()[:8] if key else "unkeyed"


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
                    cassette.forkedFromStepId, redaction, cassette.made)  # what made the run stays its own
