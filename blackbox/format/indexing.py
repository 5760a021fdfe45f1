"""Progressive loading (docs/format.md, "Loading"): a cassette file indexed a chunk at a time, so a browser
shows the first steps at once and never holds the file.  Each step keeps its small fields and its byte range;
its payload is read back from the file when shown.

The checks are `load_lazy`'s.  Anything out of the ordinary (a key order other than the usual, a field
`load` would convert, bytes that are not UTF-8, any error) is not judged here: `Unusual` says to load the
file with `load_lazy`, whose result or one-line error is the answer.  So a file reads the same either way.
"""

from __future__ import annotations

import codecs
import os
import re
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from blackbox.errors import CassetteError
from blackbox.format.canonical import MAX_NESTING, reading_room
from blackbox.format.cassette import CassetteOf, Step, StepType, Timestamp, check_version, reading
from blackbox.format.lazy import LazyCassette, LazyStep
from blackbox.format.nesting import FILE_LEVELS, in_room
from blackbox.format.tokens import Tokens

__all__ = ["CHUNK", "Batch", "CassetteHeader", "FileStep", "Indexer", "StepFile", "Unusual"]

CHUNK = 4 << 20  # bytes read at a time while indexing
FIRST_WINDOW = 1 << 16  # the first guess at a value's length when looking for its end

_WHITESPACE = b" \t\n\r"
_SPACE = re.compile(rb"[ \t\n\r]*")
_TRAILING = re.compile(r"JSON is malformed: trailing characters \(byte (\d+)\)")
_TRUNCATED = "Input data was truncated"
_AT_BYTE = re.compile(r"\(byte (\d+)\)$")
_STEP = msgspec.json.Decoder(LazyStep)
_HEAD = msgspec.json.Decoder(LazyCassette)
_STEP_END = b"\n    }"
#: A step read alone: its payload's MAX_NESTING levels and the step's own (a deeper payload is `Unusual`:
#: the whole-file load gives it its step's failed hash check).
STEP_LEVELS = MAX_NESTING + 1  # where a step ends in the usual (two-space) layout: tried first, always checked


class Unusual(Exception):
    """The file is not one the index reads by itself: load it whole (`load_lazy`) for the answer."""


