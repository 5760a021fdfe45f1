"""Outside user data: the strings of a payload the key check reads with its looser credential shapes.

`blackbox.format.verify` refuses, outside user data (below none of `secrets.USER_DATA_KEYS`: a tool's
description, a request parameter), looser shapes than inside it (`sk-ant` with anything after it).  A policy
with the detector such a shape belongs to masks it there too (`Redactor`), so the check has nothing left to
refuse.  The run's structure (a tool's name, a role) is never touched: a credential there is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from blackbox.format.marks import MARK
from blackbox.format.secrets import USER_DATA_KEYS

__all__ = ["mask_shapes", "outside_user_data"]

Path = tuple[str | int, ...]
R = TypeVar("R")


def outside_user_data(payload: Any, structural: frozenset[str]) -> Iterator[tuple[Path, str]]:
    """Every string below `payload` outside user data and not under a `structural` key, with its path (a
    stack, not recursion)."""
    stack: list[tuple[Any, Path]] = [(payload, ())]
    while stack:
        node, at = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(key, str) and (key in USER_DATA_KEYS or key in structural):
                continue
            if isinstance(child, dict | list):
                stack.append((child, (*at, key)))
            elif isinstance(child, str):
                yield (*at, key), child


def mask_shapes(text: str, finders: list[tuple[re.Pattern[str], R]], mark: Callable[[R, str], str]) -> str:
    """`text` with each finder's matches replaced by `mark(rule, value)`, finder after finder (a match inside a
    mark already there is left: applying it twice changes nothing); `text` itself when none matches."""
    for pattern, rule in finders:
        marks = [m.span() for m in MARK.finditer(text)] if "[redacted:" in text else []
        spans = [m.span() for m in pattern.finditer(text) if m.end() > m.start()
                 and not any(m.start() < b and a < m.end() for a, b in marks)]
        if spans:
            out: list[str] = []
            pos = 0
            for start, end in spans:
                out += [text[pos:start], mark(rule, text[start:end])]
                pos = end
            text = "".join([*out, text[pos:]])
    return text
