"""Canonical JSON exactly as the TypeScript Blackbox prints it, and the step hash (docs/format.md, "Canonical
JSON and the hash").

The canonical text is JavaScript's `JSON.stringify` with sorted keys and no whitespace.  The fast path lets
msgspec do the work: JSON numbers that are not integers are decoded as `JSFloat` and printed through an
`enc_hook` with ECMAScript's rules, and strings escape the same way in both.  What msgspec cannot get right —
integers beyond 2^53, keys whose UTF-16 order differs from code-point order, lone surrogates — is detected on
the output bytes and sent to a small pure-Python writer, so the bytes are identical on every value.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

import msgspec

from blackbox.format.nesting import (
    FRAME_LEVELS,
    MAX_NESTING,
    NESTING_HEADROOM,
    TOO_DEEP,
    TOO_DEEP_PAYLOAD,
    in_room,
    nesting_headroom,
    reading_room,
    with_headroom,
)

__all__ = [
    "FRAME_LEVELS",
    "MAX_NESTING",
    "NESTING_HEADROOM",
    "TOO_DEEP",
    "TOO_DEEP_PAYLOAD",
    "CanonicalError",
    "JSFloat",
    "canonical_bytes",
    "canonical_text",
    "decode_json",
    "hashed_bytes",
    "js_number",
    "js_stringify",
    "json_value",
    "nesting_headroom",
    "reading_room",
    "sha256_hex",
    "step_hash",
    "with_headroom",
]

_MAX_SAFE = 2**53


class CanonicalError(ValueError):
    """The value has no canonical form (NaN, ±Infinity, or not JSON at all)."""


class JSFloat(float):
    """A float that came from JSON; it prints the way JavaScript prints the same double."""

    __slots__ = ()


def js_number(x: float) -> str:
    """ECMAScript `Number.prototype.toString` for a double."""
    text = float.__repr__(x)
    if "e" not in text and "n" not in text:  # plain positional digits: Python and JavaScript agree
        if text.endswith(".0"):
            text = text[:-2]
        return "0" if text == "-0" else text
    return _js_number_slow(x)


def _js_number_slow(x: float) -> str:
    """The general case of `js_number`: exponent forms, large integral doubles, non-finite values."""
    if not math.isfinite(x):
        raise CanonicalError("NaN and Infinity have no JSON form")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp_text = repr(abs(float(x))).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    point = len(int_part) + (int(exp_text) if exp_text else 0) - (len(int_part + frac_part) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exponent = point - 1
    exp_sign = "+" if exponent >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{exp_sign}{abs(exponent)}"


def _js_int(n: int) -> str:
    if -_MAX_SAFE <= n <= _MAX_SAFE:
        return str(n)
    try:
        return js_number(float(n))
    except OverflowError:
        raise CanonicalError("an integer too large for a double has no JSON form") from None


class _FloatText(dict[Any, msgspec.Raw]):
    """The encoder's hook: a float's JavaScript text, cached by value.

    msgspec calls the hook for every `JSFloat`; a dict lookup runs in C, so only a float not seen before
    costs a Python call.  Anything else that is not JSON ends up in `__missing__` and is refused.
    """

    def __missing__(self, obj: Any) -> msgspec.Raw:
        if not isinstance(obj, float):
            raise CanonicalError(f"a {type(obj).__name__} is not a JSON value")
        text = float.__repr__(obj)
        if "e" in text or "n" in text or text.endswith(".0"):  # `js_number`'s other cases, NaN refused there
            text = js_number(obj)
        raw = msgspec.Raw(text.encode())
        if obj == obj:  # NaN is never equal to itself: caching it would only grow the dict
            if len(self) >= 200_000:
                self.clear()
            self[obj] = raw
        return raw


_FLOAT_TEXT = _FloatText()


def _reject_constant(name: str) -> Any:
    raise CanonicalError(f"{name} is not valid JSON")


_ENCODER = msgspec.json.Encoder(enc_hook=_FLOAT_TEXT.__getitem__, order="sorted")
_DECODER = msgspec.json.Decoder(float_hook=JSFloat)


def decode_json(data: bytes | str, *, levels: int = MAX_NESTING) -> Any:
    """Decode JSON text the way `JSON.parse` would: last duplicate key wins, NaN literals refused.

    Non-integral numbers come back as `JSFloat`.  Lone surrogates, which msgspec refuses, go through the
    standard library instead.  Nested more than `levels` deep: `msgspec.DecodeError(TOO_DEEP)` (a whole
    cassette file is read with `MAX_NESTING + FRAME_LEVELS`).
    """
    try:
        return in_room(levels, lambda: _DECODER.decode(data))  # the room measured only when it matters
    except RecursionError:  # msgspec recurses once per level; JSON.parse has no such limit
        raise msgspec.DecodeError(TOO_DEEP) from None
    except msgspec.DecodeError:
        text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
        try:
            with reading_room(levels + 4):  # json.loads, its decoder, raw_decode and its scanner: 4 more
                return json.loads(text, parse_float=JSFloat, parse_constant=_reject_constant)
        except RecursionError:
            raise msgspec.DecodeError(TOO_DEEP) from None
        except ValueError:
            pass
        raise


# Bytes that mean the fast path may differ.  msgspec prints a plain `float` (a cassette loaded for hashing
# holds those) as JavaScript does except for three forms, all found on the output: an integral value
# (`1.0`, `-0.0`), an exponent JavaScript writes out (`1e16`…`1e20`, `1.5e-6`) or writes with a sign (`1e21`).
# Also an integer token of 16+ digits (it may exceed 2^53), and keys holding astral characters when
# U+E000–U+FFFF characters (lead bytes EE, EF) are present too, since those two sort differently in UTF-16.
#
# Numbers are hinted by plain searches in the output's classes: digits and "-" become "0", "." and "e" stay,
# every other byte becomes "x".  A hint is confirmed on the output by an exact pattern.
_CLASSES = bytes(48 if 48 <= b <= 57 or b == 45 else b if b in b".e" else 120 for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16
_EXPONENT = b"0e0"  # a digit, "e", a digit or "-": an exponent (or hex, or prose)
# An integral float ends in ".0" before a delimiter (or the end); re finds the literal ".0" quickly.
_INTEGRAL_HINT = re.compile(rb"\.0(?![^,\]}])")
# The exact tests: a whole number token in one of msgspec's three forms, or an integer of 16+ digits.
_MSGSPEC_ONLY_FLOAT = re.compile(rb"(?<![^:,\[])-?\d+(?:\.0|(?:\.\d+)?e(?:\d+|-6))(?![^,\]}])")
_LONG_INTEGER = re.compile(rb"(?<![^:,\[])-?\d{16,}(?![^,\]}])")


def _has_long_integer(out: bytes, classes: bytes, limit: int) -> bool:
    """Whether `out[:limit]` holds an integer token of 16+ digits (runs after a decimal point are fractions)."""
    pos = classes.find(_SIXTEEN_DIGITS, 0, limit)
    while pos >= 0:
        if pos == 0 or classes[pos - 1] != 46:  # not a fraction: an integer token, or digits in a string
            return _LONG_INTEGER.search(out, 0, limit) is not None
        end = classes.find(b"x", pos)
        if end < 0:
            return False
        pos = classes.find(_SIXTEEN_DIGITS, end, limit)
    return False


def _has_msgspec_only_float(out: bytes, classes: bytes, limit: int) -> bool:
    """Whether `out[:limit]` may hold a float printed by msgspec the way JavaScript would not."""
    hinted = _INTEGRAL_HINT.search(out, 0, limit) is not None or classes.find(_EXPONENT, 0, limit) >= 0
    return hinted and _MSGSPEC_ONLY_FLOAT.search(out, 0, limit) is not None


_ASTRAL = re.compile(rb"[\xf0-\xf4]")
# From an astral lead byte to the end of its string (escapes skipped), then `:`: that string is a key.
_ASTRAL_KEY = re.compile(rb'[\xf0-\xf4](?:[^"\\]++|\\.)*+":')


def _needs_slow_path(out: bytes, classes: bytes, limit: int) -> bool:
    """Whether `out[:limit]` may print a number unlike JavaScript, or `out` has keys that sort differently."""
    if _has_long_integer(out, classes, limit) or _has_msgspec_only_float(out, classes, limit):
        return True
    return (b"\xee" in out or b"\xef" in out) and _ASTRAL.search(out) is not None \
        and _ASTRAL_KEY.search(out) is not None


def canonical_bytes(value: Any) -> bytes:
    """The canonical JSON of a decoded JSON value, as UTF-8 bytes."""
    return _canonical(value, None)


def _canonical(value: Any, tail: bytes | None) -> bytes:
    """`canonical_bytes`; the number checks stop at the last `tail` in the output (see `hashed_bytes`)."""
    try:
        out = _ENCODER.encode(value)
    except (UnicodeEncodeError, RecursionError):  # lone surrogates; or deeper than msgspec recurses here
        return _slow(value).encode("utf-8", "surrogatepass")
    except CanonicalError:
        raise
    except (TypeError, OverflowError, ValueError) as exc:
        raise CanonicalError(str(exc)) from None
    classes = out.translate(_CLASSES)
    if _needs_slow_path(out, classes, len(out) if tail is None else out.rfind(tail)):
        return _slow(value).encode("utf-8", "surrogatepass")
    return out


def canonical_text(value: Any) -> str:
    """The canonical JSON of a decoded JSON value."""
    return canonical_bytes(value).decode("utf-8", "surrogatepass")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_PREV_HASH_KEY = b',"prevHash":'


class _HashView(msgspec.Struct):
    """The hashed part of a step, its fields already in sorted order."""

    index: int
    payload: Any
    prevHash: str | None
    timestamp: int | float
    type: str


def hashed_bytes(index: int, type_: str, timestamp: int | float, payload: Any, prev_hash: str | None) -> bytes:
    """The canonical `{index, type, timestamp, payload, prevHash}`: what a step's hash is taken of.

    The number checks stop before `prevHash`: a hex hash there often has a digit before an "e" or 16 digits
    in a row, and what follows it (the timestamp, the type) holds no number JavaScript prints otherwise when
    the timestamp and index are safe integers and the hash and type strings.  A payload loaded as
    `TOO_DEEP_PAYLOAD` (nested deeper than any reader goes) has no canonical form here: `CanonicalError`."""
    if payload is TOO_DEEP_PAYLOAD:
        raise CanonicalError(f"a payload {TOO_DEEP} cannot be hashed")
    view = _HashView(index, payload, prev_hash, timestamp, type_)
    plain = _is_safe_int(index) and _is_safe_int(timestamp) and isinstance(type_, str) \
        and (prev_hash is None or isinstance(prev_hash, str))
    return _canonical(view, _PREV_HASH_KEY if plain else None)


def _is_safe_int(n: Any) -> bool:
    return type(n) is int and -_MAX_SAFE <= n <= _MAX_SAFE


def step_hash(index: int, type_: str, timestamp: int | float, payload: Any, prev_hash: str | None) -> str:
    """SHA-256 of the canonical `{index, type, timestamp, payload, prevHash}`."""
    return sha256_hex(hashed_bytes(index, type_, timestamp, payload, prev_hash))


# ---------------------------------------------------------------------------------------------------------
# The slow path: a faithful writer for the values the fast path cannot print.


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _quote(s: str) -> str:
    try:
        return msgspec.json.encode(s).decode("utf-8")
    except UnicodeEncodeError:
        pass
    parts = ['"']
    for ch in s:
        code = ord(ch)
        if ch in _ESCAPES:
            parts.append(_ESCAPES[ch])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            parts.append(f"\\u{code:04x}")
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)


class _Text(str):
    """Output text pushed on the writer's stack, told apart from a JSON string value by its type."""

    __slots__ = ()


