"""HTTP options for an SDK that takes one client per direction (google-genai), and the guard that keeps both
directions on Blackbox.

google-genai sends its sync calls through `HttpOptions.httpx_client` and its async calls (`client.aio`) through
`httpx_async_client`; given only the first, its async calls go around Blackbox — through aiohttp when aiohttp is
installed, else through an httpx client of its own — and a run would be recorded with its model calls missing.
`genai_http_options` always sets both; `guard_genai` refuses, when it is built, a client that has only one of
Blackbox's clients.  The SDK is imported only by `genai_http_options` (the core imports no SDK).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from typing import Any

from blackbox.errors import BlackboxUnsupportedError

__all__ = ["check_genai", "genai_flavor", "genai_http_options", "guard_genai", "is_blackbox_client"]

_GUARDED = "_blackbox_guarded"


def is_blackbox_client(client: Any) -> bool:
    """Whether an httpx / httpx2 client sends through Blackbox's transport."""
    return type(getattr(client, "_transport", None)).__module__ == "blackbox.live.transport"


def genai_flavor() -> str:
    """The HTTP module google-genai uses by default: httpx when it is installed, else httpx2."""
    return "httpx" if importlib.util.find_spec("httpx") is not None else "httpx2"


def guard_genai() -> None:
    """Make google-genai's client check its HTTP options when it is built (once; only if the SDK is imported)."""
    module = sys.modules.get("google.genai._api_client")
    cls = getattr(module, "BaseApiClient", None)
    if cls is None or getattr(cls.__init__, _GUARDED, False):
        return
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        check_genai(self)

    setattr(__init__, _GUARDED, True)
    cls.__init__ = __init__


def check_genai(api_client: Any) -> None:
    """Refuse a google-genai client that sends one direction through Blackbox and the other around it."""
    options = getattr(api_client, "_http_options", None)
    sync_ours = is_blackbox_client(getattr(options, "httpx_client", None))
    async_ours = is_blackbox_client(getattr(options, "httpx_async_client", None))
    if sync_ours == async_ours:
        return
    if sync_ours:
        use_aiohttp = getattr(api_client, "_use_aiohttp", None)
        around = "through aiohttp" if callable(use_aiohttp) and use_aiohttp() else "through an httpx client of its own"
        what = f"a google-genai client whose async calls (client.aio) would go {around}, around Blackbox"
    else:
        what = "a google-genai client whose sync calls would go around Blackbox"
    raise BlackboxUnsupportedError(
        f"{what}, is not supported; build it with http_options=bb.genai_http_options(), which sets both "
        "httpx_client=bb.http_client() and httpx_async_client=bb.async_http_client()")


def genai_http_options(session: Any, flavor: str | None = None, **kwargs: Any) -> Any:
    """`types.HttpOptions(httpx_client=…, httpx_async_client=…)`, both the session's clients of one flavor."""
    from google.genai import types

    flavor = flavor or genai_flavor()
    return types.HttpOptions(httpx_client=session.http_client(flavor),
                             httpx_async_client=session.async_http_client(flavor), **kwargs)
