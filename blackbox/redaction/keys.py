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
from blackbox.redaction.detectors import Detector, merged

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
        found = [(at, at + len(key)) for key in self._whole for at in _occurrences(text, key)]
        for tile, key, offset in self._tiles:
            for hit in _occurrences(text, tile):
                # how far the text goes on matching the key before the tile and after it
                before = _common(text[max(0, hit - offset):hit][::-1], key[:offset][::-1])
                after = _common(text[hit + len(tile):hit + len(key) - offset], key[offset + len(tile):])
                if before + len(tile) + after >= KEY_PIECE:
                    found.append((hit - before, hit + len(tile) + after))
        return iter(merged(found))


def _common(a: str, b: str) -> int:
    """How many characters `a` and `b` share from their start."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def _occurrences(text: str, part: str) -> Iterator[int]:
    at = text.find(part)
    while at != -1:
        yield at
        at = text.find(part, at + 1)
