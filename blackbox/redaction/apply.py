"""Applying a policy to one step's payload: the `Redactor` (docs/format.md, "Redaction").

Two passes over the payload, both in the policy's rule order:

1. whole-value rules (no detector, no pattern), from the root down: at each value the first rule placed there
   decides — `keep` leaves it and everything below it alone, `mask` replaces it with its mark and token,
   `drop` with the bare mark;
2. text rules (a detector or a pattern) on every string (and every object key inside user data) not decided
   above: each finds its spans in what earlier text rules left; a `keep` rule's spans stay as they are.

Values that hold the run's structure (a tool call's id and name, a part's `type`, a message's `role`, the
terminal step's `event`) are never touched, so a redacted cassette still replays.  A mark is never redacted
again, so applying a policy twice changes nothing: a fork of a redacted run keeps its parent's hashes.
The payload given is never modified: the result shares every part that did not change.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterator
from fnmatch import fnmatchcase
from typing import Any

from blackbox.canonical import canonical_text
from blackbox.redaction.detectors import Detector
from blackbox.redaction.markers import MARK, dropped, is_mark, masked
from blackbox.redaction.policy import Policy, Rule, Segment

__all__ = ["STRUCTURAL_KEYS", "USER_KEYS", "Redactor", "token"]

Path = tuple[Segment, ...]
#: Below these keys a value is the user's own data (a tool's arguments, its result, a schema).
USER_KEYS = frozenset({"toolInput", "result", "error", "inputSchema", "responseFormat", "outputConfig",
                       "prediction"})
#: Outside user data these hold the run's structure: never redacted.
STRUCTURAL_KEYS = frozenset({"toolCallId", "toolName", "type", "role", "event", "status", "reason", "model",
                             "stop", "name", "signature", "exitCode", "inFlight", "errorKind", "maxSteps"})


def token(key: bytes, value: Any) -> str:
    """16 hex digits of HMAC-SHA256 over the value (a string's text, or another value's canonical JSON)."""
    data = value if isinstance(value, str) else "\0json:" + canonical_text(value)
    return hmac.new(key, data.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:16]


def _in_user_data(path: Path) -> bool:
    return any(isinstance(seg, str) and seg in USER_KEYS for seg in path)


def _structural(path: Path) -> bool:
    return bool(path) and isinstance(path[-1], str) and path[-1] in STRUCTURAL_KEYS and not _in_user_data(path[:-1])


def _select(value: Any, pattern: tuple[Segment, ...], at: Path) -> Iterator[Path]:
    """Every concrete path below `at` (the node `value`) that the path pattern names."""
    if not pattern:
        yield at
        return
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        yield from _select(value, rest, at)
        for key, child in _children(value):
            yield from _select(child, pattern, (*at, key))
        return
    for key, child in _children(value):
        if head == "*" or key == head or (isinstance(head, str) and isinstance(key, str) and head != key
                                          and any(c in head for c in "?[") and fnmatchcase(key, head)):
            yield from _select(child, rest, (*at, key))


def _children(value: Any) -> Iterator[tuple[Segment, Any]]:
    if isinstance(value, dict):
        yield from value.items()
    elif isinstance(value, list):
        yield from enumerate(value)


def _at(value: Any, path: Path) -> Any:
    for seg in path:
        value = value[seg]
    return value


def _tool_places(step_type: str, payload: Any, rule: Rule) -> list[Path]:
    """Where a tool's arguments and results are in this payload, for the tools a rule names."""
    if not isinstance(payload, dict):
        return []
    places: list[Path] = []

    def of(part: dict[str, Any], at: Path) -> None:
        if rule.tool_matches(part.get("toolName")):
            places.extend((*at, k) for k in ("toolInput", "result", "error") if k in part)

    if step_type in ("tool_call", "tool_result"):
        of(payload, ())
    elif step_type == "model_output":
        if payload.get("type") == "tool_call":
            of(payload, ())
        calls = payload.get("calls")
        for i, call in enumerate(calls if isinstance(calls, list) else []):
            if isinstance(call, dict):
                of(call, ("calls", i))
    elif step_type == "model_input":
        messages = payload.get("messages")
        for m, message in enumerate(messages if isinstance(messages, list) else []):
            content = message.get("content") if isinstance(message, dict) else None
            for p, part in enumerate(content if isinstance(content, list) else []):
                if isinstance(part, dict) and part.get("type") in ("tool_use", "tool_result"):
                    of(part, ("messages", m, "content", p))
    return places


def _places(step_type: str, payload: Any, rule: Rule) -> list[Path]:
    """The values a rule's "where" names in this payload (the root when it names no place)."""
    if not rule.scoped:
        return [()]
    bases: list[Path] = _tool_places(step_type, payload, rule) if rule.tool is not None else [()]
    if rule.header is not None:
        named = ("**", "*")
        bases = [p for base in bases for p in _select(_at(payload, base), named, base)
                 if isinstance(p[-1], str) and p[-1].lower() == rule.header]
    if rule.path is None:
        return bases
    if rule.tool is not None or rule.header is not None:  # a path below the tool's values or the header
        return [p for base in bases for p in _select(_at(payload, base), rule.path, base)]
    head, rest = rule.path[0], rule.path[1:]
    if head == "**":
        return list(_select(payload, rule.path, ()))
    if head not in ("*", step_type):
        return []
    return list(_select(payload, rest, ()))


