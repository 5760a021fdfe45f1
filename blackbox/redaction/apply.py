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
from blackbox.redaction.detectors import OUTSIDE, Detector
from blackbox.redaction.jsontext import Edits, in_place
from blackbox.redaction.outside import mask_shapes, outside_user_data
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
    """Every concrete path below `at` (the node `value`) that the path pattern names (a stack, not recursion:
    `**` goes as deep as the payload)."""
    stack: list[tuple[Any, int, Path]] = [(value, 0, at)]
    while stack:
        node, k, where = stack.pop()
        if k == len(pattern):
            yield where
            continue
        head = pattern[k]
        if head == "**":
            stack.append((node, k + 1, where))
            stack.extend((child, k, (*where, key)) for key, child in _children(node))
            continue
        for key, child in _children(node):
            if head == "*" or key == head or (isinstance(head, str) and isinstance(key, str) and head != key
                                              and any(c in head for c in "?[") and fnmatchcase(key, head)):
                stack.append((child, k + 1, (*where, key)))


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


class _Survey:
    """One pass over a payload (a stack, not recursion): its strings and keys, and its containers with their
    parents, so that after the text rules have looked at the strings the walk can skip every container with
    nothing in it a rule could change."""

    def __init__(self, value: Any) -> None:
        self.strings: list[str] = []
        self.owners: list[int] = []  # the container each string (or key) is in; -1: the payload itself
        self.containers: list[Any] = []
        self.parents: list[int] = []
        self.keys: set[str] = set()
        strings, owners, containers, parents = self.strings, self.owners, self.containers, self.parents
        stack: list[tuple[Any, int]] = [(value, -1)]
        while stack:
            item, parent = stack.pop()
            if isinstance(item, str):
                strings.append(item)
                owners.append(parent)
                continue
            if isinstance(item, dict):
                values: Any = item.values()
                self.keys.update(item)
                here = len(containers)
                strings.extend(item)
                owners.extend([here] * len(item))
            elif isinstance(item, list):
                values = item
                here = len(containers)
            else:
                continue
            containers.append(item)
            parents.append(parent)
            stack.extend((child, here) for child in values if isinstance(child, str | dict | list))

    def hot(self, hot_strings: set[str]) -> set[int]:
        """The ids of the containers that hold (at any depth) one of `hot_strings`."""
        flags = bytearray(len(self.containers))
        for text, owner in zip(self.strings, self.owners, strict=True):
            if owner >= 0 and text in hot_strings:
                flags[owner] = 1
        parents = self.parents
        for i in range(len(flags) - 1, 0, -1):  # a child comes after its parent
            if flags[i]:
                flags[parents[i]] = 1
        return {id(c) for c, flag in zip(self.containers, flags, strict=True) if flag}


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
        self._texts: dict[tuple[str, frozenset[int]], tuple[str, Edits]] = {}
        # What was replaced in each string a text rule changed (text, result): a tool result sent back as JSON
        # text is redacted inside its literals with it (a pure function of the pair: any thread may share it).
        self._edits: dict[tuple[str, str], Edits] = {}
        self._in_place: dict[tuple[str, str], str] = {}
        # The detectors' looser shapes the key check refuses outside user data, with the rule that masks them.
        self._outside = [(OUTSIDE[r.detector.name], r) for r in policy.rules if r.detector is not None
                         and r.detector.name in OUTSIDE and not r.scoped and r.action != "keep"]

    @property
    def info(self) -> dict[str, str]:
        """What a cassette made under this redactor says of it (`redaction` at its top level)."""
        return {"policy": self.policy.digest, "key": self.key_id}

    def __call__(self, step_type: str, payload: Any) -> Any:
        out = self._redacted(step_type, payload)
        return self._outside_user_data(out) if self._outside and isinstance(out, dict) else out

    def _redacted(self, step_type: str, payload: Any) -> Any:
        texts = self._json_texts(step_type, payload) if self._structured else {}
        if not texts:
            return self._apply(step_type, payload)
        # A tool result the agent sent back as JSON text: path and header rules see its structure, and what
        # they change is replaced in the text where it stands, the rest kept byte for byte (`jsontext`).
        parsed = _replaced(payload, {p: v for p, (v, _) in texts.items()})
        out = self._apply(step_type, parsed)
        if out is parsed:  # nothing changed (the walk shares what it leaves alone)
            return payload
        kept = {p: (text if _at(out, p) is value else self._text_in_place(text, value, _at(out, p)))
                for p, (value, text) in texts.items()}
        return _replaced(out, kept)

    def _text_in_place(self, text: str, before: Any, after: Any) -> Any:
        """The JSON text with the policy's changes made where they stand; a value replaced whole stays its bare
        mark; compact JSON only when the text cannot be mapped (`jsontext.in_place`)."""
        if not isinstance(after, dict | list):
            return after
        compact = _compact(after)
        known = self._in_place.get((text, compact))
        if known is None:
            known = in_place(text, before, after, lambda old, new: self._edits.get((old, new))) or compact
            self._remember(self._in_place, (text, compact), known)
        return known

    def _outside_user_data(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The strings outside user data (a tool's description, a request parameter; never the run's
        structure) with the looser credential shapes the key check refuses there masked."""
        found = {at: new for at, text in outside_user_data(payload, STRUCTURAL_KEYS) if not is_mark(text)
                 and (new := mask_shapes(text, self._outside, self._mark)) is not text}
        return _replaced(payload, found) if found else payload

    def _mark(self, rule: Rule, value: str) -> str:
        return masked(rule.name, token(self.key, value)) if rule.action == "mask" else dropped(rule.name)

    def _json_texts(self, step_type: str, payload: Any) -> dict[Path, tuple[Any, str]]:
        found: dict[Path, tuple[Any, str]] = {}
        for place in _tool_places(step_type, payload, _ANY_TOOL):
            text = _at(payload, place)
            if isinstance(text, str) and text[:1] in ("{", "[") and not is_mark(text):
                try:
                    found[place] = (json.loads(text), text)
                except (ValueError, RecursionError):  # not JSON, or nested too deep to parse: read as text
                    continue
        return found

    def _apply(self, step_type: str, payload: Any) -> Any:
        survey = _Survey(payload)
        strings = survey.strings
        # What each string may hold: the cache's answer, else the text rules' (the ones that find anything in
        # all the new strings at once, then each of those on each new string).  Kept for this call whatever
        # the cache keeps (a long string is not cached, and must still be redacted).
        finds: dict[str, frozenset[int]] = {}
        fresh: list[str] = []
        for s in dict.fromkeys(strings):
            known = self._finds.get(s)
            if known is None:
                fresh.append(s)
            else:
                finds[s] = known
        if fresh:
            joined = _SEPARATOR.join(fresh)
            possible = [(i, rule) for i, rule in self._text if _may_find(rule, joined)]
            for s in fresh:
                finds[s] = found = frozenset(i for i, rule in possible if _may_find(rule, s)) if possible \
                    else frozenset()
                self._remember(self._finds, s, found)
        hot = {s for s, found in finds.items() if found}
        live = frozenset().union(*(finds[s] for s in hot))
        starts: dict[Path, list[int]] = {}
        for i, rule in enumerate(self.policy.rules):
            if rule.header is not None and not any(k.lower() == rule.header for k in survey.keys):
                continue  # no member of that name anywhere in the payload
            if rule.whole or (i in live and rule.scoped):
                for place in _places(step_type, payload, rule):
                    starts.setdefault(place, []).append(i)
        if not live and not any(self.policy.rules[i].action != "keep" for at in starts.values() for i in at):
            return payload  # nothing the policy redacts is here
        ways = {path[:n] for path in starts for n in range(len(path) + 1)}
        return self._walk(payload, starts, live, survey.hot(hot) if live else set(), ways, finds)

    # -- the walk ------------------------------------------------------------------------------------

    def _walk(self, root: Any, starts: dict[Path, list[int]], live: frozenset[int], hot: set[int],
              ways: set[Path], finds: dict[str, frozenset[int]]) -> Any:
        """The redacted payload, built bottom-up with a stack of its own (a payload nested thousands of levels
        deep is walked like any other: no recursion).  At each node: `user`, the path passes through user data
        (this node's key included); `structural`, this node holds the run's structure (a key of
        `STRUCTURAL_KEYS` outside user data).  A container is shared as it is when no rule is placed at or below
        it (`ways`) and it holds no string a text rule may change (`hot`)."""
        result: list[Any] = [None]
        # A visit: (value, path, cover, user, structural, into, slot); a build: (value, new keys, items, into,
        # slot), popped once its items are done.  `path` is None outside `ways`: no rule is placed below.
        stack: list[tuple[Any, ...]] = [(root, (), frozenset(), False, False, result, 0)]
        rules = self.policy.rules
        while stack:
            entry = stack.pop()
            if len(entry) == 5:
                value, keys, items, into, slot = entry
                if isinstance(value, dict):
                    changed = any(n is not c for n, c in zip(items, value.values(), strict=True)) or \
                        any(k is not None for k in keys)
                    into[slot] = {(old if new is None else new): item
                                  for old, new, item in zip(value, keys, items, strict=True)} if changed else value
                else:
                    into[slot] = items if any(a is not b for a, b in zip(items, value, strict=True)) else value
                continue
            value, path, cover, user, structural, into, slot = entry
            here = starts.get(path) if path is not None else None
            if here:
                cover = cover | frozenset(here)
                if not structural and (isinstance(value, str) or user) and not is_mark(value):
                    rule = next((rules[i] for i in sorted(here) if rules[i].whole), None)
                    if rule is not None:
                        into[slot] = value if rule.action == "keep" else masked(rule.name, token(self.key, value)) \
                            if rule.action == "mask" else dropped(rule.name)
                        continue
            if isinstance(value, str):
                into[slot] = value if structural or not finds.get(value) else \
                    self._text_of(value, cover, live, finds[value])
                continue
            if id(value) not in hot and path not in ways:  # (None is never in `ways`)
                into[slot] = value
                continue
            inner = path is not None and path in ways
            if isinstance(value, dict):
                items = list(value.values())
                new_keys: list[str | None] = []
                for key in value:
                    new_key = self._text_of(key, cover, live, finds[key]) if user and live and finds.get(key) else key
                    new_keys.append(None if new_key == key else new_key)
                stack.append((value, new_keys, items, into, slot))
                for n, (key, child) in enumerate(value.items()):
                    at = (*path, key) if inner else None
                    if at is None and (not finds.get(child) if isinstance(child, str) else id(child) not in hot):
                        continue  # nothing here can change: the item stays
                    stack.append((child, at, cover, user or key in USER_KEYS, not user and key in STRUCTURAL_KEYS,
                                  items, n))
            elif isinstance(value, list):
                items = list(value)
                stack.append((value, None, items, into, slot))
                for n, child in enumerate(value):
                    at = (*path, n) if inner else None
                    if at is None and (not finds.get(child) if isinstance(child, str) else id(child) not in hot):
                        continue
                    stack.append((child, at, cover, user, False, items, n))
            else:
                into[slot] = value
        return result[0]

    def _text_of(self, text: str, cover: frozenset[int], live: frozenset[int],
                 found: frozenset[int] | None = None) -> str:
        """A string with the spans the text rules covering it find replaced (marks already there are kept)."""
        if not text or is_mark(text):
            return text
        taken: list[tuple[int, int, Rule]] = [(m.start(), m.end(), _KEEP) for m in MARK.finditer(text)] \
            if "[redacted:" in text else []
        if found is None:
            found = self._finds.get(text)
        rules = frozenset(i for i in (live if found is None else found & live)
                          if not self.policy.rules[i].scoped or i in cover)
        if not rules:
            return text
        known = self._texts.get((text, rules))
        if known is not None:
            if known[1]:  # (cleared from the edits since)
                self._edits.setdefault((text, known[0]), known[1])
            return known[0]
        for i, rule in self._text:
            if i not in rules:
                continue
            finder = rule.finder()
            spans = finder.spans(text) if isinstance(finder, Detector) else _pattern_spans(finder, text)
            for start, end in spans:
                if start < end and not any(start < e and s < end for s, e, _ in taken):
                    taken.append((start, end, rule))
        if not any(rule is not _KEEP and rule.action != "keep" for _, _, rule in taken):
            self._remember(self._texts, (text, rules), (text, ()))
            return text
        out: list[str] = []
        edits: list[tuple[int, int, str]] = []
        pos = 0
        for start, end, rule in sorted(taken, key=lambda t: t[0]):
            out.append(text[pos:start])
            value = text[start:end]
            if rule is _KEEP or rule.action == "keep":
                out.append(value)
            else:
                mark = self._mark(rule, value)
                out.append(mark)
                edits.append((start, end, mark))
            pos = end
        out.append(text[pos:])
        result = "".join(out)
        self._remember(self._texts, (text, rules), (result, tuple(edits)))
        if len(self._edits) > 20_000:
            self._edits.clear()
        self._edits[(text, result)] = tuple(edits)
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
