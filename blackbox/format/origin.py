"""Where a model call's answer and a cassette came from (docs/format.md, "Origin"): two unhashed fields.

- `Origin`, a step-level field of a `model_output` Blackbox recorded from a provider's answer, after `tokens`:
  which API answered (`api`, the provider's registry name), the model it answered with, its response id and
  the provider's ids of the output's tool calls.  Replay hands those ids back, so an agent sees what it saw
  when it was recorded; what-if continues with the API the run used; drift reports compare the models.
- `Made`, a top-level field: when the file was made, by which Blackbox, Python and SDK versions.

Both live outside the hash, like `tokens` (only index, type, timestamp, payload and prevHash are hashed), so
cassettes keep the original's format and hashes and the original, which ignores fields it does not know,
reads them unchanged.  Its neutrality check walks every string of the file, so a provider id is written
escaped (`escape_id`): every character but a letter, a digit and `.` as `%XX`.  Every pattern that check
flags needs a `_`, a `-` or a space, so no escaped id can be flagged; one that still would be (a pattern made
only of letters and digits) is not kept at all.  Ground floor of the format wing: the loader imports it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec

from blackbox.format import secrets

__all__ = ["Made", "Origin", "escape_id", "origin_of", "unescape_id", "unhashed_problem"]

_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.")
_HEX = frozenset("0123456789ABCDEFabcdef")
#: An escaped id is kept only up to this length (a provider's ids are far shorter; a huge one is not an id).
MAX_ID = 512

Name = Annotated[str, msgspec.Meta(max_length=MAX_ID)]


class Origin(msgspec.Struct, omit_defaults=True, frozen=True):
    """Who answered one model call.  Each field is present only when known.

    `api` is the provider's registry name (`anthropic`, `openai`, `responses`, `azure`, `gemini`, …), `model`
    the model the answer names (which may be more precise than the one requested), `responseId` the answer's
    id and `toolCallIds` the provider's id of each of the output's calls in call order (`None` where the API
    gave none); the two ids are escaped (`escape_id`)."""

    api: Name | None = None
    model: Name | None = None
    responseId: Name | None = None
    toolCallIds: tuple[Name | None, ...] | None = None
    # On a `tool_result`: where the tool returned whole-valued floats (`21.0`, which the JSON writes `21`), as
    # escaped JSON Pointers into the payload, so replay hands them back as floats (`whole_floats`).
    floats: tuple[Name, ...] | None = None

    def call_ids(self) -> list[str | None]:
        """The provider's tool-call ids as the API gave them (an id that cannot be read back is `None`)."""
        return [None if found is None else unescape_id(found) for found in self.toolCallIds or ()]

    def response_id(self) -> str | None:
        return None if self.responseId is None else unescape_id(self.responseId)


class Made(msgspec.Struct, omit_defaults=True, frozen=True):
    """When and with what a cassette was made: `at` (milliseconds since the epoch, when the file was written),
    the Blackbox and Python versions, and the version of each SDK or framework the process had loaded."""

    at: int
    blackbox: Name | None = None
    python: Name | None = None
    packages: dict[Name, Name] | None = None


def escape_id(text: str) -> str:
    """`text` with every character but an ASCII letter, a digit and `.` written as `%XX` (its UTF-8 bytes):
    `toolu_01A` → `toolu%5F01A`.  Reversible (`unescape_id`)."""
    if all(char in _PLAIN for char in text):
        return text
    return "".join(char if char in _PLAIN else "".join(f"%{byte:02X}" for byte in
                                                       char.encode("utf-8", "surrogatepass")) for char in text)


def unescape_id(text: str) -> str | None:
    """The id `escape_id` wrote, or None when `text` is not such an escape (a hand-edited file)."""
    if "%" not in text:
        return text if all(char in _PLAIN for char in text) else None
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%":
            pair = text[i + 1:i + 3]
            if len(pair) != 2 or not set(pair) <= _HEX:
                return None
            out.append(int(pair, 16))
            i += 3
        elif char in _PLAIN:
            out.append(ord(char))
            i += 1
        else:
            return None
    try:
        return out.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


def _kept(value: Any) -> str | None:
    """A provider id as the field keeps it: escaped, or None when it is not a usable id (not a string, empty,
    too long) or when even escaped it is a string verify would flag."""
    if not isinstance(value, str) or not value:
        return None
    escaped = escape_id(value)
    if len(escaped) > MAX_ID or _flagged(escaped):
        return None
    return escaped


def _flagged(text: str) -> bool:
    return any(pattern.search(text) for _, pattern in (*secrets.PROVIDER_ID_PATTERNS, *secrets.CREDENTIAL_PATTERNS))


def _name(value: Any) -> str | None:
    """An API or model name as kept: a string verify would not flag, else None."""
    return value if isinstance(value, str) and value and len(value) <= MAX_ID and not _flagged(value) else None


def origin_of(api: str | None, model: Any, response_id: Any, call_ids: list[Any] | None) -> Origin | None:
    """The `Origin` of one answer from what the provider's response said (values that are not usable are left
    out); None when nothing is known."""
    ids = None if call_ids is None else tuple(_kept(found) for found in call_ids)
    origin = Origin(_name(api), _name(model), _kept(response_id), ids if ids else None)
    return None if origin == Origin() else origin


_UNHASHED = re.compile(r"\$\.(?:steps\[(\d+)\]\.)?((?:origin|made)\b[^ ]*)")


def unhashed_problem(path: str) -> str | None:
    """What is wrong at `path` (msgspec's `$.steps[3].origin.model`, `$.made.at`) when it is inside a step's
    `origin` or the top-level `made`, naming the step and the field, never the value; None elsewhere."""
    found = _UNHASHED.fullmatch(path)
    if found is None or (found.group(1) is None) != found.group(2).startswith("made"):
        return None
    step = f"step {found.group(1)} " if found.group(1) is not None else ""
    return (f"{step}field `{found.group(2)}` is not what Blackbox writes there; the field is not hashed: "
            "re-record the run, or delete it")
