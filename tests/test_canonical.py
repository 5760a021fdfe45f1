"""Canonical JSON must be JavaScript's, byte for byte (docs/format.md, "Canonical JSON and the hash"): the original's
vectors, the JS rules, and
properties over arbitrary JSON values against a slow reference writer written here from the rules alone."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackbox.format.canonical import (
    CanonicalError,
    JSFloat,
    canonical_bytes,
    canonical_text,
    decode_json,
    hashed_bytes,
    js_number,
    json_value,
    step_hash,
)
from tests.conftest import FIXTURES

VECTORS = [json.loads(line) for line in (FIXTURES / "canonical" / "vectors.jsonl").read_text().splitlines()]


def test_all_vectors_of_the_original() -> None:
    assert len(VECTORS) == 2052
    for vector in VECTORS:
        value = decode_json(vector["input"])
        if vector["ok"]:
            out = canonical_bytes(value)
            assert out.decode("utf-8", "surrogatepass") == vector["canonical"], vector["input"]
            assert hashlib.sha256(out).hexdigest() == vector["sha256"]
        else:
            with pytest.raises(CanonicalError):
                canonical_bytes(value)


def _plain_floats(text: str) -> Any:
    """The vector's value with every number that is not an integer as a plain `float`, not a `JSFloat`."""
    return json.loads(text, parse_constant=lambda name: float(name))


def test_all_vectors_with_plain_floats() -> None:
    """A cassette loaded for hashing holds plain floats, which msgspec prints itself: same bytes."""
    for vector in VECTORS:
        if vector["ok"]:
            out = canonical_bytes(_plain_floats(vector["input"]))
            assert out.decode("utf-8", "surrogatepass") == vector["canonical"], vector["input"]


# ---------------------------------------------------------------------------------------------------------
# The JavaScript rules of docs/format.md, "Canonical JSON and the hash", case by case.

NUMBER_CASES = [
    ("1.0", "1"), ("-0.0", "0"), ("0", "0"), ("1e20", "100000000000000000000"), ("1e21", "1e+21"),
    ("1e-7", "1e-7"), ("0.000001", "0.000001"), ("5e-324", "5e-324"), ("9007199254740993", "9007199254740992"),
    ("-63774251678207848.0", "-63774251678207850"), ("706755286718275518464", "706755286718275500000"),
    ("1e16", "10000000000000000"), ("123456789012345680000", "123456789012345680000"), ("0.1", "0.1"),
    ("1.7976931348623157e308", "1.7976931348623157e+308"), ("-1.5e-10", "-1.5e-10"), ("100", "100"),
    ("2.5e-6", "0.0000025"), ("1.2345e-7", "1.2345e-7"), ("123.456", "123.456"), ("1e100", "1e+100"),
]


@pytest.mark.parametrize(("source", "expected"), NUMBER_CASES)
def test_numbers_print_as_javascript(source: str, expected: str) -> None:
    assert canonical_text(decode_json(source)) == expected


@pytest.mark.parametrize("source", ["1e400", "-1e400"])
def test_non_finite_numbers_are_refused(source: str) -> None:
    with pytest.raises(CanonicalError):
        canonical_bytes(decode_json(source))


def test_nan_and_infinity_are_refused() -> None:
    for value in (JSFloat("nan"), JSFloat("inf"), JSFloat("-inf")):
        with pytest.raises(CanonicalError):
            canonical_bytes({"x": [value]})


def test_booleans_are_never_numbers() -> None:
    assert canonical_text([True, False, 1, 0, None]) == "[true,false,1,0,null]"
    assert canonical_text({"a": True}) != canonical_text({"a": 1})


def test_strings_escape_like_json_stringify() -> None:
    value = "q\" b\\ \b\f\n\r\t \x00\x01\x1f \x7f \u2028\u2029 / é 😀"
    expected = '"q\\" b\\\\ \\b\\f\\n\\r\\t \\u0000\\u0001\\u001f \x7f \u2028\u2029 / é 😀"'
    assert canonical_text(value) == expected


def test_lone_surrogates_are_escaped() -> None:
    value = decode_json('"a\\ud800b\\udfff"')
    assert canonical_text(value) == '"a\\ud800b\\udfff"'


def test_keys_sort_by_utf16_code_units() -> None:
    # U+FF61 sorts after U+1F600 by code point but before it in UTF-16 (D83D < FF61).
    value = {"\uff61": 1, "😀": 2, "a": 3, "Z": 4}
    assert canonical_text(value) == '{"Z":4,"a":3,"😀":2,"\uff61":1}'


def test_emoji_keys_without_bmp_private_use_stay_fast_and_right() -> None:
    value = {"😀b": 1, "😀a": [1.5, "✔️ 🚀"], "b": {"🚀": None}}
    assert canonical_text(value) == '{"b":{"🚀":null},"😀a":[1.5,"✔️ 🚀"],"😀b":1}'


def test_astral_in_values_with_fullwidth_keys_keep_code_point_order() -> None:
    value = {"\uff01": "🚀", "a": "\uff01", "b": 1}
    assert canonical_text(value) == '{"a":"\uff01","b":1,"\uff01":"🚀"}'


def test_duplicate_keys_last_wins() -> None:
    assert canonical_text(decode_json('{"a": 1, "b": 2, "a": 3}')) == '{"a":3,"b":2}'


