"""Lazy loading (docs/format.md, "Loading"): a cassette whose payloads stay undecoded JSON, a zero-copy view of
the file's bytes, so a browser or a diff holds a large cassette at about the size of its file and decodes only
the payloads it needs.  The checks and errors are `cassette.loads`' own: a file that fails here is loaded
eagerly to find the precise reason.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec

from blackbox.format.canonical import MAX_NESTING, TOO_DEEP_PAYLOAD, decode_json, nesting_headroom, reading_room
from blackbox.format.cassette import (
    Cassette,
    CassetteOf,
    Step,
    StepType,
    Timestamp,
    check_version,
    loads,
    paused_gc,
    read_cassette,
)
from blackbox.format.nesting import FILE_LEVELS, HOOK_SLACK
from blackbox.format.origin import Origin
from blackbox.format.tokens import Tokens
from blackbox.format.typed import View, view_of, view_of_json

__all__ = ["TOO_DEEP_RAW", "LazyCassette", "LazyStep", "decode_payload", "load_lazy", "loads_lazy"]

#: The payload of a lazily loaded step whose payload is nested too deep to read (`TOO_DEEP_PAYLOAD`):
#: known by identity, read as that text by anything that decodes it.
TOO_DEEP_RAW = msgspec.Raw(msgspec.json.encode(str(TOO_DEEP_PAYLOAD)))


def decode_payload(raw: msgspec.Raw) -> Any:
    """A lazily loaded step's payload as `load` gives it (`JSFloat` numbers)."""
    if raw is TOO_DEEP_RAW:
        return TOO_DEEP_PAYLOAD
    return decode_json(bytes(raw), levels=MAX_NESTING + HOOK_SLACK)  # its depth was judged on load


class LazyStep(msgspec.Struct, omit_defaults=True):
    """A step whose payload stays undecoded JSON (a view of the file's bytes) until `decoded()`."""

    id: str
    index: int
    type: StepType
    timestamp: Timestamp
    payload: msgspec.Raw
    prevHash: str | None
    hash: str
    tokens: Tokens | None = None
    origin: Origin | None = None

    def view(self) -> View:
        """The payload's typed view (`typed`), decoded straight from its text; the same view `decoded().view()`
        gives."""
        found = view_of_json(self.type, self.payload)
        return found if found is not None else view_of(self.type, decode_payload(self.payload))

    def decoded(self) -> Step:
        return Step(self.id, self.index, self.type, self.timestamp, decode_payload(self.payload),
                    self.prevHash, self.hash, self.tokens, self.origin)


class LazyCassette(CassetteOf[LazyStep], omit_defaults=True):
    """A cassette held at about the size of its file: a browser decodes only the payloads it shows."""

    def decoded(self) -> Cassette:
        with paused_gc():
            steps = [s.decoded() for s in self.steps]
        return Cassette(self.version, self.id, self.createdAt, steps, self.parentId, self.forkedFromStepId,
                        self.redaction, self.made)


_LAZY_DECODER = msgspec.json.Decoder(LazyCassette)


# In `json.dumps`' output: a string (left alone) or a non-finite number, which JSON has no word for.
_NON_FINITE_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity')


def _raw_json(value: Any) -> msgspec.Raw:
    """A decoded payload as JSON again; ASCII escapes keep lone surrogates, which msgspec cannot write, and
    a number too large for a double (read as infinity) is written `1e999`, which reads back the same."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    if "Infinity" in text:
        text = _NON_FINITE_TOKEN.sub(lambda m: m[0] if m[0][0] == '"' else m[0].replace("Infinity", "1e999"), text)
    return msgspec.Raw(text.encode())


def _check_utf8(data: bytes, chunk: int = 1 << 20) -> None:
    """`UnicodeDecodeError` unless `data` is UTF-8 (msgspec skips a `Raw` value's strings unchecked); in
    chunks, never holding the file as text."""
    if data.isascii():
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    for start in range(0, len(data), chunk):
        decoder.decode(view[start:start + chunk], final=start + chunk >= len(data))


def loads_lazy(data: bytes, *, name: str = "cassette", check_utf8: bool = True) -> LazyCassette:
    """Like `loads`, with the same checks and errors, but every payload stays a `msgspec.Raw` view of `data`
    (zero-copy: the cassette costs about `data` plus its steps' small fields).

    `check_utf8=False` skips the check of the payloads' text, for a caller that decodes every payload anyway
    (msgspec refuses bytes that are not UTF-8 there) and so finds any such payload itself."""
    try:
        if check_utf8:
            _check_utf8(data)
        with paused_gc(), reading_room(FILE_LEVELS):
            lazy = _LAZY_DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        full = loads(data, name=name)  # the precise error; or a file only the fallback path can read
        with nesting_headroom():  # json.dumps recurses, and a payload may be as deep as `loads` reads
            steps = [LazyStep(s.id, s.index, s.type, s.timestamp,
                              TOO_DEEP_RAW if s.payload is TOO_DEEP_PAYLOAD else _raw_json(s.payload),
                              s.prevHash, s.hash, s.tokens, s.origin)
                     for s in full.steps]
        return LazyCassette(full.version, full.id, full.createdAt, steps, full.parentId, full.forkedFromStepId,
                            full.redaction, full.made)
    check_version({"version": lazy.version}, name)
    return lazy


def load_lazy(path: str | os.PathLike[str], *, check_utf8: bool = True) -> LazyCassette:
    """Read a cassette file keeping payloads undecoded (`decode_payload`); the errors of `load`."""
    return loads_lazy(read_cassette(path), name=str(Path(path)), check_utf8=check_utf8)
