"""A tool result the agent sent back as JSON text, redacted in place (docs/format.md, "Redaction").

The policy reads such a text as JSON (a `path` or `header` rule needs its structure), but the text the cassette
keeps must be the agent's own with only the redacted values changed: its spacing, key order and escapes byte
for byte.  A replay hands the agent the recorded result (marks in place of the values); the agent's
`json.dumps(result, indent=2)` of it must then give the text the cassette holds, or the replay diverges.

`in_place(text, before, after, edits)` finds where each value of `before` (the text parsed) stands in `text`,
and replaces there, and only there, what the policy changed in `after`: a whole value by its mark, a string's
redacted spans (`edits`: what the redactor replaced in it) inside its literal, escapes around them kept.
None when the text cannot be mapped so (duplicate keys, a value the walk cannot pair): the caller writes the
value compact instead.  Nothing is ever returned that does not parse to `after`.
"""

from __future__ import annotations

import json
import json.decoder
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Edits", "in_place"]

Path = tuple[str | int, ...]
Span = tuple[int, int]
#: What the redactor replaced in one string: (start, end, replacement) in the decoded text, left to right.
Edits = tuple[tuple[int, int, str], ...]

_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_WORDS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")  # what json.loads accepts bare
#: json's own string reader (C): the decoded string and where its literal ends.
scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class _Unmappable(ValueError):
    """The text is not JSON as this reader maps it (a duplicate key: the parsed value lost a member)."""


def _spans(text: str) -> tuple[dict[Path, Span], dict[Path, Span]]:
    """Where every value (by its path) and every object key (by the path of its member) stands in `text`.

    A stack, not recursion: a result nested as deep as `json.loads` allows is mapped like any other."""
    values: dict[Path, Span] = {}
    keys: dict[Path, Span] = {}
    # Open containers: (path, start, is_object, next index, keys seen)
    stack: list[tuple[Path, int, bool, list[int], set[str]]] = []
    pos = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    at: Path = ()
    while True:
        ch = text[pos:pos + 1]
        if ch in ("{", "["):  # a container opens: its first member, or its end
            stack.append((at, pos, ch == "{", [0], set()))
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            if text[pos:pos + 1] == ("}" if ch == "{" else "]"):
                values[at] = (stack.pop()[1], pos + 1)
                pos += 1
            else:
                at, pos = _member(text, pos, stack, keys)
                continue
        elif ch == '"':
            end = scanstring(text, pos + 1, True)[1]
            values[at] = (pos, end)
            pos = end
        else:
            m = _NUMBER.match(text, pos)
            word = next((w for w in _WORDS if text.startswith(w, pos)), None) if m is None else None
            if m is None and word is None:
                raise _Unmappable(f"no JSON value at {pos}")
            end = m.end() if m is not None else pos + len(word or "")
            values[at] = (pos, end)
            pos = end
        # after a value: the next member, or the end of containers
        while True:
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if not stack:
                if pos != len(text):
                    raise _Unmappable(f"text after the value at {pos}")
                return values, keys
            path, start, is_object, count, _ = stack[-1]
            ch = text[pos:pos + 1]
            if ch == ",":
                count[0] += 1
                pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
                at, pos = _member(text, pos, stack, keys)
                break
            if ch != ("}" if is_object else "]"):
                raise _Unmappable(f"no , or end at {pos}")
            stack.pop()
            values[path] = (start, pos + 1)
            pos += 1


def _member(text: str, pos: int, stack: list[tuple[Path, int, bool, list[int], set[str]]],
            keys: dict[Path, Span]) -> tuple[Path, int]:
    """The path of the next member of the open container and where its value starts (past `"key":`)."""
    path, _, is_object, count, seen = stack[-1]
    if not is_object:
        return (*path, count[0]), pos
    if text[pos:pos + 1] != '"':
        raise _Unmappable(f"no key at {pos}")
    key, end = scanstring(text, pos + 1, True)
    if key in seen:
        raise _Unmappable(f"duplicate key at {pos}")
    seen.add(key)
    keys[(*path, key)] = (pos, end)
    pos = _SPACE.match(text, end).end()  # type: ignore[union-attr]
    if text[pos:pos + 1] != ":":
        raise _Unmappable(f"no : at {pos}")
    return (*path, key), _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]


def _offsets(raw: str) -> list[int]:
    """Where each character of the decoded string starts in `raw` (a literal's text between its quotes), and
    `len(raw)` last; an escaped surrogate pair is one character, as `json.loads` reads it."""
    out: list[int] = []
    i, n = 0, len(raw)
    while i < n:
        out.append(i)
        if raw[i] != "\\":
            i += 1
        elif raw[i + 1:i + 2] != "u":
            i += 2
        else:
            code = int(raw[i + 2:i + 6], 16)
            pair = 0xD800 <= code <= 0xDBFF and raw[i + 6:i + 8] == "\\u" and \
                0xDC00 <= int(raw[i + 8:i + 12], 16) <= 0xDFFF
            i += 12 if pair else 6
    out.append(n)
    return out


def _literal_changes(text: str, span: Span, old: str, new: str, edits: Edits | None) -> list[tuple[int, int, str]]:
    """A string's literal at `span` changed from `old` to `new`: its redacted spans replaced inside it, or the
    whole literal when the edits are unknown."""
    start, end = span
    raw = text[start + 1:end - 1]
    offsets = _offsets(raw) if edits else []
    if not edits or len(offsets) != len(old) + 1:
        return [(start, end, json.dumps(new, ensure_ascii=raw.isascii()))]
    return [(start + 1 + offsets[a], start + 1 + offsets[b], json.dumps(mark)[1:-1]) for a, b, mark in edits]


def in_place(text: str, before: Any, after: Any, edits: Callable[[str, str], Edits | None]) -> str | None:
    """`text` (whose value is `before`) with what the policy changed in `after` replaced where it stands; None
    when that cannot be done exactly (see the module docstring)."""
    try:
        values, keys = _spans(text)
    except (_Unmappable, ValueError, IndexError):
        return None
    changes: list[tuple[int, int, str]] = []
    stack: list[tuple[Any, Any, Path]] = [(before, after, ())]
    while stack:
        old, new, at = stack.pop()
        if old is new:
            continue
        if isinstance(old, dict) and isinstance(new, dict) and len(old) == len(new):
            for (k1, v1), (k2, v2) in zip(old.items(), new.items(), strict=True):
                if k1 != k2:
                    changes += _literal_changes(text, keys[(*at, k1)], k1, k2, edits(k1, k2))
                stack.append((v1, v2, (*at, k1)))
        elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
            stack.extend((a, b, (*at, i)) for i, (a, b) in enumerate(zip(old, new, strict=True)))
        elif isinstance(old, str) and isinstance(new, str):
            if old != new:
                changes += _literal_changes(text, values[at], old, new, edits(old, new))
        elif isinstance(old, dict | list) or isinstance(new, dict | list) or old != new:
            if at not in values or isinstance(new, dict | list):
                return None
            start, end = values[at]
            changes.append((start, end, json.dumps(new, ensure_ascii=text[start:end].isascii())))
    out: list[str] = []
    pos = 0
    for start, end, replacement in sorted(changes):
        if start < pos:
            return None
        out += [text[pos:start], replacement]
        pos = end
    out.append(text[pos:])
    result = "".join(out)
    try:
        same = json.loads(result) == after
    except (ValueError, RecursionError):
        return None
    return result if same else None