def test_nan_literals_are_not_json() -> None:
    for text in ("NaN", "[Infinity]", '{"a": -Infinity}'):
        with pytest.raises(ValueError):
            decode_json(text)


def test_step_hash_vector_of_the_spec() -> None:
    doc = json.loads((FIXTURES / "traces" / "success-final-answer.v2.json").read_text())
    step0 = doc["steps"][0]
    payload = {"text": "The capital of France is Paris.", "type": "final_answer"}
    digest = step_hash(1, "model_output", 0, payload, step0["hash"])
    assert digest == "92e98ba5d5c743e9fd25db58dea782aad943302530cc91e4e49bcec8e10b70c2"


def test_json_value_refuses_what_json_cannot_hold() -> None:
    for bad in ({1, 2}, b"x", object(), math.nan, {1: "a"}):
        with pytest.raises(CanonicalError):
            json_value({"v": bad})
    assert json_value((1, 2.5, None)) == [1, 2.5, None]


# ---------------------------------------------------------------------------------------------------------
# Properties against a reference writer derived from the rules only (no code shared with the module).


def ref_number(x: float) -> str:
    """ECMAScript Number::toString from Python's shortest round-trip digits, by the spec's steps."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + ref_number(-x)
    digits, exponent = _shortest(x)
    k, n = len(digits), exponent  # value = 0.digits × 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    return (digits[0] + ("." + digits[1:] if k > 1 else "")) + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def _shortest(x: float) -> tuple[str, int]:
    """Shortest round-trip digits (Python's repr and V8 agree on these) as (digits, n): x = 0.digits × 10^n."""
    mantissa, _, exp = repr(x).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    n = len(whole) + int(exp or 0) - (len(whole + frac) - len(digits))
    return digits.rstrip("0"), n


def ref_string(s: str) -> str:
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\b\f\n\r\t":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif c < 0x20 or 0xD800 <= c <= 0xDFFF:
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    return "".join(out) + '"'


def ref_canonical(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= 2**53 else ref_number(float(value))
    if isinstance(value, float):
        return ref_number(value)
    if isinstance(value, str):
        return ref_string(value)
    if isinstance(value, list):
        return "[" + ",".join(ref_canonical(v) for v in value) + "]"
    keys = sorted(value, key=lambda k: [u for u in k.encode("utf-16-be", "surrogatepass")])
    return "{" + ",".join(ref_string(k) + ":" + ref_canonical(value[k]) for k in keys) + "}"


finite = st.floats(allow_nan=False, allow_infinity=False).map(JSFloat)
text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12) | st.sampled_from(
    ["😀", "\uff61", "\ue000", "a😀", "a\uffff", "🚀b", "\U0010ffff", ""]
)
scalars = st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | finite | text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(text, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=600, deadline=None)
@given(json_values)
def test_fast_path_equals_reference(value: Any) -> None:
    assert canonical_bytes(value) == ref_canonical(value).encode("utf-8", "surrogatepass")


# Plain floats where msgspec and JavaScript print them differently, and strings that look like those tokens.
awkward_floats = st.sampled_from([1.0, -0.0, 0.0, 1e16, 1.5e20, 1e21, 2.5e-6, 1e-6, 1e-7, 123.0, -4e17]) \
    | st.floats(allow_nan=False, allow_infinity=False)
lookalikes = st.sampled_from([":1.0,", "[2.0]", "1e16", ",3e-6}", "0e0", "a1e5", "deadbeef3e4", "1.0",
                              ":12345678901234567,", "2024-01-15-123456789", "-9007199254740993"])
plain_values = st.recursive(
    st.none() | st.integers(min_value=-(2**60), max_value=2**60) | awkward_floats | lookalikes | text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(text | lookalikes, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=600, deadline=None)
@given(plain_values)
def test_plain_floats_print_as_javascript(value: Any) -> None:
    assert canonical_bytes(value) == ref_canonical(value).encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(plain_values, st.sampled_from([None, "0" * 64, "3e4" * 21 + "e", "1234567890123456" * 4]),
       st.sampled_from([3, 2**53 + 1]), st.sampled_from([17, 1_700_000_000_000, -(2**60) - 1]))
def test_hashed_bytes_with_plain_floats(value: Any, prev: str | None, index: int, timestamp: int) -> None:
    """The number checks skip the hex `prevHash`, never a number JavaScript would print otherwise."""
    expected = ref_canonical({"index": index, "payload": value, "prevHash": prev, "timestamp": timestamp,
                              "type": "x"})
    assert hashed_bytes(index, "x", timestamp, value, prev) == expected.encode("utf-8", "surrogatepass")


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_decode_of_canonical_is_the_value(value: Any) -> None:
    decoded = decode_json(canonical_bytes(value))
    assert canonical_bytes(decoded) == canonical_bytes(value)
    assert _same(decoded, value)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers as doubles (an integral double comes back as an int), bools apart."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_round_trips_and_matches_reference(x: float) -> None:
    text_ = js_number(x)
    assert float(text_) == x or (x == 0 and text_ == "0")
    assert text_ == ref_number(x)


def test_js_number_matches_msgspec_where_they_should_agree() -> None:
    for x in (0.1, 2.5, 123.456, -7.25, 1 / 3):
        assert js_number(x) == msgspec.json.encode(x).decode()
