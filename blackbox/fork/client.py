"""The HTTP client live continuations share, and what a "slow down" answer asks for.

One `httpx.Client` per process (or one a caller owns, such as a sweep's): thread-safe, its connections kept
alive, so 32 concurrent continuations reuse a few dozen connections instead of opening one per model call.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ["POOL_SIZE", "RETRIED", "pooled_client", "retry_after", "shared_client"]

RETRIED = frozenset({429, 503})


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a 429/503 asks for: `retry-after-ms` (OpenAI, Anthropic), else `retry-after` in seconds or as
    an HTTP date; None when neither is there or readable."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        text = (headers.get(name) or "").strip()
        if not text:
            continue
        try:
            return max(0.0, float(text) / scale)
        except ValueError:
            pass
        try:
            return max(0.0, parsedate_to_datetime(text).timestamp() - time.time())
        except (TypeError, ValueError, IndexError, OverflowError):
            continue
    return None


_SHARED: httpx.Client | None = None
_SHARED_LOCK = threading.Lock()
POOL_SIZE = 64  # connections kept to one API: a sweep's 32 concurrent continuations each keep theirs


def shared_client() -> httpx.Client:
    """The process's one HTTP client for live continuations: thread-safe, its connections kept alive and
    reused (a request per `httpx.post` would open a TLS connection per model call), closed at exit."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None or _SHARED.is_closed:
            _SHARED = pooled_client()
            atexit.register(_SHARED.close)
        return _SHARED


def pooled_client(connections: int = POOL_SIZE) -> httpx.Client:
    """A new pooled client keeping up to `connections` connections alive; the caller closes it (`with`)."""
    import httpx  # deferred: `blackbox --help` and the UI's start do not pay for it

    return httpx.Client(limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections))
