"""One HTTP request as Blackbox sees it: a neutral value built once by the transport.

The session and every provider read this one value (vcrpy's request, not an httpx object): a provider may
need the host (Azure), the path (Gemini's model and stream flag), the query (`api-version`, a `key`) and the
headers (where the SDK put its key), so the transport hands over all of them, not only the body.
"""

from __future__ import annotations

import msgspec

__all__ = ["Request"]


class Request(msgspec.Struct, frozen=True):
    """An SDK's HTTP request: `url` without its query (a query may carry a key: `query` holds it, decoded),
    `headers` with lower-case names, `body` as sent."""

    method: str
    url: str
    host: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The first value of header `name` (lower case), or None."""
        return next((value for key, value in self.headers if key == name), None)

    def param(self, name: str) -> str | None:
        """The first value of query parameter `name`, or None."""
        return next((value for key, value in self.query if key == name), None)

    def __repr__(self) -> str:  # headers, query and body may hold a key: a traceback never shows them
        return f"Request({self.method} {self.url}, {len(self.headers)} headers, {len(self.body)} bytes)"

    @property
    def route(self) -> str:
        """The path without a trailing slash: what a provider matches its endpoints against."""
        return self.path.rstrip("/")

    @classmethod
    def post(cls, url: str, body: bytes = b"", headers: tuple[tuple[str, str], ...] = ()) -> Request:
        """A POST to `url` (tests, and callers outside a transport): host, path and query split from it."""
        from urllib.parse import parse_qsl, urlsplit

        parts = urlsplit(url if "://" in url else f"http://localhost{url if url.startswith('/') else '/' + url}")
        query = tuple(parse_qsl(parts.query, keep_blank_values=True))
        return cls("POST", url.split("?", 1)[0], parts.hostname or "", parts.path or "/", query,
                   tuple((k.lower(), v) for k, v in headers), body)
