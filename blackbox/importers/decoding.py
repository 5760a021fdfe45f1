"""How an importer reads JSON text (a transcript's line, a field of a line, a whole document, JSON held in a
string) with the room every reader of Blackbox gets, and what it says when the text cannot be read.

A transcript is someone else's file, and a hostile one may nest 200,000 levels deep or hold a number of
thousands of digits.  Every decode here runs in `nesting.in_room` with the `MAX_NESTING` levels every reader
accepts, whatever the caller's own stack (docs/format.md, "Depth"); deeper is refused in the words the other
readers use, exit 2 (`NestedTooDeep`).  A refusal says what is wrong and where (a syntax error's position,
the first byte that is not UTF-8, where the nesting passes the limit, where the long number starts), never
what is there.  Only after a decode failed is the text scanned, once, to find that place.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import msgspec

from blackbox.format.canonical import TOO_DEEP, decode_json
from blackbox.format.cassette import text_position
from blackbox.format.nesting import MAX_NESTING, in_room
from blackbox.importers.common import NestedTooDeep, TranscriptError

__all__ = [
    "Place", "decode_document", "decode_field", "decode_line", "decode_string", "document_place", "json_position",
    "line_place", "unreadable",
]

T = TypeVar("T")


class Place(NamedTuple):
    """Where the text that failed is (`line 3: `, or nothing for a whole document), and how a byte offset of it
    is named (` at column 7`, ` at line 3, column 7`)."""

    prefix: str
    at: Callable[[int], str]


# A string (possibly cut off), a container mark, or a number with its parts: enough of JSON's grammar to
# find where nesting passes the limit and where an integer too long to read starts.
_SCAN = re.compile(rb'"(?:[^"\\]++|\\.)*+"?|([\[{])|([\]}])|(-?[0-9]++)(\.[0-9]++)?([eE][+-]?[0-9]++)?', re.DOTALL)
_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)")
_BOM = b"\xef\xbb\xbf"


def _digit_limit() -> int:
    """The longest integer Python reads from text (`sys.get_int_max_str_digits`, 4,300 by default)."""
    return sys.get_int_max_str_digits() or 4300


def _first_unreadable(data: bytes) -> tuple[str, int, int] | None:
    """Where JSON text that failed to decode first does what no reader takes: ("deep", offset, 0) where the
    nesting passes MAX_NESTING, ("number", offset, digits) where an integer too long to read begins."""
    depth = 0
    longest = _digit_limit()
    for token in _SCAN.finditer(data):
        opened, closed, integer = token.group(1, 2, 3)
        if opened is not None:
            depth += 1
            if depth > MAX_NESTING:
                return "deep", token.start(), 0
        elif closed is not None:
            depth = max(0, depth - 1)
        elif integer is not None and token.group(4) is None and token.group(5) is None:
            digits = len(integer) - integer.startswith(b"-")
            if digits > longest:
                return "number", token.start(), digits
    return None


def unreadable(data: bytes, exc: BaseException, where: Place, what: str) -> TranscriptError | None:
    """The refusal of JSON text that failed to decode (`exc`) for a reason other than its syntax: nested past
    MAX_NESTING, an integer too long to read, bytes that are not UTF-8, a byte-order mark; None for a syntax
    error or a text that ends early, which each reader words itself.  `what` names the format (the remedy)."""
    if isinstance(exc, UnicodeDecodeError):  # a line is named by its number alone; a document by the position
        at = "" if where.prefix else where.at(exc.start)
        return TranscriptError(f"{where.prefix}not UTF-8 text{at}, so the file is damaged or not {what}")
    found = _first_unreadable(data)
    if (found is not None and found[0] == "deep") or isinstance(exc, RecursionError) or str(exc) == TOO_DEEP:
        at = "" if found is None else where.at(found[1])
        return NestedTooDeep(f"{where.prefix}JSON {TOO_DEEP}{at}, deeper than any reader goes; {what} never nests "
                             "so deep, so the file is damaged or hostile: remove that part")
    if found is not None:
        return TranscriptError(f"{where.prefix}a number of {found[2]:,} digits{where.at(found[1])}, too large for "
                               "JSON (JavaScript reads it as Infinity); make it a finite number")
    if data.startswith(_BOM):
        return TranscriptError(f"{where.prefix}a byte-order mark at the start, which JSON does not allow; save "
                               "the file as UTF-8 without a BOM")
    return None


def json_position(data: bytes, exc: BaseException) -> str:
    """`line L, column C` of a JSON syntax error, or `the end of the file` when the text ends early."""
    message = str(exc)
    match = _BYTE_OFFSET.search(message)
    if match is None or "truncated" in message:
        return "the end of the file"
    return text_position(data, int(match.group(1)))


def document_place(data: bytes) -> Place:
    """A whole document: offsets named ` at line L, column C`."""
    return Place("", lambda at: f" at {text_position(data, at)}")


def line_place(number: int) -> Place:
    """Line `number` of a JSON-lines file: `line N: `, offsets named ` at column C` (bytes, from 1)."""
    return Place(f"line {number}: ", lambda at: f" at column {at + 1}")


def decode_document(data: bytes, what: str) -> Any:
    """A whole JSON document (a chat-JSON transcript, a Gemini CLI session file)."""
    try:
        return decode_json(data)
    except (msgspec.DecodeError, ValueError, RecursionError) as exc:
        refused = unreadable(data, exc, document_place(data), what)
        raise (refused or TranscriptError(f"not JSON: invalid at {json_position(data, exc)}")) from None


def decode_string(text: str, where: str, what: str) -> Any:
    """JSON held in a string field (`where`, e.g. `messages[3].tool_calls[0].function.arguments`)."""
    try:
        return decode_json(text)
    except (msgspec.DecodeError, ValueError, RecursionError) as exc:
        data = text.encode("utf-8", "surrogatepass")
        refused = unreadable(data, exc, Place(f"{where}: ", lambda at: f" at character {at + 1}"), what)
        raise (refused or TranscriptError(f"{where} is not valid JSON")) from None


def _struct(data: bytes, decoder: msgspec.json.Decoder[T]) -> T | None:
    """`data` as the decoder's Struct in the room every reader gets; None when msgspec refuses it otherwise than
    for its shape (lone surrogates, bytes that are not UTF-8, a syntax error, an integer too long, a level
    more than the room, which the Struct costs): `decode_json`, JSON.parse's rules and the exact limit, decides.
    msgspec.ValidationError (JSON of another shape) propagates."""
    try:
        try:
            return decoder.decode(data)  # where it stands first: a line of a few levels pays nothing more
        except RecursionError:
            return in_room(MAX_NESTING, lambda: decoder.decode(data))
    except msgspec.ValidationError as exc:
        if "out of range" not in str(exc):
            raise
    except (msgspec.DecodeError, RecursionError):
        pass
    return None


def decode_line(number: int, raw: bytes, decoder: msgspec.json.Decoder[T], from_dict: Callable[[dict[str, Any]], T],
                what: str) -> T:
    """One line as the `decoder`'s Struct (its large fields left as msgspec.Raw); JSON that msgspec refuses
    (lone surrogates) is decoded as JSON.parse would and handed to `from_dict`.  `what` names the format."""
    try:
        decoded = _struct(raw, decoder)
        if decoded is not None:
            return decoded
        value = decode_json(raw)
    except msgspec.ValidationError as exc:
        if "out of range" in str(exc):  # the fallback's own refusal of an integer too long
            raise (unreadable(raw, exc, line_place(number), what) or TranscriptError(
                f"line {number}: not valid JSON")) from None
        raise TranscriptError(f"line {number}: not a JSON object (each line must be one)") from None
    except (msgspec.DecodeError, ValueError, RecursionError) as exc:
        raise (unreadable(raw, exc, line_place(number), what) or TranscriptError(
            f"line {number}: not valid JSON")) from None
    if not isinstance(value, dict):
        raise TranscriptError(f"line {number}: not a JSON object (each line must be one)")
    return from_dict(value)


def decode_field(number: int, raw: Any, decoder: msgspec.json.Decoder[T], from_dict: Callable[[dict[str, Any]], T],
                 field: str, what: str) -> T:
    """A line's object field (`message`, `payload`) as the `decoder`'s Struct: from its msgspec.Raw bytes, or
    from the value the line's fallback decoding already produced."""
    if isinstance(raw, msgspec.Raw):
        if not raw:
            raise TranscriptError(f"line {number}: `{field}` is missing")
        data = bytes(raw)
        place = Place(f"line {number}: `{field}`: ", lambda _: "")  # its offsets are the field's own
        try:
            decoded = _struct(data, decoder)
            if decoded is not None:
                return decoded
            raw = decode_json(data)  # lone surrogates: the line already parsed as JSON
        except msgspec.ValidationError as exc:
            if "out of range" in str(exc):
                raise (unreadable(data, exc, place, what) or TranscriptError(
                    f"line {number}: `{field}` is not valid JSON")) from None
            raise TranscriptError(f"line {number}: `{field}` must be an object") from None
        except UnicodeDecodeError:
            raise TranscriptError(f"line {number}: `{field}` holds bytes that are not UTF-8 text, so the file "
                                  f"is damaged or not {what}") from None
        except (msgspec.DecodeError, ValueError, RecursionError) as exc:
            raise (unreadable(data, exc, place, what) or TranscriptError(
                f"line {number}: `{field}` is not valid JSON")) from None
    if not isinstance(raw, dict):
        raise TranscriptError(f"line {number}: `{field}` must be an object")
    return from_dict(raw)
