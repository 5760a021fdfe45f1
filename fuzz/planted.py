"""The planted-key and deep-nesting dimension of the importers' fuzzing (issue 30, "What it must show").

An API key is set in the importers' environment (`PLANTED_ENV`) and planted in their transcripts, whole and in
pieces (`key_forms`: a 43-character piece, a 20-character one, the key split by a line end, spaced out, laced
with zero-width spaces, in JSON held in a string, its characters JSON-escaped), in place of a sentence each seed
transcript holds (`SENTENCES`); a cassette an importer accepts must then hold no 20-character piece of it, as
judged by `holds_key_piece`, an oracle written apart from `secrets.KeySearch` (it decodes the cassette and
looks at its strings, and at the strings of JSON held in them).

Deep nesting is planted as a marker (`DEEP_MARKERS`, a NUL byte then a letter and a digit) that `expanded`
turns into nesting thousands of levels deep right before the transcript is written: inputs stay small enough
for the fuzzers' length limit, and their mutations move, copy and cut the markers like any other bytes.
"""

from __future__ import annotations

import contextlib
import json
import random
import string
from collections.abc import Iterator
from typing import Any

__all__ = [
    "DEEP_MARKERS", "PLANTED_ENV", "PLANTED_KEY", "SENTENCES", "expanded", "holds_key_piece", "key_forms",
    "planted", "planted_seeds",
]

_RNG = random.Random(30)
#: A realistic OpenAI project key: 51 characters, the shape of issue 30's report.
PLANTED_KEY = "sk-proj-" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(43))
PLANTED_ENV = {"OPENAI_API_KEY": PLANTED_KEY}
PIECE = 20

#: A sentence each seed transcript holds where the importer copies it into the cassette (a prompt, a tool's
#: description), by file, and how many JSON strings it stands inside (two: JSON text in a span attribute).
SENTENCES: dict[str, tuple[str, int]] = {
    "import/claude-code-session.jsonl": (
        "Why does checkout fail for EU customers? Check the tax config and the failing test.", 1),
    "import/claude-code-tax.jsonl": ("The VAT test in tests/test_tax.py fails. Find out why and fix it.", 1),
    "import/codex-tax.jsonl": ("The VAT test in tests/test_tax.py fails. Find out why and fix it.", 1),
    "import/codex-long-compacted.jsonl": ("Add type hints to every public function in shop/.", 1),
    "import/gemini-tax-rewind.jsonl": ("The VAT test in tests/test_tax.py fails. Find out why and fix it.", 1),
    "import/gemini-checkpoint.foreign.json": ("The VAT test in tests/test_tax.py fails. Find out why and fix it.", 1),
    "external/chat-tool-use.foreign.json": (
        "What's the weather in Paris right now, and email a short summary to alex@example.com.", 1),
    "import/otel-weather.foreign.json": ("Weather?", 2),
}

#: Depths of the planted nesting: within what every reader reads (and cheap to write), then past it.
_DEPTHS = (64, 300, 10_001, 200_000)
#: Marker → what it expands to: `\0A<i>` nested arrays, `\0O<i>` nested objects, `DEPTHS[i]` levels.
DEEP_MARKERS: dict[bytes, bytes] = {}
for _i, _n in enumerate(_DEPTHS):
    DEEP_MARKERS[b"\0A%d" % _i] = b"[" * _n + b"]" * _n
    DEEP_MARKERS[b"\0O%d" % _i] = b'{"a":' * _n + b"0" + b"}" * _n


