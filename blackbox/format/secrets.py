"""Known API keys and credential patterns: masking for messages, the patterns verify uses, and `Secrets`, the
keys one session has seen (from the environment and the requests' key headers).

JavaScript regular expressions are reproduced: `\\b` is ASCII (`re.ASCII`), and `\\s` is JavaScript's
whitespace set, spelled out, because Python's differs from it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from blackbox.apis import API_FACTS, GATEWAY_KEY_HEADERS
from blackbox.wire import Request

if TYPE_CHECKING:
    from blackbox.format.cassette import Cassette

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
    "squeezed",
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


#: What may stand between two characters of a key and still leave it the key to a reader: ASCII whitespace and
#: control characters, and every character beyond ASCII (keys are ASCII; this covers the Unicode spaces, the
#: zero-width spaces and joiners, direction marks, the soft hyphen and the byte-order mark, and any other
#: character laced between a key's).  A key wrapped at a line end, spaced out or laced with zero-width spaces
#: is still the key.
_DROPPED = bytes(range(0x21)) + bytes(range(0x80, 0x100))
#: One of those as a JSON escape, at any depth of JSON held in strings (`\n`, `\\n`, `\u200b`, `\u0000`).
_ESCAPED_GAP = re.compile(rb"\\\\*(?:[nrtfb]|u(?!00[2-7])[0-9a-fA-F]{4})")
#: A character a key may hold, written as a JSON escape (`\u0041`, `\/`), at any depth.
_ESCAPED_CHARACTER = re.compile(rb"\\\\*(?:u00([2-7][0-9a-fA-F])|(/))")
#: `found_in` reads long data in windows of this size (so the squeezed copy stays small), each window joined
#: to the end of the one before so that a piece across the border is still whole.
_WINDOW = 1 << 22


def _unescaped(match: re.Match[bytes]) -> bytes:
    return bytes([int(match.group(1), 16)]) if match.group(1) is not None else b"/"


def squeezed(data: bytes) -> bytes:
    """`data` as a reader would take a key from it: every byte that cannot be part of a key (`_DROPPED`, or
    such a character as a JSON escape at any depth of JSON held in strings) removed, and the characters a key
    may hold written as escapes written plainly.  Two passes over `data` at most, both in C."""
    out = data.translate(None, _DROPPED)
    if b"\\" in out:
        out = _ESCAPED_GAP.sub(b"", out)
        if b"\\u00" in out or b"\\/" in out:
            out = _ESCAPED_CHARACTER.sub(_unescaped, out)
    return out


def _safe_cut(data: bytes, at: int) -> int:
    """A place at or before `at` where cutting `data` splits no JSON escape (no backslash in the eight bytes
    before it); `len(data)` when there is none near (a run of backslashes: read the rest whole)."""
    for cut in range(at, max(at - 4096, 8), -1):
        if data.find(b"\\", cut - 8, cut + 1) == -1:
            return cut
    return len(data)


class KeySearch:
    """Finds a key, or any `KEY_PIECE`-character piece of one, in encoded text (UTF-8 bytes, JSON or not): the
    one check of every place Blackbox writes a cassette or a journal (docs/format.md, "Writing a cassette").

    A piece counts across gaps a reader would skip (whitespace, a line end, zero-width characters, raw or as
    JSON escapes, also inside JSON held in a string) and with its characters JSON-escaped: the text is
    `squeezed` of those first.  Each key is cut into tiles of half a piece at every half-piece offset; any
    piece of the key contains a whole tile, so a leak is found by searching for the few tiles (a fast
    `bytes.find` each) and, at a hit, measuring how far the text goes on matching the key on both sides."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = tuple(keys)
        self._whole: list[bytes] = []
        self._tiles: list[tuple[bytes, bytes, int]] = []  # (tile, key, offset of the tile in the key)
        self._longest = 0
        step = KEY_PIECE // 2
        for key in self.keys:
            raw = squeezed(key.encode("utf-8", "surrogatepass"))
            if len(raw) < MIN_KEY_LENGTH:
                continue
            self._longest = max(self._longest, len(raw))
            if len(raw) <= KEY_PIECE:
                self._whole.append(raw)
                continue
            self._tiles.extend((raw[at:at + step], raw, at) for at in range(0, len(raw) - step + 1, step))

    @classmethod
    def of_environment(cls, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> KeySearch:
        """The keys of the API key variables `apis` names, in `env` (default the process's; the launcher's
        replay placeholders are no keys), and `extra`."""
        source = os.environ if env is None else env
        values = [v for name in KEY_VARIABLES if (v := source.get(name)) and v != PLACEHOLDER_KEYS.get(name)]
        return cls(dict.fromkeys([*values, *extra]))

    def __bool__(self) -> bool:
        return bool(self._whole or self._tiles)

    def found_in(self, data: bytes) -> bool:
        """Whether `data` holds a whole key or a `KEY_PIECE`-byte piece of one, across gaps and escapes."""
        if not self:
            return False
        if len(data) <= _WINDOW:
            return self._found(squeezed(data))
        carry = b""
        start = 0
        while start < len(data):
            end = len(data) if len(data) - start <= _WINDOW else _safe_cut(data, start + _WINDOW)
            window = carry + squeezed(data[start:end])
            if self._found(window):
                return True
            carry = window[-self._longest:]
            start = end
        return False

    def _found(self, data: bytes) -> bool:
        if any(whole in data for whole in self._whole):
            return True
        for tile, key, at in self._tiles:
            hit = data.find(tile)
            while hit != -1:
                if _matched(data, hit, key, at, len(tile)) >= KEY_PIECE:
                    return True
                hit = data.find(tile, hit + 1)
        return False

    def in_written(self, data: bytes) -> bool:
        """`found_in` for a cassette as `writing.dumps` writes it (two-space-indented JSON), read faster: each
        string is on a line of its own there, and a piece is inside one string, so each distinct line is
        searched once (every `model_input` repeats the history before it: most lines are repeats)."""
        if not self:
            return False
        seen: set[bytes] = set()
        start = 0
        while start < len(data):
            end = data.find(b"\n", start + _WINDOW)
            end = len(data) if end == -1 else end
            lines = data[start:end].split(b"\n")
            fresh = set(lines)
            fresh -= seen
            if 2 * len(fresh) < len(lines):  # mostly repeats: worth remembering (mostly new: the set would
                seen |= fresh                # only grow, as with a value nested thousands of levels deep)
            if fresh and self._found(squeezed(b'"'.join(fresh))):  # a quote: no piece runs across it
                return True
            start = end + 1
        return False

    def step_holding(self, cassette: Cassette, data: bytes) -> str | None:
        """Where `cassette` holds a key or a piece of one, or None: the one check before a cassette is written.

        `data` is what will be written (`writing.dumps(cassette)`), searched at once (`in_written`); only
        when it holds a piece are the parts searched to name the place: `the cassette's id` (or `parentId`,
        `forkedFromStepId`), `step N's id`, `step N` (its payload), else `the cassette`."""
        if not self.in_written(data):
            return None
        named = [("the cassette's id", cassette.id), ("the cassette's parentId", cassette.parentId),
                 ("the cassette's forkedFromStepId", cassette.forkedFromStepId)]
        for what, value in named:
            if isinstance(value, str) and self.found_in(value.encode("utf-8", "surrogatepass")):
                return what
        from blackbox.format.writing import pretty_json

        for step in cassette.steps:
            if isinstance(step.id, str) and self.found_in(step.id.encode("utf-8", "surrogatepass")):
                return f"step {step.index}'s id"
            if self.found_in(pretty_json(step.payload, indent=0).encode("utf-8", "surrogatepass")):
                return f"step {step.index}"
        return "the cassette"


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
