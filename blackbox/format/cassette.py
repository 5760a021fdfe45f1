"""The cassette file (docs/format.md, "The cassette" and "Loading"): msgspec Structs, loading with clear errors,
the hash chain check, saving, and `StepChain`, which builds a chain.  Lazy loading is in `lazy`; JSON and file
writing in `writing`.

Loading checks the structure of the file; the hash chain is checked by `chain_break` (used by `load` when
asked, and by verify).  Error messages name the file and a position or a step and field, never the
file's content, which may hold secrets.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

import msgspec

from blackbox.errors import CassetteError
from blackbox.format.canonical import (
    TOO_DEEP,
    TOO_DEEP_PAYLOAD,
    CanonicalError,
    JSFloat,
    decode_json,
    hashed_bytes,
    nesting_headroom,
    reading_room,
    sha256_hex,
    step_hash,
)
from blackbox.format.frames import surrogate_free_frame
from blackbox.format.nesting import FILE_LEVELS, HOOK_SLACK, NotJSON, blanked, deep_payloads
from blackbox.format.origin import Made, Origin, unhashed_problem
from blackbox.format.tokens import Tokens, tokens_problem
from blackbox.format.typed import View, view_of
from blackbox.format.writing import atomic_write, dumps

if TYPE_CHECKING:
    from blackbox.format.lazy import LazyCassette

__all__ = [
    "STEP_TYPES",
    "Cassette",
    "ChainBreak",
    "Decodable",
    "Step",
    "StepChain",
    "StepType",
    "Tokens",
    "chain_break",
    "check_version",
    "hash_break",
    "link_break",
    "load",
    "loads",
    "paused_gc",
    "read_cassette",
    "reading",
    "save",
    "steps_break",
    "text_position",
]

StepType = Literal["model_input", "model_output", "tool_call", "tool_result", "metadata"]
STEP_TYPES: tuple[str, ...] = ("model_input", "model_output", "tool_call", "tool_result", "metadata")
SCHEMA_VERSION = 2


# JSON has one number type, and the TypeScript Blackbox takes any number as a timestamp: a non-integral one is kept
# (a float) and hashed as JavaScript prints it.
Timestamp = int | float


class Step(msgspec.Struct, omit_defaults=True):
    """One recorded event; fields in the TypeScript Blackbox's order, `id` not hashed.  `tokens` (a model_output's token
    counts, docs/format.md "Token usage") and `origin` (who answered it, "Origin") come after `hash`, only when
    known, and are not hashed either."""

    id: str
    index: int
    type: StepType
    timestamp: Timestamp
    payload: Any
    prevHash: str | None
    hash: str
    tokens: Tokens | None = None
    origin: Origin | None = None

    def view(self) -> View:
        """The payload as a typed, read-only view (`typed.view_of`); the hash stays over `payload` itself."""
        return view_of(self.type, self.payload)


S = TypeVar("S")


class CassetteOf(msgspec.Struct, Generic[S], omit_defaults=True):
    """A cassette's fields, declared once for every reader: its steps are `Step`s (`Cassette`), undecoded
    views (`lazy.LazyCassette`) or none yet (`indexing.CassetteHeader`).  `parentId` and `forkedFromStepId`
    only on a fork, written after `steps`."""

    version: int
    id: str
    createdAt: int
    steps: list[S]
    parentId: str | None = None
    forkedFromStepId: str | None = None
    # What a redaction policy made of it (docs/format.md, "Redaction"): not hashed, ignored by the original.
    redaction: Any = None
    made: Made | None = None  # when and with which versions the file was made ("Origin"): not hashed either


class Cassette(CassetteOf[Step], omit_defaults=True):
    """One run of an agent, every step decoded."""


class ChainBreak(msgspec.Struct, frozen=True):
    """Where and why the hash chain does not hold."""

    index: int
    reason: str


# ---------------------------------------------------------------------------------------------------------
# Loading


def text_position(data: bytes, offset: int) -> str:
    """`line L, column C` (1-based, columns in bytes) of a byte offset: where errors point, never what is there."""
    offset = max(0, min(offset, len(data)))
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)")
_NON_FINITE = re.compile(rb"-?(NaN|Infinity)")


def _json_error(name: str, data: bytes, exc: Exception) -> CassetteError:
    message = str(exc)
    match = _BYTE_OFFSET.search(message)
    if message == TOO_DEEP:
        return CassetteError(f"{name}: JSON {TOO_DEEP}; a cassette never nests this deep, so the file is "
                             "damaged or not a cassette: re-record it")
    if isinstance(exc, UnicodeDecodeError):
        return CassetteError(f"{name}: not UTF-8 text at {text_position(data, exc.start)}, so not a cassette; "
                             "re-record it or restore it from a copy")
    if data.startswith(b"\xef\xbb\xbf"):
        return CassetteError(f"{name}: starts with a byte-order mark, which JSON (and the TypeScript Blackbox) "
                             "rejects; save the file as UTF-8 without a BOM")
    if "truncated" in message:
        return CassetteError(f"{name}: not JSON: the file ends early at {text_position(data, len(data))} "
                             "(truncated?); re-record it or restore it from a copy")
    if match:
        offset = int(match.group(1))
        where = text_position(data, offset)
        if _NON_FINITE.match(data, offset):
            return CassetteError(f"{name}: NaN/Infinity at {where} is not valid JSON (JavaScript rejects "
                                 "it too); re-record the cassette")
        return CassetteError(f"{name}: not JSON: invalid syntax at {where}; the file is damaged or not a "
                             "cassette: re-record it or restore it from a copy")
    return CassetteError(f"{name}: not JSON; the file is damaged or not a cassette: re-record it or restore "
                         "it from a copy")


_TYPE_WORDS = {"int": "an integer", "str": "a string", "object": "an object", "array": "an array",
               "null": "null", "float": "a number"}
_PATH = re.compile(r"\$\.steps\[(\d+)\](?:\.(\w+))?(?:\.(\w+))?")


def _expected(message: str) -> str:
    names = [t.strip() for union in re.findall(r"`([a-z |]+)`", message.split(", got")[0]) for t in union.split("|")]
    if "float" in names:  # `int | float`: JSON has one number type
        names = [t for t in names if t != "int"]
    words = [_TYPE_WORDS.get(t, t) for t in names if t]
    return " or ".join(words) if words else "valid"


def _structure_error(name: str, exc: msgspec.ValidationError) -> CassetteError:
    """Rewrite msgspec's message so it names the step and field but never a value."""
    message = str(exc)
    path = message.rsplit(" - at `", 1)[1].rstrip("`") if " - at `" in message else "$"
    step = _PATH.match(path)
    missing = re.search(r"missing required field `(\w+)`", message)
    if step and step.group(2) is None and missing:
        return CassetteError(f"{name}: step {step.group(1)} has no `{missing.group(1)}` field")
    if step and step.group(2) is None:
        return CassetteError(f"{name}: step {step.group(1)} is not an object")
    if step and step.group(2) == "tokens":
        problem = tokens_problem(missing.group(1) if missing else None, step.group(3))
        return CassetteError(f"{name}: step {step.group(1)} {problem}")
    if (unhashed := unhashed_problem(path)) is not None:
        return CassetteError(f"{name}: {unhashed}")
    if step:
        index, field = step.group(1), step.group(2)
        if field == "type" and "enum" in message:
            return CassetteError(f"{name}: step {index} has an unknown type (expected one of "
                                 f"{', '.join(STEP_TYPES)})")
        return CassetteError(f"{name}: step {index} field `{field}` must be {_expected(message)}")
    if missing:
        return CassetteError(f"{name}: the cassette has no `{missing.group(1)}` field")
    field = path.removeprefix("$.") if path != "$" else "the top level"
    return CassetteError(f"{name}: `{field}` must be {_expected(message)}")


