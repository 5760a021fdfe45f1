"""The network guard's patches of the libraries that know more than a socket address: the URL a refused request
names and the proxy it goes through.

- httpx and httpx2 transports (sync and async, a `proxy=` or one taken from `HTTP_PROXY` / `HTTPS_PROXY` /
  `ALL_PROXY`), requests' adapter (`proxies=` and the environment's) and aiohttp's connector: the target host
  must be allowed, and so must the proxy a request goes through — an allowed proxy forwards wherever it is
  asked, so a request for another host through it is refused before anything is sent;
- `socket.socket`'s connect, connect_ex, sendto and sendmsg, when given a host *name*: the C module resolves a
  name before it raises the audit event the guard sees, so the name is checked here first (no DNS query leaves
  for a name nobody allowed);
- `socket.socketpair`, which on Windows connects two loopback sockets: an event loop's wake-up pair is no
  request.

Patched while any guard is up (`plugin.network` decides; this module only asks it, through `Check` and
`Lookup`).  A request whose URL and proxy were checked runs with `ALLOWED` set, so its own socket is not
refused a second time by address.
"""

from __future__ import annotations

import _socket
import contextlib
import contextvars
import importlib
import socket
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from blackbox.plugin.hosts import address_host, default_port, host_port, is_address, shown

__all__ = ["ALLOWED", "Check", "Lookup", "allowed_request", "patch_libraries", "shown_url", "true_family"]

Check = Callable[[str, "int | None", str, str], None]  # (host, port, what is refused, how it was sent)
Lookup = Callable[[str], None]  # a host name about to be resolved

# Set while an allowed request runs, so the socket it opens is not refused a second time by address.
ALLOWED: contextvars.ContextVar[bool] = contextvars.ContextVar("blackbox_netguard_allowed", default=False)

_C_FAMILY: Any = _socket.socket.__dict__["family"]  # the C type's own descriptor, under any override
_PLAIN_POOLS = ("ConnectionPool", "AsyncConnectionPool")  # httpcore's pools without a proxy
_NAMED_CALLS = ("connect", "connect_ex", "sendto", "sendmsg")  # the address is the last argument of each


def patch_libraries(check: Check, lookup: Lookup) -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    for module_name in ("httpx", "httpx2"):
        module = _optional(module_name)
        if module is not None:
            stack.enter_context(_patch_httpx(module, module_name, check))
    requests_adapters = _optional("requests.adapters")
    if requests_adapters is not None:
        stack.enter_context(_patch_requests(requests_adapters, check))
    aiohttp_connector = _optional("aiohttp.connector")
    if aiohttp_connector is not None:
        stack.enter_context(_patch_aiohttp(aiohttp_connector, check))
    stack.enter_context(_patch_socket_names(lookup))
    stack.enter_context(_patch_socketpair())
    return stack


def allowed_request(call: Callable[[], Any]) -> Any:
    token = ALLOWED.set(True)
    try:
        return call()
    finally:
        ALLOWED.reset(token)