class Redactor:
    """A policy with its key: `redactor(step_type, payload)` is the payload as the cassette may hold it."""

    def __init__(self, policy: Policy, key: bytes = b"", key_id: str = "unkeyed") -> None:
        self.policy = policy
        self.key = key
        self.key_id = key_id
        self._whole = [(i, r) for i, r in enumerate(policy.rules) if r.whole]
        self._text = [(i, r) for i, r in enumerate(policy.rules) if not r.whole]
        self._structured = any(r.path is not None or r.header is not None for r in policy.rules)

    @property
    def info(self) -> dict[str, str]:
        """What a cassette made under this redactor says of it (`redaction` at its top level)."""
        return {"policy": self.policy.digest, "key": self.key_id}

    def __call__(self, step_type: str, payload: Any) -> Any:
        texts = self._json_texts(step_type, payload) if self._structured else {}
        if not texts:
            return self._apply(step_type, payload)
        # A tool result the agent sent back as JSON text: path and header rules see its structure, and it is
        # written back (compact) only when a rule changed it, so both sides of a replay read it alike.
        parsed = _replaced(payload, {p: v for p, (v, _) in texts.items()})
        out = self._apply(step_type, parsed)
        kept = {p: (text if _at(out, p) is value else _compact(_at(out, p))) for p, (value, text) in texts.items()}
        out = _replaced(out, kept)
        return payload if out == payload else out

    def _json_texts(self, step_type: str, payload: Any) -> dict[Path, tuple[Any, str]]:
        found: dict[Path, tuple[Any, str]] = {}
        for place in _tool_places(step_type, payload, _ANY_TOOL):
            text = _at(payload, place)
            if isinstance(text, str) and text[:1] in ("{", "[") and not is_mark(text):
                try:
                    found[place] = (json.loads(text), text)
                except ValueError:
                    continue
        return found

    def _apply(self, step_type: str, payload: Any) -> Any:
        starts: dict[Path, list[int]] = {}
        for i, rule in enumerate(self.policy.rules):
            for place in _places(step_type, payload, rule):
                starts.setdefault(place, []).append(i)
        return self._walk(payload, (), frozenset(), starts)

    # -- the walk ------------------------------------------------------------------------------------

    def _walk(self, value: Any, path: Path, cover: frozenset[int], starts: dict[Path, list[int]]) -> Any:
        here = starts.get(path)
        if here:
            cover = cover | frozenset(here)
            if not _structural(path) and (isinstance(value, str) or _in_user_data(path)) and not is_mark(value):
                rule = next((self.policy.rules[i] for i in sorted(here) if self.policy.rules[i].whole), None)
                if rule is not None:
                    if rule.action == "keep":
                        return value
                    return masked(rule.name, token(self.key, value)) if rule.action == "mask" else dropped(rule.name)
        if isinstance(value, str):
            return value if _structural(path) else self._text_of(value, cover)
        if isinstance(value, dict):
            changed = False
            out: dict[str, Any] = {}
            user = _in_user_data(path)
            for key, child in value.items():
                new = self._walk(child, (*path, key), cover, starts)
                new_key = self._text_of(key, cover) if user else key
                changed = changed or new is not child or new_key != key
                out[new_key] = new
            return out if changed else value
        if isinstance(value, list):
            items = [self._walk(child, (*path, i), cover, starts) for i, child in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value

    def _text_of(self, text: str, cover: frozenset[int]) -> str:
        """A string with the spans the text rules covering it find replaced (marks already there are kept)."""
        if not text or is_mark(text):
            return text
        taken: list[tuple[int, int, Rule]] = [(m.start(), m.end(), _KEEP) for m in MARK.finditer(text)] \
            if "[redacted:" in text else []
        for i, rule in self._text:
            if rule.scoped and i not in cover:
                continue
            finder = rule.finder()
            spans = finder.spans(text) if isinstance(finder, Detector) else _pattern_spans(finder, text)
            for start, end in spans:
                if start < end and not any(start < e and s < end for s, e, _ in taken):
                    taken.append((start, end, rule))
        if not any(rule is not _KEEP and rule.action != "keep" for _, _, rule in taken):
            return text
        out: list[str] = []
        pos = 0
        for start, end, rule in sorted(taken, key=lambda t: t[0]):
            out.append(text[pos:start])
            found = text[start:end]
            if rule is _KEEP or rule.action == "keep":
                out.append(found)
            else:
                out.append(masked(rule.name, token(self.key, found)) if rule.action == "mask" else dropped(rule.name))
            pos = end
        out.append(text[pos:])
        return "".join(out)


def _replaced(value: Any, at: dict[Path, Any]) -> Any:
    """`value` with the values at these paths replaced (containers on the way copied, the rest shared)."""
    if () in at:
        return at[()]
    if isinstance(value, dict | list):
        heads: dict[Segment, dict[Path, Any]] = {}
        for path, new in at.items():
            heads.setdefault(path[0], {})[path[1:]] = new
        copy: Any = dict(value) if isinstance(value, dict) else list(value)
        for head, rest in heads.items():
            copy[head] = _replaced(value[head], rest)  # type: ignore[index]
        return copy
    return value


def _compact(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) if isinstance(value, dict | list) else value


def _pattern_spans(pattern: Any, text: str) -> Iterator[tuple[int, int]]:
    assert isinstance(pattern, re.Pattern)
    for m in pattern.finditer(text):
        yield m.start(), m.end()


_KEEP = Rule("kept-mark", "keep")  # the spans of marks already in a string
_ANY_TOOL = Rule("any-tool", "keep", tool="*")
