"""`Tokens`, what one model call cost in tokens (docs/format.md, "Token usage"): a step-level field of a
`model_output` step, written after `hash`.

It lives outside the payload on purpose: the hash covers only index, type, timestamp, payload and prevHash, so
the counts (which differ on every run) change no hash, never take part in replay matching or diff, and the
original tool, which ignores fields it does not know, reads the cassette unchanged.  The key names are not
among the names verify flags.  Ground floor: imports nothing of Blackbox, so the providers may build it.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

__all__ = ["MAX_COUNT", "Count", "Tokens", "count", "tokens_of", "tokens_problem"]

#: The largest count kept: 2^53, the last integer every JSON reader (JavaScript's included) holds exactly.
MAX_COUNT = 1 << 53
#: A token count, 0 to 2^53 (a file holding anything else is refused on load, naming the field).
Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]


class Tokens(msgspec.Struct, omit_defaults=True, frozen=True):
    """One model call's token counts, neutral across providers.

    `input` counts every input token, cached ones included (read from or written to a prompt cache), and
    `output` every output token, reasoning included: the OpenTelemetry GenAI meaning of `input_tokens` /
    `output_tokens`.  `cacheRead`, `cacheWrite` and `reasoning` are the parts of those a provider reports."""

    input: Count
    output: Count
    cacheRead: Count | None = None
    cacheWrite: Count | None = None
    reasoning: Count | None = None

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.input + other.input, self.output + other.output,
                      _sum(self.cacheRead, other.cacheRead), _sum(self.cacheWrite, other.cacheWrite),
                      _sum(self.reasoning, other.reasoning))


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def count(value: Any) -> int | None:
    """`value` as a token count when it is one (a non-negative integer, never a bool), else None: a provider's
    usage object is not ours to trust, and an odd value drops the count, never the recording."""
    if type(value) is int:  # the usual case, told first (a bool is not of type int)
        return value if 0 <= value <= MAX_COUNT else None
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if 0 <= value <= MAX_COUNT else None


def tokens_of(input_: Any, output: Any, *, cache_read: Any = None, cache_write: Any = None,
              reasoning: Any = None) -> Tokens | None:
    """`Tokens` from a provider's numbers, or None when input or output is missing or not a count (the other
    parts are dropped one by one when they are not counts)."""
    i, o = count(input_), count(output)
    if i is None or o is None:
        return None
    return Tokens(i, o, None if cache_read is None else count(cache_read),
                  None if cache_write is None else count(cache_write), None if reasoning is None else count(reasoning))


_REMEDY = "token counts are not hashed: re-record the run, or delete the step's `tokens` field"


def tokens_problem(missing: str | None, field: str | None) -> str:
    """What is wrong with a step's `tokens` (the loader's words after "step N"): a count `missing`, the field not
    an object of counts, or `field` not a count — never the value."""
    if missing:
        return f"field `tokens` has no `{missing}` count; {_REMEDY}"
    if field is None:
        return f"field `tokens` must be an object of token counts; {_REMEDY}"
    return f"field `tokens.{field}` must be a whole number from 0 to 2^53; {_REMEDY}"