class StepFile:
    """A cassette file held open and read by byte range, so the index's steps stay valid when the file is
    replaced (an atomic rewrite keeps this open file as it was).  Every step read from it holds it, so it
    stays open as long as one does: closed by `close`, or when the last of them is gone."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with reading(path):
            self._file = open(path, "rb", buffering=0)  # noqa: SIM115 (held for the steps' life)
        self._closer = weakref.finalize(self, self._file.close)
        self.size = os.fstat(self._file.fileno()).st_size

    def read(self, offset: int, length: int) -> bytes:
        """`length` bytes from `offset`; `CassetteError` if the file was cut short after it was indexed."""
        with reading(self.path):
            data = os.pread(self._file.fileno(), length, offset)
            while len(data) < length:
                more = os.pread(self._file.fileno(), length - len(data), offset + len(data))
                if not more:
                    break
                data += more
        if len(data) < length:
            raise CassetteError(f"{self.path}: the file was cut short while open (at byte {offset:,}); "
                                "open it again")
        return data

    def close(self) -> None:
        self._closer()


class FileStep(msgspec.Struct, gc=False):
    """A step as the index keeps it: the small fields, and where its JSON is in the file."""

    id: str
    index: int
    type: StepType
    timestamp: Timestamp
    prevHash: str | None
    hash: str
    offset: int
    length: int
    source: StepFile
    tokens: Tokens | None = None  # a model_output's token counts (small, so kept for the timeline)

    def lazy(self) -> LazyStep:
        """The step read back from the file, its payload undecoded."""
        data = self.source.read(self.offset, self.length)
        try:
            return in_room(STEP_LEVELS, lambda: _STEP.decode(data))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            raise CassetteError(f"{self.source.path}: step {self.index} changed on disk while open; "
                                "open the file again") from None

    @property
    def payload(self) -> msgspec.Raw:
        return self.lazy().payload

    def decoded(self) -> Step:
        return self.lazy().decoded()


class CassetteHeader(CassetteOf[FileStep]):
    """The cassette's own fields, its steps left out (`steps` stays empty: they arrive in batches);
    `parentId` and `forkedFromStepId` come after the steps, so they are known only once indexing ends."""


class Batch(msgspec.Struct):
    """Steps just indexed, with their payloads as views of the bytes read (valid until the next batch)."""

    steps: list[FileStep]
    payloads: list[msgspec.Raw]


class Indexer:
    """Reads one cassette file front to back: `start` parses its fields up to the first step, `batches`
    yields the steps a chunk at a time.  Raises `Unusual` at anything it does not read itself."""

    def __init__(self, path: str | os.PathLike[str], *, chunk: int = CHUNK) -> None:
        self.path = Path(path)
        self.file = StepFile(self.path)
        self.size = self.file.size
        self.chunk = chunk
        self.window = FIRST_WINDOW
        self._buf = b""
        self._base = 0  # the file offset of _buf[0]
        self._read = 0  # how far the file has been read
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._fields: dict[str, bytes] = {}
        self.header: CassetteHeader | None = None
        self.position = 0  # the file offset parsing has reached (progress)
        self.failed = False  # set before the last batch, when the file is not read to its end
        self._previous_hash: str | None = None
        self.done = False

    # -- bytes ---------------------------------------------------------------------------------------------

    def _fill(self, upto: int) -> None:
        """Read until the buffer holds the file up to offset `upto` (or the whole file), dropping what
        parsing has passed.  Each byte is checked as UTF-8 once, as it is read."""
        if self._read >= min(upto, self.size):
            return
        if self.position > self._base:
            self._buf = self._buf[self.position - self._base:]
            self._base = self.position
        while self._read < min(upto, self.size):
            want = max(self.chunk, upto - self._read)
            data = self.file.read(self._read, min(want, self.size - self._read))
            try:
                self._utf8.decode(data, final=self._read + len(data) >= self.size)
            except UnicodeDecodeError:
                raise Unusual from None
            self._buf += data
            self._read += len(data)

    def _byte(self, at: int) -> int:
        """The first byte at or after `at` that is not whitespace (its offset); `Unusual` at the end."""
        while True:
            self._fill(at + 1)
            rel = at - self._base
            found = _SPACE.match(self._buf, rel)
            assert found is not None
            if found.end() < len(self._buf):
                return self._base + found.end()
            if self._read >= self.size:
                raise Unusual
            at = self._base + found.end()

    def _at(self, offset: int) -> int:
        return self._buf[offset - self._base]

    def _value_end(self, start: int) -> int:
        """Where the JSON value starting at `start` ends (the offset of the first byte not whitespace after
        it, or the file's size), found by msgspec itself."""
        window = self.window
        while True:
            self._fill(start + window)
            rel = start - self._base
            view = memoryview(self._buf)[rel:rel + window]
            try:
                with reading_room(FILE_LEVELS):
                    msgspec.json.decode(view, type=msgspec.Raw)
            except msgspec.DecodeError as exc:
                text = str(exc)
                trailing = _TRAILING.fullmatch(text)
                if trailing is not None:
                    return start + int(trailing[1]) - 1
                at = _AT_BYTE.search(text)
                cut = text == _TRUNCATED or (at is not None and int(at[1]) >= len(view) - 8)
                if cut and start + len(view) < self.size:  # the window ends inside the value: look further
                    window *= 4
                    continue
                raise Unusual from None
            except RecursionError:
                raise Unusual from None
            if start + len(view) < self.size:  # a number cut short reads as a number: look further
                window *= 4
                continue
            return start + len(view)

    def _decode_value(self, start: int, end: int, kind: Any) -> Any:
        rel = start - self._base
        try:
            with reading_room(FILE_LEVELS):
                return msgspec.json.decode(memoryview(self._buf)[rel:end - self._base], type=kind)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            raise Unusual from None

    # -- the cassette's fields -----------------------------------------------------------------------------

    def _members(self, at: int, *, first: bool) -> tuple[bool, int]:
        """Read `"key": value` members from `at` (after `{`, or after a member); stop at `"steps"` (True and
        the offset of its `[`) or after the closing `}` (False and the offset past it)."""
        while True:
            at = self._byte(at)
            if self._at(at) == ord("}"):
                return False, at + 1
            if not first:
                if self._at(at) != ord(","):
                    raise Unusual
                at = self._byte(at + 1)
            first = False
            if self._at(at) != ord('"'):
                raise Unusual
            key_end = self._value_end(at)
            key = self._decode_value(at, key_end, str)
            colon = self._byte(key_end)
            if self._at(colon) != ord(":"):
                raise Unusual
            value = self._byte(colon + 1)
            if key in self._fields or (key == "steps" and self.header is not None):
                raise Unusual  # a repeated key: which one counts is the full loader's business
            if key == "steps":
                if self._at(value) != ord("["):
                    raise Unusual
                return True, value
            end = self._value_end(value)
            self._fields[key] = bytes(self._decode_value(value, end, msgspec.Raw))
            at = end

    def _header(self) -> CassetteHeader:
        """The fields read so far, checked as `load_lazy` checks them (with an empty step list)."""
        members = [b'"%s":%s' % (msgspec.json.encode(key)[1:-1], raw) for key, raw in self._fields.items()]
        document = b"{" + b",".join([*members, b'"steps":[]']) + b"}"
        try:
            with reading_room(FILE_LEVELS):
                lazy = _HEAD.decode(document)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise Unusual from None
        try:
            check_version({"version": lazy.version}, str(self.path))
        except CassetteError:
            raise Unusual from None
        return CassetteHeader(lazy.version, lazy.id, lazy.createdAt, [], lazy.parentId, lazy.forkedFromStepId)

    def start(self) -> CassetteHeader:
        """Parse up to the first step; the fields found before the steps must make a cassette."""
        at = self._byte(0)
        if self._at(at) != ord("{"):
            raise Unusual
        found, bracket = self._members(at + 1, first=True)
        if not found:
            raise Unusual  # no steps: the full load says what is missing
        self.header = self._header()
        self.position = bracket + 1
        return self.header

    # -- the steps -----------------------------------------------------------------------------------------

    def _step(self, start: int, index: int) -> tuple[FileStep, msgspec.Raw, int]:
        """The step whose JSON starts at `start`: tried at the usual layout's end first, else where msgspec
        finds the value's end.  Either way the slice decoded is exactly one JSON object."""
        rel = start - self._base
        guess = self._buf.find(_STEP_END, rel)
        lazy: LazyStep | None = None
        end = -1
        if guess >= 0:
            end = self._base + guess + len(_STEP_END)
            try:
                with reading_room(STEP_LEVELS):
                    lazy = _STEP.decode(memoryview(self._buf)[rel:guess + len(_STEP_END)])
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                lazy = None
        if lazy is None:
            end = self._value_end(start)
            rel = start - self._base
            try:
                with reading_room(STEP_LEVELS):
                    lazy = _STEP.decode(memoryview(self._buf)[rel:end - self._base])
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                raise Unusual from None
        previous = self._previous_hash
        prev_hash = previous if lazy.prevHash == previous else lazy.prevHash  # one string for both
        step = FileStep(lazy.id, lazy.index, lazy.type, lazy.timestamp, prev_hash, lazy.hash,
                        start, end - start, self.file, lazy.tokens)
        self._previous_hash = lazy.hash
        return step, lazy.payload, end

    def batches(self) -> Iterator[Batch]:
        """The steps, a chunk's worth at a time, then the fields after them; `Unusual` at anything odd."""
        if self.header is None:
            self.start()
        at = self._byte(self.position)
        index = 0
        if self._at(at) == ord("]"):
            self.position = at + 1
        else:
            while True:
                steps: list[FileStep] = []
                payloads: list[msgspec.Raw] = []
                limit = at + self.chunk
                closed = False
                try:
                    while at < limit:
                        step, payload, end = self._step(at, index)
                        steps.append(step)
                        payloads.append(payload)
                        index += 1
                        after = self._byte(end)
                        mark = self._at(after)
                        if mark == ord("]"):
                            self.position = after + 1
                            closed = True
                            break
                        if mark != ord(","):
                            raise Unusual
                        at = self._byte(after + 1)
                        self.position = at
                except Unusual:
                    self.failed = True  # the steps before are whole: hand them over, then say so
                    if steps:
                        yield Batch(steps, payloads)
                    raise
                yield Batch(steps, payloads)
                if closed:
                    break
        found, closed_at = self._members(self.position, first=False)
        if found or self._space_to_end(closed_at) < self.size:
            raise Unusual  # the steps twice, or something after the top-level object
        self.header = self._header()
        self._buf = b""
        self.position = self.size
        self.done = True

    def _space_to_end(self, at: int) -> int:
        """The offset of the first byte from `at` that is not whitespace, or the file's size."""
        self._fill(self.size)
        found = _SPACE.match(self._buf, at - self._base)
        assert found is not None
        return self._base + found.end()
