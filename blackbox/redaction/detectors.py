"""The built-in detectors: what a personal value or a credential looks like in free text.

Each detector is a regular expression that finds candidates and, where a shape alone says too little, a check
of the candidate (a card number's Luhn digit and issuer prefix, a JWT's JSON header, an IP address's
octets).  A detector yields the spans to redact: for a URL with credentials only its `user:password` part,
so the host stays readable.  Pure but for the credential table of `blackbox.format.secrets`: every shape the
key check refuses is found by the detector the table names (`refused`), unchecked, so a policy with that
detector never leaves one in the clear for a recording to be refused over; its looser form, refused outside
user data, is `OUTSIDE`'s (applied there by `blackbox.redaction.apply`).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import re
from collections.abc import Callable, Iterator

from blackbox.format.secrets import CREDENTIAL_SHAPES

__all__ = ["DETECTORS", "OUTSIDE", "Detector", "luhn_ok", "merged"]

Span = tuple[int, int]


class Detector:
    """One kind of sensitive value: its name (the rule name it reports under), a pattern and a check."""

    def __init__(self, name: str, description: str, pattern: str, *, flags: int = 0, group: int = 0,
                 check: Callable[[str], bool | Span] | None = None, hint: str | tuple[str, ...] | None = None,
                 not_after: str | None = None) -> None:
        self.name = name
        self.description = description
        self.pattern = re.compile(pattern, flags)
        self.group = group
        self.check = check
        # Speed, not meaning: `hint` is what any text holding such a value contains (searched first, quickly);
        # `not_after` the characters a value may not follow (a look-behind, checked here: Python's regex
        # engine tries a pattern that starts with one at every position).
        self.hint = re.compile(hint, re.ASCII) if isinstance(hint, str) else None
        self.literals = hint if isinstance(hint, tuple) else ()  # or: one of these strings
        self.not_after = re.compile(not_after, re.ASCII) if not_after is not None else None
        self._free = re.compile(f"(?!{not_after}).", re.ASCII | re.DOTALL) if not_after is not None else None
        # The key check's shapes this detector answers for (format/secrets' table), each with a literal every
        # match holds: found as they are, whatever the pattern and the check above say.
        self.refused = tuple((_literal(shape), re.compile(shape, re.ASCII))
                             for _, detector, shape, _ in CREDENTIAL_SHAPES if detector == name)

    def spans(self, text: str) -> Iterator[Span]:
        """Where in `text` this detector finds its kind of value (non-overlapping, left to right)."""
        extra = [m.span() for literal, pattern in self.refused if literal in text for m in pattern.finditer(text)]
        yield from merged([*self._own(text), *extra]) if extra else self._own(text)

    def _own(self, text: str) -> Iterator[Span]:
        if (self.hint is not None and self.hint.search(text) is None) or \
                (self.literals and not any(literal in text for literal in self.literals)):
            return
        pos = 0
        while (m := self.pattern.search(text, pos)) is not None:
            pos = max(m.end(), m.start() + 1)
            found = m.group(self.group)
            start = m.start(self.group)
            if self.not_after is not None and self._free is not None and start > 0 and \
                    self.not_after.match(text, start - 1):
                # not a value here, but one may start inside the candidate, after a character it may follow
                # (".0 4111 1111 1111 1111": the card after the space); the run before that is skipped at once
                free = self._free.search(text, start)
                if free is None:
                    return
                pos = free.end()
                continue
            if not found:
                continue
            ok = True if self.check is None else self.check(found)
            if ok is True:
                yield start, m.end(self.group)
            elif ok:  # the part of the candidate that is the value
                yield start + ok[0], start + ok[1]


def merged(spans: list[Span]) -> list[Span]:
    """Spans in text order, overlapping ones as one (their union is what is masked)."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _literal(pattern: str) -> str:
    """The text every match of one of the table's patterns starts with (`sk-ant-`, `Bearer`): a quick test."""
    found = re.match(r"(?:\\b)?([A-Za-z0-9-]{3,})", pattern)
    if found is None:
        raise ValueError(f"a credential shape must start with a literal: {pattern}")
    return found[1]


