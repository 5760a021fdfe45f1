"""The lone surrogates msgspec cannot check, taken out of a cassette's frame before its structure is checked
(keys, step types, where numbers belong); payloads and ids keep theirs (docs/format.md, "Loading")."""

from __future__ import annotations

from typing import Any

from blackbox.format.writing import LONE_SURROGATE

__all__ = ["surrogate_free_frame"]

# Fields whose string value is kept as it is, lone surrogates included; every other field is not a string.
_TEXT_FIELDS = frozenset({"id", "prevHash", "hash", "parentId", "forkedFromStepId"})


def _scrubbed(value: Any) -> Any:
    """`value` with every lone surrogate (in strings and keys) replaced: for values that are refused anyway."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_scrubbed(k): _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def _frame_safe(obj: Any) -> Any:
    if not isinstance(obj, dict):
        return _scrubbed(obj)  # not an object where a step belongs: refused all the same
    safe: dict[str, Any] = {}
    for key, value in obj.items():
        if LONE_SURROGATE.search(key):
            continue  # no field has such a name: an unknown field, ignored like any other
        if key == "payload" or (key in _TEXT_FIELDS and isinstance(value, str)):
            safe[key] = value  # any JSON; or a string, which may hold lone surrogates
        else:
            safe[key] = _scrubbed(value)  # a string where no string (or no such type name) belongs: refused
    return safe


def surrogate_free_frame(raw: dict[str, Any]) -> dict[str, Any]:
    """The cassette's top level and steps with the lone surrogates msgspec cannot check taken out of the
    frame (keys, step types, where numbers belong); payloads and ids are left as they are."""
    frame: dict[str, Any] = _frame_safe(raw)
    if isinstance(frame.get("steps"), list):
        frame["steps"] = [_frame_safe(step) for step in frame["steps"]]
    return frame
