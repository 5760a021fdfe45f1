"""Known API keys and credential patterns: masking for messages, the patterns verify uses, and `Secrets`, the
keys one session has seen (from the environment and the requests' key headers).

JavaScript regular expressions are reproduced: `\\b` is ASCII (`re.ASCII`), and `\\s` is JavaScript's
whitespace set, spelled out, because Python's differs from it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping

from blackbox.apis import API_FACTS, GATEWAY_KEY_HEADERS
from blackbox.wire import Request

__all__ = [
    "CREDENTIAL_PATTERNS",
    "CREDENTIAL_SHAPES",
    "FLAGGED_KEYS",
    "KEY_HEADERS",
    "KEY_PIECE",
    "KEY_QUERY",
    "KEY_VARIABLES",
    "MIN_KEY_LENGTH",
    "PLACEHOLDER_KEYS",
    "PROVIDER_ID_PATTERNS",
    "REALISTIC_CREDENTIAL_PATTERNS",
    "USER_DATA_KEYS",
    "KeySearch",
    "Secrets",
    "contains_key_value",
    "key_values",
    "mask_secrets",
    "masker",
    "replay_placeholders",
]

#: Every API's key variables, in the table's order (`apis.API_FACTS`).
KEY_VARIABLES: tuple[str, ...] = tuple(dict.fromkeys(v for api in API_FACTS for v in api.key_variables))
#: The request headers an SDK or a gateway sends its key in (lower case).
KEY_HEADERS: tuple[str, ...] = tuple(dict.fromkeys(
    [h for api in API_FACTS for h in api.key_headers] + list(GATEWAY_KEY_HEADERS)))
#: Query parameters that carry a key (Gemini's `?key=`).
KEY_QUERY: tuple[str, ...] = tuple(dict.fromkeys(q for api in API_FACTS for q in api.key_query))
#: Shorter "keys" would match ordinary text, so they are neither searched for nor masked.
MIN_KEY_LENGTH = 8
#: A piece of a key this long is as secret as the key (a tool result holding 95% of a key leaks it).
KEY_PIECE = 20
# Set by the launcher in replay and scripted forks so SDK constructors that demand a key succeed; never sent
# anywhere, so never a secret.
PLACEHOLDER_KEYS: Mapping[str, str] = {name: "blackbox-replay-placeholder" for name in KEY_VARIABLES}


def replay_placeholders(env: Mapping[str, str]) -> dict[str, str]:
    """The variables replay sets so every SDK starts with no key in `env`: for each API none of whose key
    variables is set, a placeholder in the one its SDKs read; each start setting an API's SDK demands
    (Azure's `OPENAI_API_VERSION`, `AZURE_OPENAI_ENDPOINT`) that is unset.  None is a secret."""
    out: dict[str, str] = {}
    for api in API_FACTS:
        if not any(env.get(name) for name in api.key_variables):
            name = api.placeholder_variable or api.key_variables[0]
            out[name] = PLACEHOLDER_KEYS[name]
        out.update((name, value) for name, value in api.start_settings if not env.get(name))
    return out
REDACTED = "[redacted]"

_JS_SPACE = r"[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"

# Below these keys a value is the user's data: only realistic credentials are flagged there.
USER_DATA_KEYS: frozenset[str] = frozenset({
    "responseFormat", "outputConfig", "prediction", "toolInput", "result", "error", "inputSchema", "text",
    "content", "systemPrompt",
})
# Keys that only a provider's raw response (or a leaked environment) would hold.
FLAGGED_KEYS: frozenset[str] = frozenset(
    [field for api in API_FACTS for field in api.provider_fields] + list(KEY_VARIABLES))


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.ASCII)


