"""A small, dependency-free mutation fuzzer: the short pass in CI, and the fallback where atheris does not
install.  Byte-level mutations (flip, insert an interesting token, cut, duplicate, splice) and JSON-aware ones
(decode the seed, or one line of a JSON-lines seed, replace one node by a hostile value, encode it again),
from a fixed random seed.  The hostile values and tokens include the planted key's forms and the deep-nesting
markers of `fuzz.planted`: a key or a piece of one, across gaps and escapes, anywhere in a transcript."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any

from fuzz.planted import DEEP_MARKERS, key_forms

__all__ = ["HOSTILE_VALUES", "mutations", "run"]

TOKENS = [b'"\\ud800"', b'"\\udc00x"', b"1e400", b"-0", b"1.5", b"9007199254740993", b"null", b"true", b"[]",
          b"{}", b'"', b"\\", b"\xff", b"\xc3", b"\n", b"\x00", b"NaN", b"[[[[[[[[", b'{"a":', b"\x1b[31m",
          b'"calls"', b'"tool_calls"', b'"type"', b'"payload"', b'"prevHash"', b'"parentId"', b'"createdAt"']

HOSTILE_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, 1e300, 2**64, "", "\ud800", "x\udfffy", "\x1b]0;t\x07",
                             "sk-ant-" + "a" * 30, [], {}, [None], {"\ud800": 1}, {"": []}, "9" * 40, -0.0,
                             "toolu_01abc", "call-0", "\u202e", [[[[[]]]]], {"type": "tool_calls", "calls": {}},
                             {"type": "final_answer"}, {"event": "run_completed", "status": "success"}]
# The planted key's forms (as values, and as tokens inside a JSON string) and the deep-nesting markers.
_KEY_FORMS = [form for _, form in key_forms()]
HOSTILE_VALUES += _KEY_FORMS + [[[[form]]] for form in _KEY_FORMS[:3]] + [{"text": form} for form in _KEY_FORMS[3:6]]
TOKENS += [json.dumps(form)[1:-1].encode() for form in _KEY_FORMS] + list(DEEP_MARKERS)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, (*path, i))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        copy[head] = _replace(value[head], rest, new)
        return copy
    copy_list = list(value)
    copy_list[head] = _replace(value[head], rest, new)
    return copy_list


def _json_mutation(rng: random.Random, data: bytes) -> bytes | None:
    """One node of the seed replaced (a JSON document, or one line of JSON lines), encoded again."""
    try:
        value = json.loads(data.decode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeDecodeError):
        lines = data.split(b"\n")
        if len(lines) < 2:
            return None
        at = rng.randrange(len(lines))
        line = _json_mutation(rng, lines[at]) if lines[at].strip() else None
        if line is None:
            return None
        return b"\n".join([*lines[:at], line.replace(b"\n", b""), *lines[at + 1:]])
    paths = list(_nodes(value))
    path = rng.choice(paths)
    choice = rng.random()
    if choice < 0.6:
        new = rng.choice(HOSTILE_VALUES)
    elif choice < 0.8 and path:
        other = rng.choice(paths)
        try:
            new = _get(value, other)
        except (KeyError, IndexError, TypeError):
            new = None
    else:
        new = "\ud800" if rng.random() < 0.5 else {"\udc00": rng.choice(HOSTILE_VALUES)}
    mutated = _replace(value, path, new)
    if rng.random() < 0.2 and isinstance(mutated, dict):  # a key renamed to a lone surrogate
        keys = list(mutated)
        if keys:
            k = rng.choice(keys)
            mutated = {("\ud800" + k if key == k else key): v for key, v in mutated.items()}
    return json.dumps(mutated, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2])).encode(
        "utf-8", "surrogatepass")


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


def _byte_mutation(rng: random.Random, data: bytes, corpus: list[bytes]) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randint(0, len(buf))
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[pos:pos] = rng.choice(TOKENS)
        elif op == 2 and buf:
            end = min(len(buf), pos + rng.randint(1, 64))
            del buf[pos:end]
        elif op == 3 and buf:
            end = min(len(buf), pos + rng.randint(1, 64))
            buf[pos:pos] = buf[pos:end]
        elif op == 4:
            other = rng.choice(corpus)
            cut = rng.randint(0, len(other))
            buf = buf[:pos] + bytearray(other[cut:])
        else:
            buf = buf[:pos]  # truncated
    return bytes(buf)


def mutations(corpus: list[bytes], count: int, seed: int = 0) -> Iterator[bytes]:
    """`count` inputs: the corpus itself first, then mutants of it."""
    rng = random.Random(seed)
    yield from corpus[:count]
    for _ in range(max(0, count - len(corpus))):
        base = rng.choice(corpus)
        mutated = _json_mutation(rng, base) if rng.random() < 0.5 else None
        yield mutated if mutated is not None else _byte_mutation(rng, base, corpus)


def run(target: Callable[[bytes], None], corpus: list[bytes], count: int, seed: int = 0) -> int:
    """Feed `count` inputs to `target`; the first crash propagates (with the input attached)."""
    n = 0
    for data in mutations(corpus, count, seed):
        try:
            target(data)
        except BaseException as exc:
            exc.add_note(f"fuzz input ({len(data)} bytes): {data[:600]!r}")
            raise
        n += 1
    return n