_COMMA = _Text(",")
_CLOSE_ARRAY, _CLOSE_OBJECT = _Text("]"), _Text("}")


def _sorted_keys(value: dict[str, Any]) -> list[str]:
    try:
        return sorted(value, key=_utf16_key)
    except AttributeError:  # a key that is not a string (a value built in Python)
        raise CanonicalError("an object key that is not a string is not JSON") from None


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 4294967295


def _js_property_order(value: dict[str, Any]) -> list[str]:
    """The order JavaScript enumerates an object's keys in: array indexes ascending, then insertion order."""
    indexes = [k for k in value if _is_array_index(k)]
    if not indexes:
        return list(value)
    rest = [k for k in value if not _is_array_index(k)]
    return sorted(indexes, key=int) + rest


def _stringify_number(x: float) -> str:
    """JSON.stringify's number: NaN and ±Infinity (a parsed `1e400`) print as null."""
    return js_number(x) if math.isfinite(x) else "null"


def _stringify_int(n: int) -> str:
    try:
        return _js_int(n)
    except CanonicalError:  # beyond the largest double: JavaScript parsed it as Infinity
        return "null"


def _write(value: Any, keys_of: Callable[[dict[str, Any]], list[str]], *, stringify: bool = False) -> str:
    """JSON text of `value` with JavaScript's numbers and escapes, objects' keys in `keys_of` order.

    Iterative (an explicit stack, not recursion), so a value nested as deep as any loader accepts is
    written without exhausting Python's stack.  `stringify`: non-finite numbers print as null, as
    `JSON.stringify` prints them, instead of being refused."""
    int_text, float_text = (_stringify_int, _stringify_number) if stringify else (_js_int, js_number)
    out: list[str] = []
    stack: list[Any] = [value]
    push, pop, emit = stack.append, stack.pop, out.append
    while stack:
        item = pop()
        if type(item) is _Text:
            emit(item)
        elif item is None:
            emit("null")
        elif item is True:
            emit("true")
        elif item is False:
            emit("false")
        elif isinstance(item, str):
            emit(_quote(item))
        elif isinstance(item, int):
            emit(int_text(item))
        elif isinstance(item, float):
            emit(float_text(item))
        elif isinstance(item, list | tuple):
            if not item:
                emit("[]")
                continue
            emit("[")
            push(_CLOSE_ARRAY)
            for i in range(len(item) - 1, 0, -1):
                push(item[i])
                push(_COMMA)
            push(item[0])
        elif isinstance(item, dict):
            keys = keys_of(item)
            if not keys:
                emit("{}")
                continue
            emit("{")
            push(_CLOSE_OBJECT)
            for n in range(len(keys) - 1, -1, -1):
                key = keys[n]
                if not isinstance(key, str):
                    raise CanonicalError(f"a {type(key).__name__} key is not a JSON key")
                push(item[key])
                push(_Text(_quote(key) + ":"))
                if n:
                    push(_COMMA)
        elif isinstance(item, _HashView):
            push({f: getattr(item, f) for f in item.__struct_fields__})
        else:
            raise CanonicalError(f"a {type(item).__name__} is not a JSON value")
    return "".join(out)