_CASSETTE_DECODER = msgspec.json.Decoder(Cassette, float_hook=JSFloat)
# Plain floats: no Python call per number.  `canonical_bytes` prints them as JavaScript does too, so a
# caller that only hashes and scans the cassette (verify) loads it this way.
_PLAIN_FLOAT_DECODER = msgspec.json.Decoder(Cassette)


def _integer(value: Any) -> Any:
    """An integral float (`1.0`, as Python's json.dumps prints a float) as the integer it is; else `value`."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _integral_numbers(raw: Any) -> Any:
    """The same document with integral floats in `version`, `createdAt` and each step's `index` as integers:
    JSON has one number type, so `1.0` is the integer 1 there, as it is for the TypeScript Blackbox."""
    if not isinstance(raw, dict):
        return raw
    for field in ("version", "createdAt"):
        if field in raw:
            raw[field] = _integer(raw[field])
    steps = raw.get("steps")
    if isinstance(steps, list):
        for step in steps:
            if isinstance(step, dict) and "index" in step:
                step["index"] = _integer(step["index"])
    return raw


def check_version(raw: Any, name: str) -> None:
    """`CassetteError` unless `raw` is an object holding version 2, the only version there is."""
    if not isinstance(raw, dict):
        raise CassetteError(f"{name}: not a cassette: the top level is not a JSON object")
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CassetteError(f"{name}: no numeric `version` field; this is not a Blackbox cassette "
                            "(re-record it with this version of Blackbox)")
    if version != SCHEMA_VERSION:
        raise CassetteError(f"{name}: cassette version {version} is not supported (only version "
                            f"{SCHEMA_VERSION}; there is no migration, re-record it)")


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: decoding or walking a large cassette allocates millions of objects
    (none cyclic), and the collector's passes over them can cost as much as the work itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def loads(data: bytes, *, name: str = "cassette", js_floats: bool = True, _levels: int = 0) -> Cassette:
    """Parse cassette bytes: JSON, an object, version 2, then the structure of every step.

    Numbers that are not integers come back as `JSFloat`, or as plain floats with `js_floats=False`."""
    levels = _levels or FILE_LEVELS
    try:
        with paused_gc(), reading_room(levels):
            cassette = (_CASSETTE_DECODER if js_floats else _PLAIN_FLOAT_DECODER).decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        pass  # find the precise reason below, in the order of docs/format.md, "Loading"
    else:
        check_version({"version": cassette.version}, name)
        return cassette
    try:
        raw = decode_json(data, levels=levels)
    except msgspec.DecodeError as exc:
        if str(exc) == TOO_DEEP and not _levels:
            return _loads_deep(data, name, js_floats)
        raise _json_error(name, data, exc) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise _json_error(name, data, exc) from None
    raw = _integral_numbers(raw)
    check_version(raw, name)
    try:
        try:
            with nesting_headroom():
                return msgspec.convert(raw, Cassette)
        except UnicodeEncodeError:  # msgspec encodes a key or a Literal it checks; a lone surrogate cannot be
            with nesting_headroom():
                return msgspec.convert(surrogate_free_frame(raw), Cassette)
    except msgspec.ValidationError as exc:
        raise _structure_error(name, exc) from None
    except RecursionError:
        raise _json_error(name, data, msgspec.DecodeError(TOO_DEEP)) from None


def _loads_deep(data: bytes, name: str, js_floats: bool) -> Cassette:
    """A file nested deeper than FILE_LEVELS: where that is inside step payloads only, those payloads are
    blanked (same length, same lines, so every other error keeps its position) and the steps get
    `TOO_DEEP_PAYLOAD`, which fails their hash check as the original fails it; deeper anywhere else, the
    file is refused at load, and text that is not JSON gets its precise error (found without recursing)."""
    try:
        data.decode("utf-8")  # a payload blanked unread must not hide bytes that are not UTF-8
        found = deep_payloads(data)
    except UnicodeDecodeError as exc:
        raise _json_error(name, data, exc) from None
    except NotJSON as exc:
        reason = "Input data was truncated" if exc.truncated else f"JSON is malformed (byte {exc.offset})"
        raise _json_error(name, data, msgspec.DecodeError(reason)) from None
    if found is None:
        raise _json_error(name, data, msgspec.DecodeError(TOO_DEEP)) from None
    if not found.spans:  # as deep as a payload may be, where a `JSFloat` costs the decoder a level or two
        return loads(data, name=name, js_floats=js_floats, _levels=FILE_LEVELS + HOOK_SLACK)
    cassette = loads(blanked(data, found.spans), name=name, js_floats=js_floats, _levels=FILE_LEVELS + HOOK_SLACK)
    for index in found.steps:
        cassette.steps[index].payload = TOO_DEEP_PAYLOAD
    return cassette


@contextmanager
def reading(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turns a failure to open or read a cassette file into its one-line `CassetteError`, naming the path."""
    try:
        yield
    except FileNotFoundError:
        raise CassetteError(f"{Path(path)}: no such file") from None
    except IsADirectoryError:
        raise CassetteError(f"{Path(path)}: is a directory, not a cassette file") from None
    except OSError as exc:
        raise CassetteError(f"{Path(path)}: cannot read: {exc.strerror}") from None


