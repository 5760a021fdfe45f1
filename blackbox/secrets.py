"""Known API keys and credential patterns: masking for messages, the patterns verify uses, and `Secrets`, the
keys one session has seen (from the environment and the requests' key headers).

JavaScript regular expressions are reproduced: `\\b` is ASCII (`re.ASCII`), and `\\s` is JavaScript's
whitespace set, spelled out, because Python's differs from it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = [
    "CREDENTIAL_PATTERNS",
    "FLAGGED_KEYS",
    "KEY_HEADERS",
    "KEY_VARIABLES",
    "MIN_KEY_LENGTH",
    "PLACEHOLDER_KEYS",
    "PROVIDER_ID_PATTERNS",
    "REALISTIC_CREDENTIAL_PATTERNS",
    "USER_DATA_KEYS",
    "Secrets",
    "contains_key_value",
    "holds_any",
    "key_values",
    "mask_secrets",
    "searchable",
]

KEY_VARIABLES: tuple[str, ...] = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
#: The request headers an SDK sends its key in (lower case).
KEY_HEADERS: tuple[str, ...] = ("x-api-key", "api-key", "authorization")
#: Shorter "keys" would match ordinary text, so they are neither searched for nor masked.
MIN_KEY_LENGTH = 8
# Set by the launcher in replay and scripted forks so SDK constructors that demand a key succeed; never sent
# anywhere, so never a secret.
PLACEHOLDER_KEYS: Mapping[str, str] = {name: "blackbox-replay-placeholder" for name in KEY_VARIABLES}
REDACTED = "[redacted]"

_JS_SPACE = r"[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"

# Below these keys a value is the user's data: only realistic credentials are flagged there.
USER_DATA_KEYS: frozenset[str] = frozenset({
    "responseFormat", "outputConfig", "prediction", "toolInput", "result", "error", "inputSchema", "text",
    "content", "systemPrompt",
})
# Keys that only a provider's raw response (or a leaked environment) would hold.
FLAGGED_KEYS: frozenset[str] = frozenset({
    "usage", "stop_reason", "stop_sequence", "finish_reason", "system_fingerprint", *KEY_VARIABLES,
})


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.ASCII)


# (name shown in reports, pattern); the name never contains the matched text.
PROVIDER_ID_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an Anthropic tool-use id (toolu_…)", _compile(r"\btoolu_[A-Za-z0-9]*\d")),
    ("an Anthropic message id (msg_…)", _compile(r"\bmsg_[A-Za-z0-9]*\d")),
    ("an OpenAI call id (call_…)", _compile(r"\bcall_[A-Za-z0-9]{20,}")),
    ("an OpenAI completion id (chatcmpl-…)", _compile(r"\bchatcmpl-[A-Za-z0-9]{8,}")),
    ("an OpenAI response id (resp_…)", _compile(r"\bresp_[A-Za-z0-9]{16,}")),
)
CREDENTIAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an Anthropic API key (sk-ant-…)", _compile(r"sk-ant-?[A-Za-z0-9_-]*")),
    ("an OpenAI project key (sk-proj-…)", _compile(r"sk-proj-[A-Za-z0-9_-]*")),
    ("an API key (sk-…)", _compile(r"\bsk-[A-Za-z0-9_-]{20,}")),
    ("a bearer token", _compile(r"\bBearer" + _JS_SPACE + r"+[A-Za-z0-9._~+/=-]{16,}")),
    ("an API key variable name", _compile("|".join(KEY_VARIABLES))),
)
REALISTIC_CREDENTIAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an Anthropic API key (sk-ant-…)", _compile(r"sk-ant-[A-Za-z0-9_-]{20,}")),
    ("an OpenAI project key (sk-proj-…)", _compile(r"sk-proj-[A-Za-z0-9_-]{20,}")),
    ("an API key (sk-…)", _compile(r"sk-[A-Za-z0-9_-]{32,}")),
    ("a bearer token", _compile(r"\bBearer" + _JS_SPACE + r"+[A-Za-z0-9._~+/=-]{16,}")),
)
# What mask_secrets replaces: every credential pattern, longest forms first.
_MASK = re.compile(
    "|".join(p.pattern for _, p in CREDENTIAL_PATTERNS[:4]), re.ASCII
)


def key_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """The API key values to look for: the key variables of `env` (default the process's), then `extra`."""
    source = os.environ if env is None else env
    values = [source.get(name, "") for name in KEY_VARIABLES] + list(extra)
    # Longest first, so that a key containing another is masked whole.
    return sorted({v for v in values if len(v) >= MIN_KEY_LENGTH}, key=len, reverse=True)


def contains_key_value(text: str, values: Iterable[str]) -> bool:
    return any(v in text for v in values)


def mask_secrets(text: str, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> str:
    """`text` with known key values, then credential patterns, replaced by `[redacted]`."""
    for value in key_values(env, extra):
        text = text.replace(value, REDACTED)
    return _MASK.sub(REDACTED, text)


class Secrets:
    """The API key values one session has seen: its environment's keys (not the launcher's placeholders) and
    every key an SDK sent in a key header.  Masking, and the byte forms the recorder searches steps for."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._values: set[str] = set()
        self._tuple: tuple[str, ...] = ()
        self._last_headers: list[tuple[str, str]] | None = None
        source = os.environ if env is None else env
        for name in KEY_VARIABLES:
            value = source.get(name)
            if value and value != PLACEHOLDER_KEYS.get(name):
                self._add(value)

    def _add(self, value: str) -> None:
        if value not in self._values:
            self._values.add(value)
            self._tuple = tuple(self._values)

    def note_headers(self, headers: list[tuple[str, str]]) -> None:
        """Learn the key of a request's key headers (lower-case names); `Bearer ` is not part of the key."""
        if headers == self._last_headers:  # an SDK client sends the same key with every request
            return
        self._last_headers = headers
        for name, value in headers:
            if name.lower() in KEY_HEADERS and value:
                secret = value[7:] if value.lower().startswith("bearer ") else value
                if secret.strip():
                    self._add(secret.strip())

    def values(self) -> tuple[str, ...]:
        """Every key seen so far (the same tuple object until a new key arrives)."""
        return self._tuple

    def mask(self, text: str) -> str:
        """`text` with every key seen, and every credential pattern, redacted."""
        return mask_secrets(text, extra=self._tuple)


def searchable(values: Iterable[str]) -> tuple[bytes, ...]:
    """The keys long enough to look for, as UTF-8 bytes (for searching encoded steps)."""
    return tuple(v.encode() for v in values if len(v) >= MIN_KEY_LENGTH)


def holds_any(data: bytes, needles: Iterable[bytes]) -> bool:
    """Whether `data` contains one of `needles` (see `searchable`)."""
    return any(needle in data for needle in needles)