# (name shown in reports, pattern); the name never contains the matched text.
PROVIDER_ID_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, _compile(pattern)) for api in API_FACTS for what, pattern in api.id_patterns)
_BEARER = r"\bBearer" + _JS_SPACE + r"+[A-Za-z0-9._~+/=-]{16,}"
#: The one table of credential shapes (docs/format.md, "Provider neutrality"): what a report calls each, the
#: detector of `blackbox.redaction` that masks it (its matches are that detector's too, so a policy with the
#: detector never leaves one for the key check to refuse), the pattern refused anywhere (user data
#: included) and the looser one refused outside user data.
CREDENTIAL_SHAPES: tuple[tuple[str, str, str, str], ...] = (
    ("an Anthropic API key (sk-ant-…)", "cloud-key", r"sk-ant-[A-Za-z0-9_-]{20,}", r"sk-ant-?[A-Za-z0-9_-]*"),
    ("an OpenAI project key (sk-proj-…)", "cloud-key", r"sk-proj-[A-Za-z0-9_-]{20,}", r"sk-proj-[A-Za-z0-9_-]*"),
    ("an API key (sk-…)", "cloud-key", r"sk-[A-Za-z0-9_-]{32,}", r"\bsk-[A-Za-z0-9_-]{20,}"),
    ("a bearer token", "credential", _BEARER, _BEARER),
    ("a Google API key (AIza…)", "cloud-key", r"\bAIza[0-9A-Za-z_-]{35}", r"\bAIza[0-9A-Za-z_-]{35}"),
)
CREDENTIAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    *((label, _compile(outside)) for label, _, _, outside in CREDENTIAL_SHAPES),
    ("an API key variable name", _compile("|".join(KEY_VARIABLES))),
)
REALISTIC_CREDENTIAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, _compile(anywhere)) for label, _, anywhere, _ in CREDENTIAL_SHAPES)
# What mask_secrets replaces: every credential pattern but the variable names, longest forms first.
_MASK = re.compile(
    "|".join(p.pattern for _, p in CREDENTIAL_PATTERNS[:-1]), re.ASCII
)
_KEY_HEADER_BYTES = frozenset(name.encode("latin-1") for name in KEY_HEADERS)
#: A whole header value that is a credential by its shape: learned as a key whatever the header's name.
_KEY_SHAPED = re.compile(
    "|".join(f"(?:{p.pattern})" for _, p in REALISTIC_CREDENTIAL_PATTERNS), re.ASCII
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
    return masker(env, extra)(text)


def masker(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> Callable[[str], str]:
    """`mask_secrets` with the key values read once: for a printer that masks a line per step."""
    values = key_values(env, extra)
    sub = _MASK.sub

    def masked(text: str) -> str:
        for value in values:
            if value in text:
                text = text.replace(value, REDACTED)
        return sub(REDACTED, text)

    return masked


class Secrets:
    """The API key values one session has seen: its environment's keys (not the launcher's placeholders) and
    every key an SDK sent in a key header.  Masking, and the byte forms the recorder searches steps for."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._values: set[str] = set()
        self._tuple: tuple[str, ...] = ()
        self._last_headers: list[tuple[str, str]] | None = None
        self._last_raw: list[tuple[bytes, bytes, bytes]] | None = None  # the previous request's raw headers
        self._search: KeySearch | None = None
        #: Whether a request has shown its key headers: before that, a key given only to the SDK client
        #: (not in the environment) is unknown, so the recorder holds its journal back until then.
        self.requests_seen = False
        source = os.environ if env is None else env
        for name in KEY_VARIABLES:
            value = source.get(name)
            if value and value != PLACEHOLDER_KEYS.get(name):
                self._add(value)

    @classmethod
    def known(cls, keys: Iterable[str] = ()) -> Secrets:
        """Exactly these keys, known now (no request to wait for): a recorder outside a session."""
        secrets = cls({})
        for key in keys:
            secrets._add(key)
        secrets.requests_seen = True
        return secrets

    def _add(self, value: str) -> None:
        if value not in self._values:
            self._values.add(value)
            self._tuple = tuple(self._values)

    def note_headers(self, headers: list[tuple[str, str]]) -> None:
        """Learn the key of a request's key headers (lower-case names); `Bearer ` is not part of the key."""
        self.requests_seen = True
        if headers == self._last_headers:  # an SDK client sends the same key with every request
            return
        self._last_headers = headers
        for name, value in headers:
            if name.lower() in KEY_HEADERS:
                self._learn(value)

    def note_request(self, request: Request) -> None:
        """Learn every key a request carries: its key headers (an API's or a gateway's), any header whose
        whole value is shaped like a credential, and its key query parameters (Gemini's `?key=`).

        An SDK client sends the same headers in the same order with every request: a header pair equal to
        the one at its place in the previous request was judged then, so only the pairs that changed (the
        content length, a retry count) are judged again, and none is decoded unless it carries a key."""
        self.requests_seen = True
        headers, last = request.raw_headers, self._last_raw
        if headers != last:
            self._last_raw = headers
            changed = headers if last is None or len(last) != len(headers) else [
                pair for pair, before in zip(headers, last, strict=True) if pair != before]
            for _, lower, raw in changed:
                if lower in _KEY_HEADER_BYTES or (
                        len(raw) >= MIN_KEY_LENGTH and _KEY_SHAPED.fullmatch(raw.decode("latin-1").strip())):
                    self._learn(raw.decode("latin-1"))
        if request.has_query:
            for name, value in request.query:
                if name in KEY_QUERY:
                    self._learn(value)

    def _learn(self, value: str) -> None:
        """A key header's value: the key, less a `Bearer ` scheme."""
        secret = (value[7:] if value[:7].lower() == "bearer " else value).strip()
        if secret:
            self._add(secret)

    def values(self) -> tuple[str, ...]:
        """Every key seen so far (the same tuple object until a new key arrives)."""
        return self._tuple

    def mask(self, text: str) -> str:
        """`text` with every key seen, and every credential pattern, redacted."""
        return mask_secrets(text, extra=self._tuple)

    def search(self) -> KeySearch:
        """A `KeySearch` for every key seen so far (the same object until a new key arrives)."""
        if self._search is None or self._search.keys != self._tuple:
            self._search = KeySearch(self._tuple)
        return self._search


class KeySearch:
    """Finds a key, or any `KEY_PIECE`-character piece of one, in encoded text (UTF-8 bytes).

    Each key is cut into tiles of half a piece at every half-piece offset; any piece of the key contains a
    whole tile, so a leak is found by searching for the few tiles (a fast `bytes.find` each) and, at a hit,
    measuring how far the text goes on matching the key on both sides."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = tuple(keys)
        self._whole: list[bytes] = []
        self._tiles: list[tuple[bytes, bytes, int]] = []  # (tile, key, offset of the tile in the key)
        step = KEY_PIECE // 2
        for key in self.keys:
            raw = key.encode("utf-8", "surrogatepass")
            if len(raw) < MIN_KEY_LENGTH:
                continue
            if len(raw) <= KEY_PIECE:
                self._whole.append(raw)
                continue
            self._tiles.extend((raw[at:at + step], raw, at) for at in range(0, len(raw) - step + 1, step))

    def __bool__(self) -> bool:
        return bool(self._whole or self._tiles)

    def found_in(self, data: bytes) -> bool:
        """Whether `data` holds a whole key or a `KEY_PIECE`-byte piece of one."""
        if any(whole in data for whole in self._whole):
            return True
        for tile, key, at in self._tiles:
            hit = data.find(tile)
            while hit != -1:
                if _matched(data, hit, key, at, len(tile)) >= KEY_PIECE:
                    return True
                hit = data.find(tile, hit + 1)
        return False


def _matched(data: bytes, hit: int, key: bytes, at: int, size: int) -> int:
    """How many bytes around `data[hit:hit+size]` (= `key[at:at+size]`) go on matching `key`."""
    left = 0
    while left < at and left < hit and data[hit - left - 1] == key[at - left - 1]:
        left += 1
    right = 0
    while at + size + right < len(key) and hit + size + right < len(data) and \
            data[hit + size + right] == key[at + size + right]:
        right += 1
    return left + size + right