def read_cassette(path: str | os.PathLike[str]) -> bytes:
    """A cassette file's bytes; `CassetteError` naming the path when it cannot be read."""
    with reading(path):
        return Path(path).read_bytes()


def load(path: str | os.PathLike[str], *, js_floats: bool = True) -> Cassette:
    """Read a cassette file; `CassetteError` with one clear line when it cannot be read.

    Read into memory, not mapped: a file truncated by another program while mapped would kill the process
    (SIGBUS), and mapped pages count as resident memory all the same.
    """
    return loads(read_cassette(path), name=str(Path(path)), js_floats=js_floats)


class Decodable(Protocol):
    """A step kept undecoded (a lazily loaded or an indexed one)."""

    def decoded(self) -> Step: ...


def chain_break(
    cassette: Cassette | LazyCassette | Sequence[Decodable], *,
    on_step: Callable[[Step, bytes], None] | None = None,
) -> ChainBreak | None:
    """The first link of the hash chain that does not hold (docs/format.md, "Loading" order), or None.

    `on_step` sees each step that passed with the canonical bytes its hash was taken of, so a caller (verify)
    can scan them without canonicalizing twice.  A lazy cassette's payloads are decoded one at a time and
    dropped after hashing, and so are the steps of a sequence of undecoded ones.
    """
    steps: Iterable[Step]
    if isinstance(cassette, Cassette):
        steps = cassette.steps
    else:
        steps = (s.decoded() for s in (cassette if isinstance(cassette, Sequence) else cassette.steps))
    return steps_break(steps, on_step=on_step)