def key_forms(key: str = PLANTED_KEY) -> list[tuple[str, str]]:
    """(name, text) of the key as a transcript may hold it: whole, in pieces, and across gaps and escapes."""
    middle = len(key) // 2
    return [
        ("whole", key),
        ("piece-43", f"part of it: {key[4:47]} (that's all)"),
        ("piece-20", f"x{key[12:12 + PIECE]}x"),
        ("newline-inside", f"key:\n{key[:middle]}\n{key[middle:]}\n"),
        ("wrapped-every-7", "\n".join(key[i:i + 7] for i in range(0, len(key), 7))),
        ("crlf-every-19", "\r\n".join(key[i:i + 19] for i in range(0, len(key), 19))),
        ("spaced-out", " ".join(key)),
        ("tab-inside", key[:25] + "\t" + key[25:]),
        ("zero-width", "\u200b".join(key)),
        ("nbsp-and-bom", key[:17] + "\u00a0" + key[17:34] + "\ufeff" + key[34:]),
        ("in-json-text", json.dumps({"config": {"api_key": key[:30] + "\n" + key[30:]}})),
        ("escaped-in-json-text", json.dumps({"k": key}).replace("k", "\\u006b")),
    ]


#: Strings whose key pieces are too short to be one (19 characters): an import holding only these succeeds.
def near_misses(key: str = PLANTED_KEY) -> list[str]:
    return [key[:PIECE - 1], f"{key[10:10 + PIECE - 1]} and {key[40:]}"]


def _escaped(text: str, levels: int) -> str:
    """`text` as it stands inside `levels` JSON strings (one: a transcript's field; two: JSON text in a field)."""
    for _ in range(levels):
        text = json.dumps(text, ensure_ascii=False)[1:-1]
    return text


def planted(data: bytes, sentence: str, value: str, levels: int = 1) -> bytes:
    """`data` with every `sentence` (inside `levels` JSON strings) replaced by `value`, escaped as it was."""
    needle = _escaped(sentence, levels)
    text = data.decode("utf-8")
    if needle not in text:
        raise ValueError("the sentence is not in the transcript")
    return text.replace(needle, _escaped(value, levels)).encode("utf-8")


def planted_seeds(data: bytes, sentence: str, levels: int = 1) -> list[bytes]:
    """Seeds of one transcript: each key form in place of its sentence, and deep markers in a few places (a
    field of the first object added, the sentence's string replaced)."""
    out = [planted(data, sentence, form, levels) for _, form in key_forms()]
    first = data.index(b"{")
    out += [data[:first + 1] + b'"deep":' + marker + b"," + data[first + 1:] for marker in DEEP_MARKERS]
    quoted = b'"' + _escaped(sentence, 1).encode() + b'"'
    if levels == 1 and quoted in data:
        out += [data.replace(quoted, marker, 1) for marker in (b"\0A2", b"\0O3", b"\0A0")]
    return out


def expanded(data: bytes) -> bytes:
    """The transcript an input stands for: each deep marker replaced by its nesting."""
    if b"\0" not in data:
        return data
    for marker, nesting in DEEP_MARKERS.items():
        if marker in data:
            data = data.replace(marker, nesting)
    return data


def _strings(value: Any) -> Iterator[str]:
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)


def _visible(text: str) -> str:
    """The characters of `text` a key can be made of (printable ASCII, no space): what a reader reads as a key."""
    return "".join(c for c in text if " " < c < "\x7f")


def holds_key_piece(written: bytes, key: str = PLANTED_KEY, depth: int = 3) -> bool:
    """Whether a written cassette (JSON) holds a `PIECE`-character piece of `key` in any string, reading past
    whitespace, control and non-ASCII characters, and looking inside strings that hold JSON (`depth` deep)."""
    pieces = [key[i:i + PIECE] for i in range(len(key) - PIECE + 1)]
    todo: list[tuple[Any, int]] = [(json.loads(written), depth)]
    while todo:
        value, left = todo.pop()
        for text in _strings(value):
            visible = _visible(text)
            if any(piece in visible for piece in pieces):
                return True
            if left and text.lstrip()[:1] in ("{", "[", '"'):
                with contextlib.suppress(ValueError, RecursionError):
                    todo.append((json.loads(text), left - 1))
    return False