def _slow(value: Any) -> str:
    """The canonical text by the pure-Python writer: keys sorted by UTF-16 code units."""
    return _write(value, _sorted_keys)


def js_stringify(value: Any) -> str:
    """What JavaScript's `JSON.stringify(value)` prints for a decoded JSON value: no whitespace, keys in
    JavaScript's property order (integer-like keys first, ascending; then insertion order), ECMAScript
    numbers (NaN and ±Infinity as null), lone surrogates escaped; `CanonicalError` for what is not JSON."""
    return _write(value, _js_property_order, stringify=True)


# ---------------------------------------------------------------------------------------------------------
# Values built in Python (tool arguments and results, normalized requests) before they enter a cassette.


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_value(value: Any, *, where: Callable[[], str] = lambda: "the value") -> Any:
    """A copy of `value` made only of JSON types, or `CanonicalError` naming what JSON cannot hold.

    Floats become `JSFloat`, tuples become lists; sets, bytes, non-string keys, NaN, strings with unpaired
    surrogates (undecodable bytes smuggled through `surrogateescape`) and arbitrary objects are refused
    rather than stored as something else.  A value nested deeper than Python's stack allows is copied again with
    room for it (up to the `MAX_NESTING` levels every reader accepts; deeper is refused in one line), so a deep
    tool result is recorded, never a RecursionError in the agent.
    """
    try:
        return _json_value(value, where)
    except RecursionError:
        pass
    if _depth(value) > MAX_NESTING:
        raise CanonicalError(f"{where()} is {TOO_DEEP}; flatten it or pass it as text")
    with nesting_headroom():
        return _json_value(value, where)


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in `value` (without recursion; stops counting past MAX_NESTING)."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, list | tuple | dict):
            deepest = max(deepest, depth)
            if deepest > MAX_NESTING:
                return deepest
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _json_value(value: Any, where: Callable[[], str]) -> Any:
    if isinstance(value, str):
        if not value.isascii() and _LONE_SURROGATE.search(value):
            raise CanonicalError(f"{where()} holds a string with undecodable bytes (an unpaired surrogate); "
                                 "decode it or pass it as text")
        return value
    if value is None or value is True or value is False:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CanonicalError(f"{where()} holds {value!r}, which JSON cannot hold; use a finite number")
        return value if type(value) is JSFloat else JSFloat(value)
    if isinstance(value, list | tuple):
        return [_json_value(v, where) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise CanonicalError(f"{where()} has a {type(k).__name__} key; JSON keys are strings")
            out[k] = _json_value(v, where)
        return out
    raise CanonicalError(f"{where()} holds a {type(value).__name__}, which JSON cannot hold faithfully")