def steps_break(steps: Iterable[Step], *, on_step: Callable[[Step, bytes], None] | None = None) -> ChainBreak | None:
    """`chain_break` of steps as they come (decoded one at a time by the caller, e.g. verify)."""
    prev: str | None = None
    for i, step in enumerate(steps):
        broken = link_break(i, step.index, step.prevHash, prev)
        if broken is not None:
            return broken
        broken, data = hash_break(i, step)
        if broken is not None:
            return broken
        if on_step is not None:
            on_step(step, data)
        prev = step.hash
    return None


def link_break(i: int, index: int, prev_hash: str | None, previous: str | None) -> ChainBreak | None:
    """The link checks of step `i`, in order: its index, then its prevHash against `previous` (the hash of
    step i-1; step 0's prevHash must be null).  They need no payload."""
    if index != i:
        return ChainBreak(i, f"step {i} has index {index}; expected {i}")
    if i == 0 and prev_hash is not None:
        return ChainBreak(0, "step 0 has a prevHash; the first step's must be null")
    if i > 0 and prev_hash != previous:
        return ChainBreak(i, f"step {i} prevHash does not match the hash of step {i - 1}")
    return None


def hash_break(i: int, step: Step) -> tuple[ChainBreak | None, bytes]:
    """Whether step `i`'s stored hash matches its recomputed one; the canonical bytes hashed."""
    try:
        data = hashed_bytes(step.index, step.type, step.timestamp, step.payload, step.prevHash)
    except CanonicalError:
        if step.payload is TOO_DEEP_PAYLOAD:
            return ChainBreak(i, f"step {i} payload is {TOO_DEEP}, too deep to hash, so its hash cannot "
                                 "be checked"), b""
        return ChainBreak(i, f"step {i} payload has no canonical JSON form (NaN or Infinity), so its "
                             "hash cannot match"), b""
    computed = sha256_hex(data)
    if computed != step.hash:
        return ChainBreak(i, f"step {i} hash does not match its content (recomputed {computed[:12]}…)"), b""
    return None, data


