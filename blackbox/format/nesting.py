"""How deep a JSON value may nest: every reader accepts the same depth, and walkers get room to judge it.

Imports nothing of Blackbox (the canonical module re-exports these names).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NamedTuple, ParamSpec, TypeVar

__all__ = [
    "FILE_LEVELS",
    "FRAME_LEVELS",
    "HOOK_SLACK",
    "MAX_NESTING",
    "NESTING_HEADROOM",
    "TOO_DEEP",
    "TOO_DEEP_PAYLOAD",
    "DeepPayloads",
    "NotJSON",
    "blanked",
    "deep_payloads",
    "in_room",
    "nesting_headroom",
    "reading_room",
    "walk_with_room",
    "with_headroom",
]

# The original reads any depth (`JSON.parse` does not recurse) and hashes as deep as V8's stack lets its
# canonicalizer recurse: 2,600 to 4,200 levels, so a deeper payload fails its step's hash check there.  Here a
# payload (and any JSON value read alone) may nest MAX_NESTING levels, more than that, and is read and hashed
# whatever the depth of the caller's own stack; a cassette's payload nested deeper is loaded in its place as
# `TOO_DEEP_PAYLOAD`, whose step fails the hash check (`deep_payloads` finds it without recursing).
MAX_NESTING = 10_000
#: The levels a cassette file puts around a payload (its object, the steps list, the step): a file may nest
#: MAX_NESTING + FRAME_LEVELS levels, and no more outside its payloads.
FRAME_LEVELS = 3
#: How deep a whole cassette file may nest: a payload's MAX_NESTING levels and the levels around it.
FILE_LEVELS = MAX_NESTING + FRAME_LEVELS
#: Room added where a value's depth is already judged (by `deep_payloads`, or by a decoder without a hook)
#: and it is decoded again with `JSFloat`: calling the float hook costs the decoder a level or two there.
HOOK_SLACK = 4
#: What `reading_room` adds to the depth it measures so that a decoder gets exactly the levels asked for
#: (the frames between the measure and the decoder's own count; `tests/test_verdicts.py` holds it exact).
ROOM_OFFSET = -4
P = ParamSpec("P")
R = TypeVar("R")
TOO_DEEP = f"nested more than {MAX_NESTING:,} levels deep"


#: A step's payload nested deeper than MAX_NESTING levels is loaded as this text, known by identity (`is`):
#: every reader shows it as text, it is never hashed (its step fails the hash check: `canonical.hashed_bytes`
#: refuses it) and never written.
TOO_DEEP_PAYLOAD = f"(this payload is {TOO_DEEP}, too deep to read or hash)"

# The checks that walk a decoded value recursively (verify's scans, diff's field changes, msgspec's encoder)
# take a few frames per level: they run with this much room above the caller's frames.  Python-to-Python
# calls do not grow the C stack (3.11+), and msgspec's own recursion is shallow in C, so this is safe.
NESTING_HEADROOM = 4 * MAX_NESTING + 1_000


def _frames() -> int:
    """How deep the calling thread's Python stack is."""
    frame: FrameType | None = sys._getframe(1)
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


_AT_DEPTH = re.compile(r"at the recursion depth (\d+)")


def _depth() -> int:
    """The calling thread's recursion depth as the interpreter counts it: its Python frames and the calls
    from C between them (a test runner's hooks, `__enter__`), which `_frames` does not see.  Read from the
    refusal of a limit below it; the frames where an interpreter words that refusal otherwise."""
    before = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(1)  # always below the depth of this call: refused, with the depth named
    except RecursionError as exc:
        found = _AT_DEPTH.search(str(exc))
        if found is not None:
            return int(found[1])
    else:
        sys.setrecursionlimit(before)
    return _frames()


@contextmanager
def _recursion_limit(limit: int) -> Iterator[None]:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@contextmanager
def nesting_headroom() -> Iterator[None]:
    """Raise Python's recursion limit (never lower it) so a value any reader accepted can be walked."""
    limit = _frames() + NESTING_HEADROOM
    if sys.getrecursionlimit() >= limit:
        yield
        return
    with _recursion_limit(limit):
        yield


