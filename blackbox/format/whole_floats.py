"""Whole-valued floats a tool returned, kept beside the cassette's JSON so replay hands them back as floats.

The cassette writes numbers as JavaScript prints them (docs/format.md, "Canonical JSON"): `21.0` is `21`, the
same number to the original and to JSON.  Python tells them apart, and so do the frameworks: the Agents SDK
tells the model `str(result)` (`21.0`), LangChain `json.dumps` or `str()`, pydantic-ai pydantic's JSON
(`21.0`).  A tool that returned `{"t": 21.0}` and is handed `{"t": 21}` in replay would make its framework tell
the model something else, and the run would diverge from its own recording.

So a tool result's step keeps, outside the hash, where its whole-valued floats were (`Origin.floats`, JSON
Pointers into the step's payload such as `/result/t`, escaped as origin ids are), and replay turns the numbers
there back into floats before the agent sees them.  A cassette without the field (the original's, an import)
replays as before: JSON numbers without a fraction are ints.  Ground floor of the format wing.
"""

from __future__ import annotations

import math
from typing import Any

from blackbox.format.origin import MAX_ID, escape_id, unescape_id

__all__ = ["MAX_FLOATS", "NEGATIVE_ZERO", "restore_floats", "whole_floats"]

#: At most this many places are kept for one step (a result of thousands of whole floats keeps the first ones;
#: the field stays small and the rest replay as ints).
MAX_FLOATS = 1000
#: Before a pointer: the float there was -0.0 (JSON and JavaScript write it `0`; Python prints `-0.0`).  A
#: pointer starts with `/` (or is empty, for the whole value), so the mark cannot be part of one.
NEGATIVE_ZERO = "-"


def _escaped(token: str) -> str:
    """One JSON Pointer reference token (RFC 6901: `~` as `~0`, `/` as `~1`)."""
    return token.replace("~", "~0").replace("/", "~1")


def whole_floats(value: Any, at: str = "") -> tuple[str, ...]:
    """The escaped JSON Pointers (below the pointer `at`) of every float in `value` whose value is whole
    (`21.0`, `-0.0`, `1e20`): the numbers the cassette's JSON writes as integers.  Walked without recursion."""
    found: list[str] = []
    todo: list[tuple[str, Any]] = [(at, value)]
    while todo and len(found) < MAX_FLOATS:
        path, item = todo.pop()
        if isinstance(item, float):
            if math.isfinite(item) and item.is_integer():
                found.append(f"{NEGATIVE_ZERO}{path}" if item == 0 and math.copysign(1.0, item) < 0 else path)
        elif isinstance(item, dict):
            todo.extend((f"{path}/{_escaped(str(key))}", child) for key, child in reversed(item.items()))
        elif isinstance(item, list | tuple):
            todo.extend((f"{path}/{i}", child) for i, child in reversed(list(enumerate(item))))
    return tuple(kept for kept in map(escape_id, found) if len(kept) <= MAX_ID)  # a longer one replays as an int


def restore_floats(value: Any, pointers: tuple[str, ...] | None, at: str = "") -> Any:
    """`value` (read from the cassette) with the integers at `pointers` (below `at`) made floats again; a
    pointer that names no integer (a hand-edited field, a forked value of another shape) is skipped."""
    if not pointers:
        return value
    for escaped in pointers:
        pointer = unescape_id(escaped)
        if pointer is None:
            continue
        negative = pointer.startswith(NEGATIVE_ZERO)
        pointer = pointer.removeprefix(NEGATIVE_ZERO)
        if not pointer.startswith(at):
            continue
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[len(at):].split("/")[1:]]
        value = _replaced(value, tokens, -0.0 if negative else None)
    return value


def _replaced(value: Any, tokens: list[str], zero: float | None = None) -> Any:
    """`value` with the integer at `tokens` as a float (containers along the way changed in place); `zero`
    (-0.0) for a place marked as negative zero, which the JSON holds as `0`."""
    if not tokens:
        if zero is not None and type(value) is int and value == 0:
            return zero
        return float(value) if type(value) is int and abs(value) <= 2**1023 else value
    parent, last = value, tokens[-1]
    for token in tokens[:-1]:
        parent = _child(parent, token)
        if parent is None:
            return value
    if isinstance(parent, dict) and last in parent:
        parent[last] = _replaced(parent[last], [], zero)
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        parent[int(last)] = _replaced(parent[int(last)], [], zero)
    return value


def _child(value: Any, token: str) -> Any:
    if isinstance(value, dict):
        return value.get(token)
    if isinstance(value, list) and token.isdigit() and int(token) < len(value):
        return value[int(token)]
    return None
