"""What every importer shares: its error, ISO time → ms, "JSON when it is JSON", and the check before writing.

An import writes only a cassette that passes verify and holds no API key from the environment (docs/format.md,
"Import"):
a transcript is someone else's file, so it is checked like any recording before it becomes a cassette.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from blackbox.canonical import decode_json
from blackbox.cassette import Cassette, text_position
from blackbox.errors import BlackboxError
from blackbox.writing import dumps

__all__ = [
    "DEFAULT_TRACE_ID",
    "NOTHING_WRITTEN",
    "TranscriptError",
    "check_writable",
    "iso_ms",
    "json_or_text",
    "json_position",
]

DEFAULT_TRACE_ID = "imported"
NOTHING_WRITTEN = "Nothing was written."

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


class TranscriptError(BlackboxError):
    """A transcript cannot become a cassette; the message names a line or position, never content."""


def iso_ms(value: Any) -> int | None:
    """Milliseconds since the epoch of an ISO-8601 time (as `Date.parse`), or None when it is not one.

    A time without an offset is taken as UTC, so an import never depends on the machine's time zone.
    """
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MS


_NOT_JSON = object()


def json_or_text(text: str) -> Any:
    """The JSON value `text` holds when it parses as JSON (JSON.parse rules), else `text` itself."""
    stripped = text.strip(" \t\r\n")
    if not stripped:
        return text
    try:
        return decode_json(stripped)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return text


_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)")


def json_position(data: bytes, exc: Exception) -> str:
    """`line L, column C` of a JSON decode error, or `the end of the file` when it was truncated."""
    message = str(exc)
    match = _BYTE_OFFSET.search(message)
    if match is None or "truncated" in message:
        return "the end of the file"
    return text_position(data, int(match.group(1)))


def check_writable(cassette: Cassette, env: Mapping[str, str] | None = None) -> bytes:
    """The cassette's bytes when it holds no environment API key and passes verify; else TranscriptError."""
    from blackbox.secrets import contains_key_value, key_values
    from blackbox.verify import verify

    environ = os.environ if env is None else env
    data = dumps(cassette)
    keys = key_values(environ)
    if keys and contains_key_value(data.decode("utf-8", "surrogatepass"), keys):
        raise TranscriptError("the transcript holds the value of an API key from the environment; remove it "
                              "from the transcript first")
    report = verify(cassette, env=environ)
    if not report.ok:
        failure = report.failure
        name = failure.name if failure is not None else "verify"
        where = f" at step {failure.step}" if failure is not None and failure.step is not None else ""
        detail = f": {failure.detail}" if failure is not None and failure.detail else ""
        raise TranscriptError(f"the imported cassette fails verify ({name}{where}{detail}); remove that data "
                              "from the transcript, or report a bug if the transcript is sound")
    return data