def with_headroom(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, run under `nesting_headroom` (for the readers' entry points that walk whole values)."""
    @functools.wraps(function)
    def walking(*args: P.args, **kwargs: P.kwargs) -> R:
        with nesting_headroom():
            return function(*args, **kwargs)
    return walking


@contextmanager
def reading_room(levels: int = MAX_NESTING) -> Iterator[None]:
    """While JSON is decoded (`with` in the function that decodes): room for exactly `levels` levels of
    nesting (msgspec counts each level, a Struct's included, against Python's recursion limit) above the
    caller's stack, so every reader accepts and refuses the same depths.  A cassette's readers give
    MAX_NESTING + FRAME_LEVELS for a whole file, MAX_NESTING + 1 for one step."""
    with _recursion_limit(_depth() + levels + ROOM_OFFSET):
        yield


def in_room(levels: int, read: Callable[[], R]) -> R:
    """`read()` (a decode) with room for exactly `levels` levels, measuring the room only when it matters.

    The room's limit is the caller's depth + levels + ROOM_OFFSET, never below levels + ROOM_OFFSET: what
    reads under a limit no higher than that reads in the room too, so it is tried first where it stands
    (measuring the depth costs several µs a call, which a reader of 10,000 steps pays 10,000 times); only
    a RecursionError there, or a limit already raised above it, is judged in the room."""
    if sys.getrecursionlimit() <= levels + ROOM_OFFSET:
        try:
            return read()
        except RecursionError:
            pass  # deep, or a deep caller: judged in the room
    with reading_room(levels + 1):  # measured here, one frame above `read`'s own
        return read()


def walk_with_room(walk: Callable[[], R]) -> R:
    """`walk()` (an encode, a recursive check) where it stands, and again under `nesting_headroom` if it
    runs out of room: a value the readers accepted may nest MAX_NESTING levels, most nest a few."""
    try:
        return walk()
    except RecursionError:
        pass
    with nesting_headroom():
        return walk()


# One token of JSON text: a string, a number, a literal, or a structural character (whitespace skipped).
_TOKEN = re.compile(rb'[ \t\n\r]*(?:("(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+")'
                    rb"|(-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?|true|false|null)|([\[\]{}:,]))")
_SPACE_TO_END = re.compile(rb"[ \t\n\r]*+")


class DeepPayloads(NamedTuple):
    """What `deep_payloads` found: the byte spans of the payloads nested too deep (every occurrence, so a
    reader can blank them all) and the steps whose payload, as `JSON.parse` reads the file (the last `steps`,
    a step's last `payload`), is one of them."""

    spans: list[tuple[int, int]]
    steps: list[int]


class NotJSON(ValueError):
    """The text is not JSON from byte `offset` (`truncated`: it ends there)."""

    def __init__(self, offset: int, truncated: bool) -> None:
        super().__init__(offset)
        self.offset = offset
        self.truncated = truncated


def deep_payloads(data: bytes, levels: int = MAX_NESTING) -> DeepPayloads | None:
    """Where a cassette file's step payloads nest more than `levels` levels, read without recursion (a
    token at a time, its grammar checked) however deep the file; None when it nests deeper than
    `levels + FRAME_LEVELS` outside a payload.  `NotJSON` where the text stops being JSON."""
    stack = bytearray()  # the open containers: ord("{") or ord("[")
    top_key: object = None  # the member of the top-level object being read
    step_key: object = None  # the member of a step being read
    in_steps = False  # the list open at level 2 is the top level's "steps"
    steps_seen = 0  # "steps" lists read so far (the last one counts, as in JSON.parse)
    element = -1  # the step being read in that list
    payload_at = -1  # where the payload being read began; -2: the next value is one
    deepest = 0
    spans: list[tuple[int, int]] = []
    found: dict[tuple[int, int], bool] = {}  # (steps list, step) → its last payload is too deep
    expect, opened = "value", False  # what the grammar allows next; just after "[" or "{"
    pos = 0
    while stack or expect == "value":
        token = _TOKEN.match(data, pos)
        if token is None:
            rest = _SPACE_TO_END.match(data, pos)
            assert rest is not None
            raise NotJSON(rest.end(), rest.end() == len(data))
        string, mark = token.group(1, 3)
        depth = len(stack)
        if expect == "key":
            if string is not None:
                if depth == 1:
                    top_key = json.loads(string)
                elif depth == 3 and in_steps:
                    step_key = json.loads(string)
                expect, pos = "colon", token.end()
                continue
            if not (mark == b"}" and opened):
                raise NotJSON(token.start(), False)
        elif expect == "colon":
            if mark != b":":
                raise NotJSON(token.start(), False)
            if depth == 3 and in_steps and step_key == "payload":
                payload_at = -2
            expect, pos = "value", token.end()
            continue
        elif expect == "next":
            if mark == b",":
                expect, opened, pos = ("key" if stack[-1] == 123 else "value"), False, token.end()
                if depth == 2 and in_steps:
                    element += 1
                continue
            if mark is None or mark not in b"]}" or (mark == b"]") != (stack[-1] == 91):
                raise NotJSON(token.start(), False)
        elif (mark is not None and mark in b":,}") or (mark == b"]" and not opened):
            raise NotJSON(token.start(), False)
        pos = token.end()
        if payload_at == -2:
            payload_at, deepest = token.start(), depth
        if mark is not None and mark in b"[{":
            stack.append(mark[0])
            depth += 1
            if payload_at >= 0:
                deepest = max(deepest, depth)
            elif depth > levels + FRAME_LEVELS:
                return None
            if depth == 2:
                in_steps = mark == b"[" and top_key == "steps"
                if in_steps:
                    steps_seen, element = steps_seen + 1, 0
            expect, opened = ("key" if mark == b"{" else "value"), True
            continue
        if mark is not None:  # "]" or "}" closes a container: a value ended
            stack.pop()
            depth -= 1
        if payload_at >= 0 and depth == 3:
            too_deep = deepest - 3 > levels
            if too_deep:
                spans.append((payload_at, pos))
            found[steps_seen, element] = too_deep
            payload_at = -1
        if depth == 1 and mark == b"]":
            in_steps = False
        expect, opened = "next", False
    rest = _SPACE_TO_END.match(data, pos)
    assert rest is not None
    if rest.end() != len(data):
        raise NotJSON(rest.end(), False)
    steps = sorted(index for (member, index), deep in found.items() if deep and member == steps_seen)
    return DeepPayloads(spans, steps)


_BLANK = bytes(10 if byte == 10 else 32 for byte in range(256))  # a line end stays, every other byte is a space


def blanked(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    """`data` with each span (a JSON value of 4 bytes or more) replaced by `null` and spaces, its line ends
    kept: every other value, and every position an error names, stays where it was."""
    out = bytearray(data)
    for start, end in spans:
        out[start:end] = b"null" + data[start + 4 : end].translate(_BLANK)
    return bytes(out)
