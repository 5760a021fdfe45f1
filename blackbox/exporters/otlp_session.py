"""The HTTP session the OTLP exporter sends through (its public `session=`): a backend that cannot be reached
fails the export at once, a backend that asks to be retried is said on the terminal.

The SDK retries a connection error with backoff (1, 2, 4 s: about 7 s of silence for a port nothing listens
on, then "did not answer").  A command line must say at once that nothing answers there, so the session hands
the SDK an error it does not retry and keeps the real one for the message.  An answer the SDK does retry
(429, 502, 503, 504) is kept: a backend under load often takes the next attempt; each one is noted.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable
from typing import Any

import requests

__all__ = ["RETRIED", "WatchingSession", "unreachable_reason"]

RETRIED = frozenset({429, 502, 503, 504})  # the statuses the OTLP exporter retries (OTLP/HTTP specification)


class Unreachable(Exception):
    """What the SDK sees instead of a connection error: not one it retries."""


class WatchingSession(requests.Session):
    """A `requests.Session` that stops the SDK's retries of a connection error and notes a retried answer."""

    def __init__(self, note: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self.note = note
        self.unreachable: Exception | None = None  # the connection error that ended the export
        self.attempts = 0

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        self.attempts += 1
        try:
            response = super().request(method, url, *args, **kwargs)
        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
            self.unreachable = exc
            raise Unreachable() from None
        if response.status_code in RETRIED and self.note is not None:
            self.note(f"HTTP {response.status_code} (attempt {self.attempts}), retrying…")
        return response


def unreachable_reason(exc: BaseException) -> str:
    """Why a connection failed, in a few words, from the exception chain (never the server's text)."""
    seen: set[int] = set()
    todo: list[Any] = [exc]
    while todo:
        current = todo.pop(0)
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused: nothing listens there"
        if isinstance(current, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(current, (ssl.SSLError, requests.exceptions.SSLError)):
            return "the TLS handshake failed"
        if isinstance(current, requests.exceptions.ProxyError):
            return "the proxy failed"
        if isinstance(current, (TimeoutError, socket.timeout, requests.exceptions.Timeout)):
            return "it timed out"
        todo += [*current.args, getattr(current, "reason", None), current.__cause__, current.__context__]
    return "no connection"
