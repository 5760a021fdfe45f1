"""Known keys as a detector: the values of the API keys and of the redaction key, and any long piece of one.

A piece of a key is as secret as the key (`secrets.KEY_PIECE`): the recorder refuses any `KEY_PIECE`-character
piece, so `blackbox scan` looks for the same, and `blackbox redact` masks it.  Each span found is the whole run
of text that goes on matching the key (never just the piece: the rest of the key would be printed beside the
mark).  Found as `KeySearch` finds them: tiles of half a piece at every half-piece offset of the key, each
hit grown on both sides while the text goes on matching.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from blackbox.format.secrets import KEY_PIECE, MIN_KEY_LENGTH
from blackbox.redaction.detectors import Detector

__all__ = ["KnownKeys"]

Span = tuple[int, int]


class KnownKeys(Detector):
    """A detector of these key values (each at least `MIN_KEY_LENGTH` characters) and their long pieces."""

    def __init__(self, name: str, keys: Iterable[str]) -> None:
        super().__init__(name, "a known key or a long piece of one", r"(?!)")
        self.keys = sorted({k for k in keys if len(k) >= MIN_KEY_LENGTH}, key=len, reverse=True)
        step = KEY_PIECE // 2
        self._tiles = [(key[at:at + step], key, at) for key in self.keys if len(key) > KEY_PIECE
                       for at in range(0, len(key) - step + 1, step)]
        self._whole = [key for key in self.keys if len(key) <= KEY_PIECE]

    def spans(self, text: str) -> Iterator[Span]:
        found: list[Span] = []
        for key in self._whole:
            at = text.find(key)
            while at != -1:
                found.append((at, at + len(key)))
                at = text.find(key, at + 1)
        for tile, key, offset in self._tiles:
            hit = text.find(tile)
            while hit != -1:
                start, end = _grown(text, hit, key, offset, len(tile))
                if end - start >= KEY_PIECE:
                    found.append((start, end))
                hit = text.find(tile, hit + 1)
        if not found:
            return
        found.sort()
        start, end = found[0]
        for a, b in found[1:]:
            if a < end:
                end = max(end, b)
                continue
            yield start, end
            start, end = a, b
        yield start, end


def _grown(text: str, hit: int, key: str, offset: int, size: int) -> Span:
    """The span around `text[hit:hit+size]` (= `key[offset:offset+size]`) that goes on matching `key`."""
    left = 0
    while left < offset and left < hit and text[hit - left - 1] == key[offset - left - 1]:
        left += 1
    right = 0
    while offset + size + right < len(key) and hit + size + right < len(text) and \
            text[hit + size + right] == key[offset + size + right]:
        right += 1
    return hit - left, hit + size + right
