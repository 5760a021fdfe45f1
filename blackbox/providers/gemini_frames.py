"""google-genai's reading of a streamed body, rule for rule: the bytes in, the frame texts it parses as JSON out.

The SDK does not read its `alt=sse` stream by the event-stream rules.  Through httpx (or httpx2) it decodes the
body as text — in the charset its `content-type` names when Python knows it, else UTF-8, a byte that does not
decode replaced by U+FFFD, no byte-order mark dropped — and cuts the text into lines as `str.splitlines` does
(so also at `\\v`, `\\f`, `\\x1c`–`\\x1e`, `\\x85`, U+2028 and U+2029, which a JSON string may hold raw).  Then,
line by line:

- a line starting with exactly `data: ` adds the rest of it to the frame being gathered;
- an empty line ends that frame (its lines joined with `\\n`), if it has any;
- any other line — `data:` without the space, a `:` comment, `event:`, `id:`, a byte-order mark, bare JSON,
  one space — is gathered apart, glued to the lines before it, and is a frame of its own as soon as the `{`
  and `}` it and they hold count out even (counted character by character, inside JSON strings too);
- at the end of the body: first what was gathered apart, then the `data:` frame no empty line ended.

Each frame is then parsed with `json.loads`, so one that is not JSON (a comment, an `event:` line, half a frame)
makes the SDK raise where it stands.  `GenaiFrames` does exactly that, fed any chunking; the tests hold it to the
SDK's own reader.
"""

from __future__ import annotations

import codecs

__all__ = ["GenaiFrames", "charset_of"]

#: The characters `str.splitlines` ends a line at ("\r" handled apart: it may be the first half of "\r\n").
_LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_DATA = "data: "


def charset_of(content_type: str | None) -> str:
    """The encoding httpx decodes a body in: the `content-type`'s charset when Python knows it, else UTF-8."""
    if content_type and "charset" in content_type.lower():
        import email.message  # the header read the way httpx reads it

        message = email.message.Message()
        message["content-type"] = content_type
        charset = message.get_content_charset(failobj=None)
        if charset:
            try:
                return codecs.lookup(charset).name
            except LookupError:
                pass
    return "utf-8"


class GenaiFrames:
    """Feed the body's bytes with `feed` in chunks of any size, then `close` at its end; each returns the frame
    texts those bytes completed, in the order the SDK parses them."""

    __slots__ = ("_balance", "_cr", "_data", "_decoder", "_line", "_loose", "lines")

    def __init__(self, charset: str = "utf-8") -> None:
        self._decoder = codecs.getincrementaldecoder(charset)(errors="replace")
        self._line: list[str] = []  # the pieces of a line whose end has not come
        self._cr = False  # the text so far ended with "\r": a "\n" starting the next text ends no further line
        self._data: list[str] = []  # the `data: ` lines of the frame being gathered
        self._loose: list[str] = []  # the other lines, until their braces count out even
        self._balance = 0
        self.lines = 0  #: lines read

    @property
    def pending(self) -> bool:
        """Text has come that no frame holds yet (a body ending now was cut in the middle of a frame)."""
        return bool(self._line or self._cr or self._data or self._loose)

    def feed(self, data: bytes) -> list[str]:
        """The frames `data` completed (possibly none)."""
        return self._frames(self._split(self._decoder.decode(data)))

    def close(self) -> list[str]:
        """The body ended: the frames still held (the last line needs no line end), in the SDK's order."""
        lines = self._split(self._decoder.decode(b"", True))
        if self._line or self._cr:
            lines.append("".join(self._line))
            self._line, self._cr = [], False
        frames = self._frames(lines)
        if self._loose:
            frames.append("".join(self._loose))
        if self._data:
            frames.append("\n".join(self._data))
        self._loose, self._data, self._balance = [], [], 0
        return frames

    def _split(self, text: str) -> list[str]:
        """The lines `text` ended (`str.splitlines` over the whole body, fed piece by piece)."""
        if self._cr:
            text, self._cr = "\r" + text, False
        if text.endswith("\r"):
            text, self._cr = text[:-1], True
        if not text:
            return []
        lines = text.splitlines()
        if text[-1] not in _LINE_ENDS:  # the last line goes on in the next text
            rest = lines.pop()
            if not lines:
                self._line.append(rest)
                return []
            lines[0] = "".join(self._line) + lines[0] if self._line else lines[0]
            self._line = [rest]
        elif self._line:
            lines[0] = "".join(self._line) + lines[0]
            self._line = []
        return lines

    def _frames(self, lines: list[str]) -> list[str]:
        frames: list[str] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    frames.append("\n".join(data))
                    data = self._data = []
            elif line.startswith(_DATA):
                data.append(line[6:])
            else:
                self._loose.append(line)
                self._balance += line.count("{") - line.count("}")
                if not self._balance:
                    frames.append("".join(self._loose))
                    self._loose = []
        self.lines += len(lines)
        return frames
