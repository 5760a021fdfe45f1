"""Make text from a cassette or transcript inert before it reaches a terminal.

A cassette may hold anything a model or a tool produced, including terminal escape sequences (colours, cursor
moves, an OSC sequence that retitles the window), bidirectional overrides that reorder what is shown, and lone
surrogates that no terminal encoding can print.  Every string from a cassette that the CLI prints or the UI
shows goes through `inert()` first, so it is shown, never obeyed: C0 controls become their Unicode control
pictures (ESC → ␛, so `\\x1b[32m` reads as `␛[32m`), DEL → ␡, C1 controls, bidi controls and lone surrogates
become `\\xNN` / `\\uNNNN` escapes.  One translation table, so it costs one pass over the string.
"""

from __future__ import annotations

__all__ = ["inert", "inert_lines"]


def _table(keep_newlines: bool) -> dict[int, str]:
    table: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20)}
    table[0x7F] = "\u2421"
    table.update({code: f"\\x{code:02x}" for code in range(0x80, 0xA0)})
    for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C):
        table[code] = f"\\u{code:04x}"
    table.update({code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)})
    if keep_newlines:
        del table[0x0A], table[0x09]
    return table


_ONE_LINE = _table(keep_newlines=False)
_MULTI_LINE = _table(keep_newlines=True)


def inert(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control character, bidi control and lone surrogate shown visibly instead of obeyed.

    Newlines and tabs become ␊ and ␉ too (a one-line summary stays one line) unless `keep_newlines`."""
    return text.translate(_MULTI_LINE if keep_newlines else _ONE_LINE)


def inert_lines(text: str) -> str:
    """`inert(text, keep_newlines=True)`: for pretty-printed payloads, where line breaks are layout."""
    return text.translate(_MULTI_LINE)
