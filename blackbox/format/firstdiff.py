"""The first difference between two JSON values (docs/format.md, "Divergence report"), shared by replay and diff.

JSON equality: object key order is irrelevant, array order is significant, `1 == 1.0`, and a boolean is
never a number (Python's `True == 1` must not leak).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from blackbox.format.secrets import mask_secrets

__all__ = ["ABSENT_TEXT", "Difference", "first_difference", "format_value", "join_path", "json_equal", "utf16_sorted"]

ABSENT_TEXT = "(absent)"
VALUE_LIMIT = 200


class Difference(msgspec.Struct, frozen=True):
    """Two values that differ at `path` (`a.b[0].c`): `old` is the recorded side (a replay) or run A's (a diff),
    `new` the actual side or run B's; a side that has nothing at `path` is not present (its value is None).
    The one type of a difference: replay's first difference and each of diff's changed fields."""

    path: str
    old: Any
    new: Any
    old_present: bool = True
    new_present: bool = True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two JSON values (see the module docstring)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if _is_number(a):
        return _is_number(b) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(json_equal, a, b))
    return not isinstance(b, dict | list) and not _is_number(b) and bool(a == b)


def utf16_sorted(keys: Any) -> list[str]:
    """Keys in JavaScript's default sort order (UTF-16 code units)."""
    return sorted(keys, key=lambda k: k.encode("utf-16-be", "surrogatepass"))


def join_path(base: str, key: str | int) -> str:
    """`messages[2]`, `content[0].text`: array indexes in brackets, object keys after a dot."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    return key if not base else f"{base}.{key}"


def _float(value: Any) -> float:
    if isinstance(value, float):  # `JSFloat`: its value, as a float (JSON text is the same for equal floats)
        return float(value)
    raise TypeError


_PLAIN = msgspec.json.Encoder(enc_hook=_float)


def _surely_equal(a: Any, b: Any) -> bool:
    """A fast, exact test for the common case of replay, equal values: Python's equality (run in C; exact on
    large integers, `1 == 1.0`) wrongly equates only booleans and numbers, which JSON text tells apart.  The
    plain encoding (keys in their order, `1.0` apart from `1`) settles most cases; where it differs for values
    that may still be JSON-equal (keys in another order, `1` and `1.0`), canonical JSON settles it, and so it
    does for a value holding null (the plain encoding writes NaN and infinities as null too)."""
    from blackbox.format.canonical import CanonicalError, canonical_bytes

    try:
        if a != b:
            return False
        try:
            plain = _PLAIN.encode(a)
            if b"null" not in plain and plain == _PLAIN.encode(b):  # a NaN or infinity is written null too
                return True
        except (TypeError, ValueError, OverflowError):
            pass
        return canonical_bytes(a) == canonical_bytes(b)
    except (CanonicalError, RecursionError):
        return False


def first_difference(recorded: Any, actual: Any, path: str = "") -> Difference | None:
    """The first path at which the values differ, or None when they are JSON-equal."""
    if _surely_equal(recorded, actual):
        return None
    return _first_difference(recorded, actual, path)


def _first_difference(recorded: Any, actual: Any, path: str) -> Difference | None:
    if isinstance(recorded, dict) and isinstance(actual, dict):
        for key in utf16_sorted(recorded.keys() | actual.keys()):
            sub = join_path(path, key)
            if key not in recorded or key not in actual:
                return Difference(sub, recorded.get(key), actual.get(key), key in recorded, key in actual)
            found = _first_difference(recorded[key], actual[key], sub)
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(actual, list):
        for i in range(max(len(recorded), len(actual))):
            sub = join_path(path, i)
            if i >= len(recorded) or i >= len(actual):
                return Difference(sub, recorded[i] if i < len(recorded) else None,
                                  actual[i] if i < len(actual) else None, i < len(recorded), i < len(actual))
            found = _first_difference(recorded[i], actual[i], sub)
            if found is not None:
                return found
        return None
    if json_equal(recorded, actual):
        return None
    return Difference(path or "(root)", recorded, actual)


def _compact(value: Any) -> str:
    from blackbox.format.canonical import js_number, nesting_headroom

    def hook(obj: Any) -> Any:
        if isinstance(obj, float):
            return msgspec.Raw(js_number(obj).encode())
        return repr(obj)

    try:
        with nesting_headroom():  # a value as deep as the readers accept
            return msgspec.json.encode(value, enc_hook=hook).decode("utf-8", "replace")
    except (TypeError, ValueError, OverflowError):
        return repr(value)


def format_value(value: Any, present: bool = True, env: Mapping[str, str] | None = None) -> str:
    """Compact JSON, secrets masked, cut at 200 characters; `(absent)` when the side has nothing."""
    if not present:
        return ABSENT_TEXT
    text = mask_secrets(_compact(value), env)
    return text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…"
