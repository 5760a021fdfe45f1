"""Response-shape drift (docs/format.md, "Drift"): the JSON shape of a provider's live answer against the shape
the recording stands for, in three tiers — a field added (info), a field removed (warning), a field whose type
changed (error).

A shape is every path of a JSON value with the JSON types seen there: `usage.output_tokens: number`.  Array
items share one path (`content[]`), and an item that says its kind (`"type": "tool_use"`) gets its own variant
path (`content[type=tool_use]`), so an answer that holds a text block where the recording held a tool call is no
drift of shape (that is behaviour): a variant present on one side only is not compared, and neither is anything
below a key that holds the caller's own data (a tool call's `input`/`args`).  A path is *added* when the
recording has the object it belongs to but not the key, *removed* the other way round; below an added, a
removed or a retyped path nothing more is reported.  `null` matches any type (a field the API leaves empty is
not a new type).

Pure functions on plain JSON values.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = ["OPAQUE_KEYS", "Finding", "Tier", "compare_shapes", "shape_of"]

Tier = Literal["info", "warning", "error"]
#: Keys whose values are the caller's or the model's data, not the API's shape: not walked into.
OPAQUE_KEYS = frozenset({"input", "args", "arguments", "parsed", "metadata", "structuredContent"})
_MAX_DEPTH = 32  # a response nested deeper than this is data, not a schema: its shape stops there


class Finding(msgspec.Struct, frozen=True):
    """One shape difference: `path`, what happened (`added` / `removed` / `type`; `unreadable`: Blackbox's codec
    refused the live answer), its tier, and the JSON types on each side (`recorded` empty for an added path,
    `live` for a removed one)."""

    path: str
    change: Literal["added", "removed", "type", "unreadable"]
    tier: Tier
    recorded: tuple[str, ...] = ()
    live: tuple[str, ...] = ()


Shape = dict[str, set[str]]


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def shape_of(value: Any) -> Shape:
    """Every path of `value` (the root is `$`) → the JSON types seen there."""
    shape: Shape = {}
    _walk(value, "$", shape, 0)
    return shape


def _walk(value: Any, path: str, shape: Shape, depth: int) -> None:
    shape.setdefault(path, set()).add(_type(value))
    if depth >= _MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}"
            if key in OPAQUE_KEYS:
                shape.setdefault(child, set()).add(_type(item))
            else:
                _walk(item, child, shape, depth + 1)
    elif isinstance(value, list):
        for item in value:
            kind = item.get("type") if isinstance(item, dict) else None
            _walk(item, f"{path}[type={kind}]" if isinstance(kind, str) else f"{path}[]", shape, depth + 1)


def _parent(path: str) -> str:
    """The path of the object or array `path` is in (`$` has none: itself)."""
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else "$"


def compare_shapes(recorded: Shape, live: Shape, optional: Shape | None = None) -> list[Finding]:
    """The shape findings of `live` against `recorded`, topmost first, in path order.  `optional` (the API's
    documented optional fields, `known_fields`) is part of the baseline: such a path is never added nor
    removed, but its types are compared."""
    findings: list[Finding] = []
    optional = optional or {}
    for path in sorted(recorded.keys() | live.keys()):
        if any(path.startswith(f"{found.path}.") or path.startswith(f"{found.path}[") for found in findings):
            continue  # below an added, removed or retyped path: its own finding says it
        rec, now = recorded.get(path), live.get(path)
        if path in optional:
            rec = (rec or set()) | optional[path]
            if now is None:
                continue
        if rec is None or now is None:  # only a key of an object both sides have: an item is behaviour
            parent = _parent(path)
            if rec is None and now is not None and parent in recorded and "object" in recorded[parent]:
                findings.append(Finding(path, "added", "info", live=tuple(sorted(now))))
            elif now is None and rec is not None and parent in live and "object" in live[parent]:
                findings.append(Finding(path, "removed", "warning", recorded=tuple(sorted(rec))))
            continue
        rec_types, now_types = rec - {"null"}, now - {"null"}
        if rec_types and now_types and not rec_types & now_types:
            findings.append(Finding(path, "type", "error", tuple(sorted(rec)), tuple(sorted(now))))
    return findings
