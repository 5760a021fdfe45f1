"""`--json` output: one JSON document on stdout, numbers printed as the canonical form prints them.

Machines compare what they read with the cassette's canonical text, so a number prints as JavaScript prints
it (`1e+21`, `0.000001`, `5`, never Python's `1e21`, `1e-06`, `5.0`), and an integer beyond 2^53 as the
double it becomes.  Keys keep the report's order (the document is for reading, not hashing).  Characters that
a terminal would obey inside a string (C1 controls, bidi overrides, line and paragraph separators) and lone
surrogates are written as `\\uXXXX` escapes: the same JSON value, inert on a terminal.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
from typing import Any

import msgspec

from blackbox.cli.json_call import JSON_OUTPUT
from blackbox.format.canonical import JSFloat, js_number, nesting_headroom
from blackbox.format.secrets import mask_secrets
from blackbox.format.writing import LONE_SURROGATE, readable

__all__ = ["json_document", "print_json"]

_SAFE = 2**53


def _float_text(obj: Any) -> Any:
    if isinstance(obj, float):
        try:
            return msgspec.Raw(js_number(obj).encode())
        except ValueError:  # NaN or Infinity (a file may hold 1e400): JSON.stringify prints null
            return msgspec.Raw(b"null")
    raise TypeError(f"a {type(obj).__name__} is not a JSON value")


_ENCODER = msgspec.json.Encoder(enc_hook=_float_text)


class _Surrogates:
    """Strings holding lone surrogates (which msgspec cannot write), swapped for placeholders and back; the
    placeholders carry a random nonce, so no string of the document itself can pass for one."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.nonce = secrets.token_hex(8)

    def placeholder(self, text: str) -> str:
        self.texts.append(text)
        return f"\x00{self.nonce}:{len(self.texts) - 1}\x00"

    def restore(self, data: str) -> str:
        marker = re.compile('"\\\\u0000' + self.nonce + r':(\d+)\\u0000"')
        return marker.sub(lambda m: json.dumps(self.texts[int(m.group(1))]), data)


def _string(text: str, surrogates: _Surrogates) -> str:
    if not text.isascii() and LONE_SURROGATE.search(text):
        return surrogates.placeholder(text)
    return text


def _jsonable(value: Any, surrogates: _Surrogates) -> Any:
    """A copy of `value` (builtins only) whose floats are `JSFloat` and whose unsafe integers are doubles.

    Iterative: a payload nested as deep as a cassette may hold is converted without recursion."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = _string(item, surrogates)
        elif item is True or item is False or item is None:
            continue
        elif isinstance(item, int):
            if not -_SAFE <= item <= _SAFE:
                try:
                    container[key] = JSFloat(float(item))
                except OverflowError:
                    container[key] = JSFloat("inf")
        elif isinstance(item, float):
            if type(item) is not JSFloat:
                container[key] = JSFloat(item)
        elif isinstance(item, list | tuple):
            copy = list(item)
            container[key] = copy
            stack.extend((copy, i) for i in range(len(copy)))
        elif isinstance(item, dict):
            copied: dict[str, Any] = {}
            for k, v in item.items():
                copied[_string(k, surrogates) if isinstance(k, str) else str(k)] = v
            container[key] = copied
            stack.extend((copied, k) for k in copied)
    return root[0]


# Inside a JSON string these would be obeyed or misread by a terminal; as escapes they are the same value.
_TERMINAL_UNSAFE = re.compile("[\u0080-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_document(value: Any) -> str:
    """`value` (msgspec Structs, dicts, lists, scalars) as an indented JSON document (one line when it is
    nested so deep that indenting would multiply its size: `readable`)."""
    surrogates = _Surrogates()
    with nesting_headroom():  # msgspec recurses once per level; a payload may be as deep as a loader allows
        data = _ENCODER.encode(_jsonable(msgspec.to_builtins(value, enc_hook=_keep), surrogates))
        text = readable(data).decode("utf-8")
    if not text.isascii():
        text = _TERMINAL_UNSAFE.sub(_escape, text)
    return surrogates.restore(text) if surrogates.texts else text


def _keep(obj: Any) -> Any:
    """`to_builtins` hands over float subclasses (`JSFloat`); anything else it cannot convert is a bug."""
    if isinstance(obj, float):
        return float(obj)
    raise TypeError(f"a {type(obj).__name__} cannot be printed as JSON")


def print_json(value: Any) -> None:
    """Print `value` as the command's one JSON document (and nothing else) on stdout."""
    sys.stdout.write(mask_secrets(json_document(value)) + "\n")  # a key in a trace id or parentId too
    sys.stdout.flush()
    JSON_OUTPUT.printed = True
