"""One HTTP request as Blackbox sees it: a neutral value built once by the transport.

The session and every provider read this one value (vcrpy's request, not an httpx object): a provider may
need the host (Azure), the path (Gemini's model and stream flag), the query (`api-version`, a `key`) and the
headers (where the SDK put its key), so the transport hands over all of them, not only the body.

It is built on every model call, so what few readers need is decoded only when first read: the transport
hands over the raw header pairs and query bytes (`Request.sent`); the key learning reads the raw pairs, a
provider's `header()` finds one name without decoding the others, and `headers` / `query` / `url` are decoded
on first use.  A plain class with slots (not a msgspec Struct) for that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import itemgetter

__all__ = ["Request"]

Pairs = tuple[tuple[str, str], ...]
_LOWER_NAME = itemgetter(1)  # a raw header's lower-case name


class Request:
    """An SDK's HTTP request: `url` without its query (a query may carry a key: `query` holds it, decoded),
    `headers` with lower-case names, `body` as sent.  Read-only by convention; `route` is the path without a
    trailing slash (what a provider matches its endpoints against)."""

    __slots__ = ("_headers", "_origin", "_query", "_raw_query", "_url", "body", "host", "method", "path",
                 "raw_headers", "route")

    method: str
    host: str
    path: str
    route: str
    body: bytes
    #: The headers as sent, latin-1 bytes: (name in the SDK's case, name in lower case, value).
    raw_headers: list[tuple[bytes, bytes, bytes]]

    def __init__(self, method: str, url: str, host: str, path: str, query: Iterable[tuple[str, str]] = (),
                 headers: Iterable[tuple[str, str]] = (), body: bytes = b"") -> None:
        self.method, self.host, self.path, self.route, self.body = method, host, path, path.rstrip("/"), body
        self._url: str | None = url
        self._origin: Callable[[], str] | None = None
        self._query: Pairs | None = tuple(query)
        self._raw_query = b""
        self._headers: Pairs | None = tuple(headers)
        self.raw_headers = [(k.encode("latin-1"), k.lower().encode("latin-1"), v.encode("latin-1"))
                            for k, v in self._headers]

    @classmethod
    def sent(cls, method: str, origin: Callable[[], str], host: str, path: str, raw_query: bytes,
             raw_headers: list[tuple[bytes, bytes, bytes]], body: bytes) -> Request:
        """The request a transport saw: `origin()` gives `scheme://host[:port]` when the URL is asked for;
        `raw_query` is the query string's bytes (no `?`), `raw_headers` the headers as sent (see the field)."""
        request = cls.__new__(cls)
        request.method, request.host, request.path, request.route = method, host, path, path.rstrip("/")
        request.body, request.raw_headers = body, raw_headers
        request._url, request._origin, request._raw_query = None, origin, raw_query
        request._query = None if raw_query else ()
        request._headers = None
        return request

    @property
    def url(self) -> str:
        """The URL without its query."""
        if self._url is None:
            self._url = f"{self._origin() if self._origin is not None else ''}{self.path}"
        return self._url

    @property
    def query(self) -> Pairs:
        """The query's (name, value) pairs, decoded."""
        if self._query is None:
            from urllib.parse import parse_qsl

            self._query = tuple(parse_qsl(self._raw_query.decode("latin-1"), keep_blank_values=True))
        return self._query

    @property
    def headers(self) -> Pairs:
        """Every header, its name in lower case, both decoded as latin-1 (as HTTP/1.1 carries them)."""
        if self._headers is None:
            self._headers = tuple([(k.decode("latin-1"), v.decode("latin-1")) for _, k, v in self.raw_headers])
        return self._headers

    def header(self, name: str) -> str | None:
        """The first value of header `name` (lower case), or None; the other headers stay undecoded."""
        if self._headers is not None:
            return next((value for key, value in self._headers if key == name), None)
        target = name.encode("latin-1")
        if target not in map(_LOWER_NAME, self.raw_headers):  # told in C: most lookups find nothing
            return None
        return next(value.decode("latin-1") for _, key, value in self.raw_headers if key == target)

    @property
    def shape_query(self) -> bytes | Pairs:
        """The query as sent (its bytes; the decoded pairs for a request built whole): part of the request's
        shape, which `providers.route` remembers its decision by."""
        return self._raw_query if self._query is None or self._raw_query else (self._query or b"")

    @property
    def has_query(self) -> bool:
        """Whether the URL has a query (told without decoding it)."""
        return bool(self._raw_query or self._query)

    def param(self, name: str) -> str | None:
        """The first value of query parameter `name`, or None."""
        if not self.has_query:
            return None
        return next((value for key, value in self.query if key == name), None)

    def __repr__(self) -> str:  # headers, query and body may hold a key: a traceback never shows them
        return f"Request({self.method} {self.url}, {len(self.raw_headers)} headers, {len(self.body)} bytes)"

    @classmethod
    def post(cls, url: str, body: bytes = b"", headers: Iterable[tuple[str, str]] = ()) -> Request:
        """A POST to `url` (tests, and callers outside a transport): host, path and query split from it."""
        from urllib.parse import parse_qsl, urlsplit

        parts = urlsplit(url if "://" in url else f"http://localhost{url if url.startswith('/') else '/' + url}")
        query = parse_qsl(parts.query, keep_blank_values=True)
        return cls("POST", url.split("?", 1)[0], parts.hostname or "", parts.path or "/", query,
                   [(k.lower(), v) for k, v in headers], body)