def shown_url(url: str) -> str:
    """A URL as a refusal names it: scheme, host, port and path — no user, password or query (a key can hide
    in either)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{shown(host, port)}{parts.path}"


def true_family(sock: Any) -> int | None:
    """The address family the C socket really has: a subclass may override `family` with anything."""
    try:
        return int(_C_FAMILY.__get__(sock))
    except (TypeError, ValueError, AttributeError):
        return None


def _text(value: Any) -> str:
    return value.decode("ascii", "replace") if isinstance(value, bytes | bytearray) else str(value)


def _check_proxy(check: Check, target: str, scheme: str, host: str, port: int | None, via: str) -> None:
    port = port if port is not None else default_port(f"{scheme}:")
    check(host, port, f"{target} through the proxy {shown(host, port)}, which is not allowed", via)


def _check_httpx(transport: Any, request: Any, name: str, check: Check) -> bool:
    """Check the request's URL and the proxy the transport sends it through.  True when the transport's own
    connection may go unchecked: it goes straight to the URL's host, or to a proxy that was checked; a pool
    of another kind is left to the socket checks."""
    url, via = str(request.url), f"{name} {request.method}"
    host = _text(getattr(request.url, "host", "") or "")
    port = getattr(request.url, "port", None)
    check(host, port if isinstance(port, int) else default_port(url), shown_url(url), via)
    pool = getattr(transport, "_pool", None)
    proxy = getattr(pool, "_proxy_url", None)
    if proxy is not None:
        port = getattr(proxy, "port", None)
        _check_proxy(check, shown_url(url), _text(proxy.scheme), _text(proxy.host),
                     port if isinstance(port, int) else None, via)
        return True
    return type(pool).__name__ in _PLAIN_POOLS


@contextlib.contextmanager
def _patch_httpx(module: Any, name: str, check: Check) -> Iterator[None]:
    sync_cls, async_cls = module.HTTPTransport, module.AsyncHTTPTransport
    original_sync, original_async = sync_cls.handle_request, async_cls.handle_async_request

    def handle_request(transport: Any, request: Any) -> Any:
        if not _check_httpx(transport, request, name, check):
            return original_sync(transport, request)
        return allowed_request(lambda: original_sync(transport, request))

    async def handle_async_request(transport: Any, request: Any) -> Any:
        if not _check_httpx(transport, request, name, check):
            return await original_async(transport, request)
        token = ALLOWED.set(True)
        try:
            return await original_async(transport, request)
        finally:
            ALLOWED.reset(token)

    sync_cls.handle_request = handle_request
    async_cls.handle_async_request = handle_async_request
    try:
        yield
    finally:
        sync_cls.handle_request = original_sync
        async_cls.handle_async_request = original_async


@contextlib.contextmanager
def _patch_requests(adapters: Any, check: Check) -> Iterator[None]:
    from requests.utils import prepend_scheme_if_needed, select_proxy

    cls = adapters.HTTPAdapter
    original = cls.send

    def send(adapter: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        url, via = str(request.url), f"requests {request.method}"
        host, port = host_port(url)
        check(host, port, shown_url(url), via)
        proxies = kwargs.get("proxies", args[4] if len(args) > 4 else None)  # send(request, stream, timeout,
        proxy = select_proxy(url, proxies) if proxies else None                # verify, cert, proxies)
        if proxy:
            proxy_url = prepend_scheme_if_needed(proxy, "http")
            proxy_host, proxy_port = host_port(proxy_url)
            _check_proxy(check, shown_url(url), urlsplit(proxy_url).scheme, proxy_host, proxy_port, via)
        return allowed_request(lambda: original(adapter, request, *args, **kwargs))

    cls.send = send
    try:
        yield
    finally:
        cls.send = original


@contextlib.contextmanager
def _patch_aiohttp(connector: Any, check: Check) -> Iterator[None]:
    """aiohttp's sockets stay under the socket checks (its connector resolves and connects in tasks of its
    own); only what they cannot see is checked here: the target behind a proxy."""
    cls = connector.BaseConnector
    original = cls.connect

    async def connect(self: Any, req: Any, *args: Any, **kwargs: Any) -> Any:
        url, via = str(req.url), f"aiohttp {req.method}"
        check(str(req.url.host or ""), req.url.port, shown_url(url), via)
        proxy = getattr(req, "proxy", None)
        if proxy is not None:
            _check_proxy(check, shown_url(url), str(proxy.scheme), str(proxy.host or ""), proxy.port, via)
        return await original(self, req, *args, **kwargs)

    cls.connect = connect
    try:
        yield
    finally:
        cls.connect = original


def _address_name(sock: Any, args: tuple[Any, ...]) -> str | None:
    """The host name (not an address) an internet socket's call is about to resolve, if any."""
    if not args or true_family(sock) not in (socket.AF_INET, socket.AF_INET6):
        return None
    address = args[-1]
    if not isinstance(address, tuple) or tuple.__len__(address) < 2:
        return None
    host = address_host(tuple.__getitem__(address, 0))
    if not host or is_address(host.partition("%")[0]):
        return None
    return host


@contextlib.contextmanager
def _patch_socket_names(lookup: Lookup) -> Iterator[None]:
    cls = socket.socket
    own = {name: cls.__dict__[name] for name in _NAMED_CALLS if name in cls.__dict__}

    def wrapped(name: str) -> Callable[..., Any]:
        original = getattr(cls, name)

        def call(sock: Any, *args: Any) -> Any:
            host = _address_name(sock, args)
            if host is not None:
                lookup(host)
            return original(sock, *args)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = original.__doc__
        return call

    for name in _NAMED_CALLS:
        setattr(cls, name, wrapped(name))
    try:
        yield
    finally:
        for name in _NAMED_CALLS:
            if name in own:
                setattr(cls, name, own[name])
            else:
                delattr(cls, name)


@contextlib.contextmanager
def _patch_socketpair() -> Iterator[None]:
    """Where the platform has no socketpair (Windows), Python connects two loopback sockets; an event loop's
    wake-up pair is not a request."""
    original = socket.socketpair

    def socketpair(*args: Any, **kwargs: Any) -> Any:
        return allowed_request(lambda: original(*args, **kwargs))

    socket.socketpair = socketpair
    try:
        yield
    finally:
        socket.socketpair = original


def _optional(name: str) -> Any:
    """The module if it is installed (imported here: a test may import it after the guard is up)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