# ---------------------------------------------------------------------------------------------------------
# Saving (the layout and the atomic write are in `writing`)


def save(cassette: Cassette, path: str | os.PathLike[str]) -> None:
    """Write a cassette atomically in the TypeScript Blackbox's layout."""
    atomic_write(path, dumps(cassette))


# ---------------------------------------------------------------------------------------------------------
# Building


class StepChain:
    """Appends steps to a new cassette, linking each to the previous one's hash.

    Payloads must already be JSON values (see `canonical.json_value`).  A fork starts from a copied prefix.
    """

    def __init__(self, trace_id: str, prefix: list[Step] | None = None, *,
                 redact: Callable[[str, Any], Any] | None = None, redaction: Any = None) -> None:
        """`redact(type, payload)` (a redaction policy, `blackbox.redaction`) is applied to every payload before
        it is hashed, the copied prefix's included (re-linked from its first changed step); `redaction` is
        what the cassette's top-level field says of it."""
        self.trace_id = trace_id
        self.redact = redact
        self.redaction = redaction
        self.steps: list[Step] = rechain(list(prefix or []), redact) if redact is not None else list(prefix or [])

    def append(self, type_: StepType, timestamp: Timestamp, payload: Any, tokens: Tokens | None = None,
               origin: Origin | None = None) -> Step:
        if self.redact is not None:
            payload = self.redact(type_, payload)
        index = len(self.steps)
        prev = self.steps[-1].hash if self.steps else None
        step = Step(
            id=f"{self.trace_id}:{index}",
            index=index,
            type=type_,
            timestamp=timestamp,
            payload=payload,
            prevHash=prev,
            hash=step_hash(index, type_, timestamp, payload, prev),
            tokens=tokens,
            origin=origin,
        )
        self.steps.append(step)
        return step

    def cassette(self, created_at: int, *, parent_id: str | None = None, forked_from_step_id: str | None = None,
                 made: Made | None = None) -> Cassette:
        return Cassette(
            version=SCHEMA_VERSION,
            id=self.trace_id,
            createdAt=created_at,
            steps=list(self.steps),
            parentId=parent_id,
            forkedFromStepId=forked_from_step_id,
            redaction=self.redaction,
            made=made,
        )


def rechain(steps: list[Step], transform: Callable[[str, Any], Any]) -> list[Step]:
    """`steps` with `transform(type, payload)` applied, each step from the first changed one re-hashed and
    re-linked (ids, timestamps, token counts and origins kept); steps `transform` leaves alone (it returns the same
    object) are kept."""
    out: list[Step] = []
    relinked = False
    for step in steps:
        payload = transform(step.type, step.payload)
        if payload is step.payload and not relinked:
            out.append(step)
            continue
        relinked = True
        prev = out[-1].hash if out else None
        out.append(msgspec.structs.replace(step, payload=payload, prevHash=prev,  # tokens and all else kept
                                           hash=step_hash(step.index, step.type, step.timestamp, payload, prev)))
    return out
