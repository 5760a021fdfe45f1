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

from blackbox.format.canonical import canonical_text
from blackbox.format.marks import MARK, dropped, is_mark, masked
from blackbox.redaction.detectors import Detector
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


def _members(value: Any, name: str, at: Path) -> Iterator[Path]:
    """Every object member below `value` whose key is `name` in any case (a header's name)."""
    stack = [(value, at)]
    while stack:
        item, where = stack.pop()
        for key, child in _children(item):
            if isinstance(key, str) and key.lower() == name:
                yield (*where, key)
            if isinstance(child, dict | list):
                stack.append((child, (*where, key)))


def _strings(value: Any) -> list[str]:
    """Every string and key in a value, for the one pass that tells which text rules can find anything."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            out.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


# Between the strings of a payload joined for that pass: no detector's match can cross it (each stops at
# white space, and none of them matches a NUL after it), so a rule that finds nothing in the joined text finds
# nothing in any one string.  Patterns of the policy's own that look around or anchor are always tried.
_SEPARATOR = "\n\x00\n"
_CONTEXTUAL = ("(?<", "(?=", "(?!", "^", "$", "\\A", "\\Z", "\\G", "\\b", "\\B")


def _may_find(rule: Rule, joined: str) -> bool:
    finder = rule.finder()
    if isinstance(finder, Detector):
        return next(finder.spans(joined), None) is not None
    assert finder is not None
    return any(c in finder.pattern for c in _CONTEXTUAL) or finder.search(joined) is not None


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
        bases = [p for base in bases for p in _members(_at(payload, base), rule.header, base)]
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
        # A conversation's history comes back in every request: what each string holds is found once.
        self._finds: dict[str, frozenset[int]] = {}
        self._texts: dict[tuple[str, frozenset[int]], str] = {}

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
        strings = _strings(payload)
        fresh = [s for s in strings if s not in self._finds]
        joined = _SEPARATOR.join(fresh)
        possible = [(i, rule) for i, rule in self._text if _may_find(rule, joined)] if fresh else []
        for s in fresh:
            self._remember(self._finds, s, frozenset(i for i, rule in possible if _may_find(rule, s)))
        live = frozenset().union(*(self._finds.get(s, frozenset()) for s in strings))
        starts: dict[Path, list[int]] = {}
        for i, rule in enumerate(self.policy.rules):
            if rule.whole or (i in live and rule.scoped):
                for place in _places(step_type, payload, rule):
                    starts.setdefault(place, []).append(i)
        if not live and not any(self.policy.rules[i].action != "keep" for at in starts.values() for i in at):
            return payload  # nothing the policy redacts is here
        return self._walk(payload, (), frozenset(), starts, live)

    # -- the walk ------------------------------------------------------------------------------------

    def _walk(self, value: Any, path: Path, cover: frozenset[int], starts: dict[Path, list[int]],
              live: frozenset[int], user: bool = False, structural: bool = False) -> Any:
        """`user`: the path passes through user data (this node's key included); `structural`: this node holds
        the run's structure (a key of `STRUCTURAL_KEYS` outside user data)."""
        here = starts.get(path)
        if here:
            cover = cover | frozenset(here)
            if not structural and (isinstance(value, str) or user) and not is_mark(value):
                rule = next((self.policy.rules[i] for i in sorted(here) if self.policy.rules[i].whole), None)
                if rule is not None:
                    if rule.action == "keep":
                        return value
                    return masked(rule.name, token(self.key, value)) if rule.action == "mask" else dropped(rule.name)
        if isinstance(value, str):
            return value if structural else self._text_of(value, cover, live)
        if isinstance(value, dict):
            changed = False
            out: dict[str, Any] = {}
            for key, child in value.items():
                new = self._walk(child, (*path, key), cover, starts, live, user or key in USER_KEYS,
                                 not user and key in STRUCTURAL_KEYS)
                new_key = self._text_of(key, cover, live) if user and live else key
                changed = changed or new is not child or new_key != key
                out[new_key] = new
            return out if changed else value
        if isinstance(value, list):
            items = [self._walk(child, (*path, i), cover, starts, live, user) for i, child in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value

    def _text_of(self, text: str, cover: frozenset[int], live: frozenset[int]) -> str:
        """A string with the spans the text rules covering it find replaced (marks already there are kept)."""
        if not text or is_mark(text):
            return text
        taken: list[tuple[int, int, Rule]] = [(m.start(), m.end(), _KEEP) for m in MARK.finditer(text)] \
            if "[redacted:" in text else []
        found = self._finds.get(text)
        rules = frozenset(i for i in (live if found is None else found & live)
                          if not self.policy.rules[i].scoped or i in cover)
        if not rules:
            return text
        known = self._texts.get((text, rules))
        if known is not None:
            return known
        for i, rule in self._text:
            if i not in rules:
                continue
            finder = rule.finder()
            spans = finder.spans(text) if isinstance(finder, Detector) else _pattern_spans(finder, text)
            for start, end in spans:
                if start < end and not any(start < e and s < end for s, e, _ in taken):
                    taken.append((start, end, rule))
        if not any(rule is not _KEEP and rule.action != "keep" for _, _, rule in taken):
            self._remember(self._texts, (text, rules), text)
            return text
        out: list[str] = []
        pos = 0
        for start, end, rule in sorted(taken, key=lambda t: t[0]):
            out.append(text[pos:start])
            value = text[start:end]
            if rule is _KEEP or rule.action == "keep":
                out.append(value)
            else:
                out.append(masked(rule.name, token(self.key, value)) if rule.action == "mask" else dropped(rule.name))
            pos = end
        out.append(text[pos:])
        result = "".join(out)
        self._remember(self._texts, (text, rules), result)
        return result

    @staticmethod
    def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
        if len(cache) > 20_000:
            cache.clear()
        text: str = key if isinstance(key, str) else key[0]
        if len(text) <= 16_384:
            cache[key] = value


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