def luhn_ok(digits: str) -> bool:
    """The Luhn checksum every payment card number carries in its last digit."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = ord(ch) - 48
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


# Issuer prefixes (IIN ranges) of the card networks: a 16-digit number that is not a card (an order number,
# a millisecond timestamp) passes Luhn one time in ten, so the prefix must say "card" too.
_CARD_PREFIX = re.compile(r"4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[47]|3(?:0[0-5]|[68])|6(?:011|5|4[4-9]|2)|35")


def _is_card(found: str) -> bool:
    digits = re.sub(r"[ -]", "", found)
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    return bool(_CARD_PREFIX.match(digits)) and luhn_ok(digits)


def _card(found: str) -> bool | Span:
    """The run of digits, or its longest part between separators, that is a card number ("paid 20 4111 1111
    1111 1111": the last four groups)."""
    if _is_card(found):
        return True
    cuts = [0, *(i for i, ch in enumerate(found) if ch in " -"), len(found)]
    parts = sorted(((a + (a > 0), b) for i, a in enumerate(cuts) for b in cuts[i + 1:i + 6] if b - a <= 24),
                   key=lambda p: p[0] - p[1])
    return next(((a, b) for a, b in parts if (a, b) != (0, len(found)) and _is_card(found[a:b])), False)


def _phone(found: str) -> bool:
    digits = sum(ch.isdigit() for ch in found)
    return 7 <= digits <= 15


def _b64url_json(part: str) -> object:
    padded = part + "=" * (-len(part) % 4)
    return json.loads(base64.urlsafe_b64decode(padded))


def _jwt(found: str) -> bool:
    try:
        header = _b64url_json(found.split(".", 1)[0])
    except (ValueError, binascii.Error):
        return False
    return isinstance(header, dict) and "alg" in header


def _credential(found: str) -> bool:
    scheme, _, token = found.partition(" ")
    token = token.strip()
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("utf-8")
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return False
        return ":" in decoded
    # A bearer token is long and not a word: "Bearer authentication" is prose.
    return len(token) >= 16 and not token.isalpha()


def _ipv6(found: str) -> bool:
    if found.count(":") < 2 or (found.count(":") < 7 and "::" not in found):
        return False
    try:
        address = ipaddress.IPv6Address(found)
    except ValueError:
        return False
    return not address.is_unspecified and sum(1 for g in found.split(":") if g) >= 2


_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"

# In the order they are tried: a longer shape before a shorter one inside it (a URL's password before the
# e-mail-like `password@host`, a key before the digits in it).
_ALL: tuple[Detector, ...] = (
    Detector("email", "an e-mail address",
             r"[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,63})@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
             r"[A-Za-z]{2,24}(?![\w-])", flags=re.ASCII, hint="@", not_after=r"[\w.%+-]"),
    Detector("phone", "a phone number (international +CC…, or grouped national digits)",
             r"(?=[+(\d])(?:\+[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}"
             r"|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?![\w.-]?\d)",
             flags=re.ASCII, check=_phone, hint=r"[+(]\d|\d[ .-]\d\d", not_after=r"[\w+.-]"),
    Detector("card", "a payment card number (issuer prefix and Luhn check digit)",
             r"\d(?:[ -]?\d){12,}(?![\d-]|\.\d)", flags=re.ASCII, check=_card, hint=r"\d{4}[ -]?\d{4}",
             not_after=r"[\d.-]"),
    Detector("jwt", "a JSON Web Token",
             r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*", flags=re.ASCII, check=_jwt, hint="eyJ"),
    Detector("credential", "a bearer or basic Authorization credential",
             r"(?i)\b(?:bearer|basic)[ \t]+[A-Za-z0-9._~+/=-]{8,}", flags=re.ASCII, check=_credential,
             hint=("earer", "EARER", "asic", "ASIC")),
    Detector("cloud-key", "a cloud or service access key (AWS, Google, GitHub, Slack, Stripe, Azure, model APIs)",
             r"\b(?:(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{36,}"
             r"|github_pat_[A-Za-z0-9_]{22,}|xox[abposr]-[A-Za-z0-9-]{10,}|[sr]k_live_[0-9A-Za-z]{20,})(?![\w-])"
             r"|(?i:aws_secret_access_key)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
             r"|AccountKey=[A-Za-z0-9+/]{80,}={0,2}", flags=re.ASCII,
             hint=("AKIA", "ASIA", "ABIA", "ACCA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox",
                   "k_live_", "aws_secret", "AWS_SECRET", "AccountKey=")),
    Detector("private-key", "a PEM private key block",
             r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|.*\Z)",
             flags=re.DOTALL, hint="PRIVATE KEY-----"),
    Detector("url-credentials", "the user:password part of a URL",
             r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://([^\s/?#@:]+:[^\s/?#@]+)@[^\s/?#@]", flags=re.ASCII, group=1, hint="://"),
    Detector("ip", "an IPv4 or IPv6 address",
             rf"(?:{_OCTET}\.){{3}}{_OCTET}(?![\w]|\.\d)|(?:[0-9A-Fa-f]{{1,4}}|(?=::))(?::[0-9A-Fa-f]{{0,4}}){{2,7}}"
             r"(?![\w:])", flags=re.ASCII, hint=r"\d\.\d{1,3}\.\d{1,3}\.\d|::|:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:",
             not_after=r"[\w.:]"),
)
_ORDER = ("private-key", "url-credentials", "jwt", "credential", "cloud-key", "email", "card", "phone", "ip")
DETECTORS: dict[str, Detector] = {name: next(d for d in _ALL if d.name == name) for name in _ORDER}

#: For each detector the table names, the looser shapes the key check refuses outside user data (a tool's
#: description, a request parameter), as one pattern.
OUTSIDE: dict[str, re.Pattern[str]] = {
    name: re.compile("|".join(f"(?:{loose})" for _, d, _, loose in CREDENTIAL_SHAPES if d == name), re.ASCII)
    for name in dict.fromkeys(d for _, d, _, _ in CREDENTIAL_SHAPES)}

# An IPv4 candidate is always well formed (the pattern spells out each octet); an IPv6 one needs the parser.
DETECTORS["ip"].check = lambda found: "." in found or _ipv6(found)
