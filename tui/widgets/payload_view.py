"""A step's payload as highlighted JSON (colours from the theme), capped so a huge payload stays quick.

The text is made inert (a payload may hold escape sequences or bidi controls), long strings are folded to
`STRING_FOLD` characters until `z` unfolds them, wrapped lines keep their indentation (a long string does not
run back to column 0), and search matches are highlighted with the view scrolled to the current one.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Static

from blackbox.format.inert import inert_lines
from blackbox.format.marks import MARK

from ..run import pretty_json

__all__ = ["BREAK_AFTER", "MATCH_STYLE", "REDACTED_STYLE", "PayloadView", "fold_strings", "hang", "highlight_matches",
           "json_content", "mark_redacted", "wrapped_row"]

HIGHLIGHT_LIMIT = 64_000  # characters highlighted; beyond this the text is shown plain
SHOW_LIMIT = 256_000  # characters shown at all; the rest is one `o`/`p` away (editor / pager)
STRING_FOLD = 600  # a string longer than this is shown cut, with how much is hidden, until `z`
# Readable on every theme: the match takes the theme's text colour on a strong background, nothing else does.
MATCH_STYLE = "bold $text on $warning-darken-1"
CURRENT_MATCH_STYLE = "bold reverse"
# A value a redaction policy replaced (docs/format.md, "Redaction"): set apart, so it is not read as data.
REDACTED_STYLE = "italic $text-accent"


def fold_strings(value: Any, limit: int = STRING_FOLD) -> Any:
    """`value` with every string longer than `limit` cut, saying how many characters are hidden."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return f"{value[:limit]}… [{len(value) - limit:,} more characters; z unfolds]"
    if isinstance(value, dict):
        return {key: fold_strings(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [fold_strings(item, limit) for item in value]
    return value


def json_content(value: Any, *, unfold: bool = False) -> Content:
    """Highlighted, inert JSON text, plain past HIGHLIGHT_LIMIT and cut at SHOW_LIMIT with a note saying so."""
    text = inert_lines(pretty_json(value if unfold else fold_strings(value)))
    note = ""
    if len(text) > SHOW_LIMIT:
        note = f"\n… {len(text) - SHOW_LIMIT:,} more characters: press o or p to open the whole step"
        text = text[:SHOW_LIMIT]
    body = highlight(text, language="json") if len(text) <= HIGHLIGHT_LIMIT else Content(text)
    body = mark_redacted(body)
    return body + Content.styled(note, "$text-warning") if note else body


def mark_redacted(content: Content) -> Content:
    """`content` with every redaction mark (`[redacted:rule:token]`) in `REDACTED_STYLE`."""
    if "[redacted:" not in content.plain:
        return content
    for m in MARK.finditer(content.plain):
        content = content.stylize(REDACTED_STYLE, m.start(), m.end())
    return content


def highlight_matches(content: Content, needle: str, current: int = 0) -> tuple[Content, list[int]]:
    """`content` with each case-insensitive occurrence of `needle` styled; returns the lines they start on.

    Only the matched characters change; occurrence `current` (counted from 0) is drawn stronger."""
    if not needle:
        return content, []
    plain = content.plain.lower()
    needle = needle.lower()
    lines: list[int] = []
    start = plain.find(needle)
    line, scanned = 0, 0
    while start != -1:
        line += plain.count("\n", scanned, start)
        scanned = start
        style = CURRENT_MATCH_STYLE if len(lines) == current else MATCH_STYLE
        content = content.stylize(style, start, start + len(needle))
        lines.append(line)
        start = plain.find(needle, start + len(needle))
    return content, lines


#: Where a line too long for its row may break, after the character: a space first, else one of these (a dotted
#: path, a URL, a date); a row is cut in the middle of a word only when it holds no such place.
BREAK_AFTER = ",.;:/-_)]}&?=|"


def _break(plain: str, start: int, end: int, text_from: int = 0) -> int:
    """Where the row from `start` (at most to `end`) ends: after a space, else after punctuation, looked for in
    the row's second half first, then in its second quarter (never before `text_from`, the line's indentation:
    an earlier break would leave the row mostly empty); at `end` when the row holds neither."""
    room = end - start
    for low, high in ((start + room // 2, end), (start + room // 4, start + room // 2)):
        low = max(low, text_from + 1)
        space = plain.rfind(" ", low, high)
        if space >= low:
            return space + 1
        for at in range(high - 1, low - 1, -1):
            if plain[at] in BREAK_AFTER:
                return at + 1
    return end


def _cuts(plain: str, width: int) -> tuple[int, list[int]]:
    """(continuation indent, offsets) that break one line of `plain` into rows of at most `width`, at word
    boundaries where there are any (`_break`)."""
    if len(plain) <= width or width < 8:
        return 0, []
    indent = len(plain) - len(plain.lstrip(" "))
    pad = min(indent + 2, width // 2)
    cuts = [_break(plain, 0, width, indent)]
    while len(plain) - cuts[-1] > width - pad:
        cuts.append(_break(plain, cuts[-1], cuts[-1] + width - pad))
    return pad, cuts


def hang(content: Content, width: int) -> Content:
    """Wrap lines longer than `width` by hand, continuing under the line's indentation plus two spaces."""
    out: list[Content] = []
    for line in content.split("\n", allow_blank=True):
        pad, cuts = _cuts(line.plain, width)
        if not cuts:
            out.append(line)
            continue
        pieces = line.divide(cuts)
        out.append(pieces[0])
        out.extend(Content(" " * pad) + piece for piece in pieces[1:] if piece.plain)
    return Content("\n").join(out)


def wrapped_row(plain: str, line: int, width: int) -> int:
    """The screen row that line `line` of `plain` starts on once `hang` wrapped it at `width`."""
    return sum(1 + len(_cuts(text, width)[1]) for text in plain.split("\n")[:line])


class PayloadView(VerticalScroll):
    """Scrollable, highlighted JSON of one value; `needle` highlights search matches."""

    DEFAULT_CSS = """
    PayloadView {
        background: $surface;
        padding: 0 1;
        & > Static { width: 100%; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.value: Any = None
        self.needle = ""
        self.unfold = False
        self.match_lines: list[int] = []
        self._width = 0

    def compose(self) -> ComposeResult:
        yield Static(id="payload-text")

    def show(self, value: Any, needle: str = "") -> None:
        self.value = value
        self.needle = needle
        self._render_text()

    def toggle_fold(self) -> None:
        self.unfold = not self.unfold
        self._render_text()

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width and self.value is not None:
            self._render_text()

    def _text_width(self) -> int:
        """The width lines are wrapped to: the room left once a scrollbar is shown (it appears only after the
        text is laid out, and a line wrapped wider would be wrapped again by the Static, to column 0)."""
        scrollbar = 0 if self.show_vertical_scrollbar else self.styles.scrollbar_size_vertical
        return max(0, self.scrollable_content_region.width - scrollbar)

    def _render_text(self) -> None:
        self._width = self.size.width
        content = json_content(self.value, unfold=self.unfold)
        content, lines = highlight_matches(content, self.needle)
        self.match_lines = lines
        width = self._text_width()
        wrapped = hang(content, width) if width else content
        self.query_one("#payload-text", Static).update(wrapped)
        if lines and width:
            # the line the first match is on, after wrapping: count the wrapped rows above it
            row = wrapped_row(content.plain, lines[0], width)
            self.call_after_refresh(self.scroll_to, y=max(0, row - 2), animate=False)
        else:
            self.scroll_home(animate=False)
