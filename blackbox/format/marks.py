"""The marks a redaction leaves in a cassette, and counting them (docs/format.md, "Redaction").

A masked value becomes `[redacted:<rule>:<token>]` (the token: 16 hex digits of a keyed hash of the value, so
the same value gives the same mark); a dropped one `[redacted:<rule>]`.  The marks are plain strings inside the
payloads, hashed with them, so a redacted cassette verifies like any other and a reader (verify, inspect, the
UI) counts what each rule redacted without being told.  Pure: readers import it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

__all__ = [
    "MARK",
    "MARK_BYTES",
    "RULE_NAME",
    "count_in_bytes",
    "count_marks",
    "dropped",
    "is_mark",
    "masked",
    "rewritten_from",
]

#: A rule's name: lower case, digits and hyphens (never `_`, so a mark never looks like a provider id).
RULE_NAME = re.compile(r"[a-z][a-z0-9-]{0,39}")
MARK = re.compile(r"\[redacted:([a-z][a-z0-9-]{0,39})(?::([0-9a-f]{16}))?\]")
MARK_BYTES = re.compile(rb"\[redacted:([a-z][a-z0-9-]{0,39})(?::[0-9a-f]{16})?\]")


def masked(rule: str, token: str) -> str:
    return f"[redacted:{rule}:{token}]"


def dropped(rule: str) -> str:
    return f"[redacted:{rule}]"


def is_mark(value: object) -> bool:
    """Is `value` exactly one mark (a value a policy already redacted as a whole)?"""
    return isinstance(value, str) and MARK.fullmatch(value) is not None


def count_in_bytes(data: bytes, counts: Counter[str]) -> None:
    """Add the marks in a payload's JSON text to `counts` (by rule)."""
    if b"[redacted:" in data:
        counts.update(m.group(1).decode() for m in MARK_BYTES.finditer(data))


def _strings(value: Any) -> Iterable[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def count_marks(payloads: Iterable[Any]) -> dict[str, int]:
    """How many values each rule redacted in these payloads, by rule name (sorted)."""
    counts: Counter[str] = Counter()
    for payload in payloads:
        for text in _strings(payload):
            if "[redacted:" in text:
                counts.update(m.group(1) for m in MARK.finditer(text))
    return dict(sorted(counts.items()))


def rewritten_from(redaction: Any) -> dict[str, Any] | None:
    """The link `blackbox redact` leaves to the cassette it rewrote (`redaction.rewrittenFrom`), when well formed."""
    if not isinstance(redaction, dict):
        return None
    link = redaction.get("rewrittenFrom")
    if not isinstance(link, dict):
        return None
    fields = {k: link.get(k) for k in ("id", "finalHash", "steps")}
    ok = (isinstance(fields["id"], str) and (fields["finalHash"] is None or isinstance(fields["finalHash"], str))
          and isinstance(fields["steps"], int) and not isinstance(fields["steps"], bool))
    return fields if ok else None
