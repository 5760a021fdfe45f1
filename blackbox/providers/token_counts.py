"""Each API's usage object → neutral `Tokens` (docs/format.md, "Token usage"): pure, one function per wire format.

They read the response body the API sends unstreamed; a stream's assembler rebuilds that same body (its usage
included), so a streamed and an unstreamed call of one run keep the same counts.  `input` counts cached input
too and `output` reasoning too, whatever the API's own split (Anthropic's `input_tokens` leaves the cache out;
Gemini's `candidatesTokenCount` leaves the thoughts out).  A missing or odd usage object gives None: the counts
are dropped, never the recording.
"""

from __future__ import annotations

from typing import Any

from blackbox.format.tokens import Tokens, count, tokens_of

__all__ = ["anthropic", "gemini", "openai_chat", "responses"]


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _plus(first: Any, *rest: Any) -> int | None:
    """The sum of the counts among `first` and `rest`; None when `first` is not a count."""
    total = count(first)
    if total is None:
        return None
    for value in rest:
        part = None if value is None else count(value)
        if part is not None:
            total += part
    return total


def anthropic(body: dict[str, Any]) -> Tokens | None:
    """Messages `usage`: `input_tokens` excludes the cache, so the cache reads and writes are added to it."""
    usage = _object(body.get("usage"))
    read, write = usage.get("cache_read_input_tokens"), usage.get("cache_creation_input_tokens")
    return tokens_of(_plus(usage.get("input_tokens"), read, write), usage.get("output_tokens"),
                     cache_read=read, cache_write=write)


def openai_chat(body: dict[str, Any]) -> Tokens | None:
    """Chat Completions `usage` (a stream has it only when the request asked, `stream_options.include_usage`)."""
    usage = _object(body.get("usage"))
    return tokens_of(usage.get("prompt_tokens"), usage.get("completion_tokens"),
                     cache_read=_object(usage.get("prompt_tokens_details")).get("cached_tokens"),
                     reasoning=_object(usage.get("completion_tokens_details")).get("reasoning_tokens"))


def responses(body: dict[str, Any]) -> Tokens | None:
    """Responses API `usage` (a stream's is in its `response.completed` event)."""
    usage = _object(body.get("usage"))
    details = _object(usage.get("input_tokens_details"))
    return tokens_of(usage.get("input_tokens"), usage.get("output_tokens"), cache_read=details.get("cached_tokens"),
                     cache_write=details.get("cache_write_tokens"),
                     reasoning=_object(usage.get("output_tokens_details")).get("reasoning_tokens"))


def gemini(body: dict[str, Any]) -> Tokens | None:
    """`usageMetadata`: proto3 JSON leaves out a count of 0, so only the prompt count must be there; the
    thoughts are output tokens the candidates' count leaves out, the tool-use prompt input it leaves out."""
    usage = _object(body.get("usageMetadata"))
    thoughts = usage.get("thoughtsTokenCount")
    return tokens_of(_plus(usage.get("promptTokenCount"), usage.get("toolUsePromptTokenCount")),
                     _plus(usage.get("candidatesTokenCount", 0), thoughts),
                     cache_read=usage.get("cachedContentTokenCount"), reasoning=thoughts)
