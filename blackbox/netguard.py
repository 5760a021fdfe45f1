"""A network guard for replayed tests: any request that does not go through Blackbox fails loudly.

In replay, Blackbox's transport answers every model call itself and never hands a request to the network
transport below it.  So while a test replays, *any* use of the network stack is a request made around
Blackbox: a client built without `bb.http_client()`, a plain httpx / httpx2 / requests call, a raw socket.
A bypass to a local stub hides the same bug as a bypass to the real API, so loopback is not exempt; only the
hosts the test names are.

The guard patches, for the lifetime of a `NetGuard.active()` block, the network transports of httpx and
httpx2 (sync and async) and requests' adapter, which know the URL, and `socket.socket.connect` /
`connect_ex` for IPv4 and IPv6, which catches everything else by address.  Every patch is restored on exit.
A refused request raises `refuse(message)` (the caller passes pytest's `fail` so the refusal is a
`BaseException` the SDKs' retry loops do not catch) and is kept in `violations`, so a caller that swallowed
the error still fails.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

__all__ = ["NetGuard", "parse_hosts"]

# Set while an allowed request runs, so the socket it opens is not refused a second time by address.
_ALLOWED: contextvars.ContextVar[bool] = contextvars.ContextVar("blackbox_netguard_allowed", default=False)

_LOOPBACK_NAMES = {"localhost": ("127.0.0.1", "::1"), "localhost.localdomain": ("127.0.0.1", "::1")}


def parse_hosts(values: Iterable[str]) -> frozenset[str]:
    """Host names or addresses, optionally `host:port`, from ini lines or a marker; lower-cased, stripped."""
    hosts: set[str] = set()
    for value in values:
        for part in str(value).replace(",", " ").split():
            hosts.add(part.strip().lower().strip("[]"))
    return frozenset(hosts)


def _split(entry: str) -> tuple[str, int | None]:
    """`host:port` → (host, port); an IPv6 address alone is not mistaken for one with a port."""
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        if port.isdecimal():
            return host, int(port)
    return entry, None


class NetGuard:
    """Refuses every network request outside the allowed hosts while `active()`."""

    def __init__(self, allow: frozenset[str], refuse: Callable[[str], NoReturn], what: str) -> None:
        self.allow = allow
        self.refuse_with = refuse
        self.what = what  # e.g. "this test replays tests/cassettes/x.json"
        self.violations: list[str] = []
        self.enabled = True  # off once the test records: a recording goes to the real API
        self._allowed_addresses: dict[str, tuple[str, ...]] = {}

    # -- the decision -------------------------------------------------------------------------------

    def allowed(self, host: str, port: int | None) -> bool:
        if not self.enabled:
            return True
        host = host.lower().strip("[]")
        for entry in self.allow:
            name, want_port = _split(entry)
            if want_port is not None and port is not None and want_port != port:
                continue
            if host == name or host in self._addresses(name):
                return True
        return False

    def _addresses(self, name: str) -> tuple[str, ...]:
        """The addresses an allowed name stands for (a raw socket only knows the address it connects to)."""
        if name in self._allowed_addresses:
            return self._allowed_addresses[name]
        found: tuple[str, ...]
        if _is_address(name):
            found = (name,)
        else:
            found = _LOOPBACK_NAMES.get(name, ())
            if not found:
                with contextlib.suppress(OSError, UnicodeError):
                    found = tuple({str(info[4][0]) for info in socket.getaddrinfo(name, None)})
        self._allowed_addresses[name] = found
        return found

    def _refuse(self, target: str, via: str) -> NoReturn:
        message = (f"[blackbox] a request went around Blackbox: {via} {target}\n"
                   f"  {self.what}, so every model call must go through the session's client "
                   "(http_client=blackbox.http_client(), or async_http_client() for an async SDK client) and "
                   "nothing else may use the network.\n"
                   "  If the test runs its own server, allow it: @pytest.mark.blackbox(allow_hosts=[\"127.0.0.1\"]) "
                   "or the ini setting blackbox_allow_hosts.")
        self.violations.append(f"{via} {target}")
        self.refuse_with(message)

    def check_url(self, url: Any, via: str) -> None:
        host = str(getattr(url, "host", "") or "")
        port = getattr(url, "port", None)
        if not self.allowed(host, port if isinstance(port, int) else _default_port(str(url))):
            self._refuse(str(url), via)

    def check_address(self, family: int, address: Any) -> None:
        if family not in (socket.AF_INET, socket.AF_INET6) or _ALLOWED.get() or not self.enabled:
            return
        if not isinstance(address, tuple) or len(address) < 2:
            return
        host, port = str(address[0]), address[1]
        if not self.allowed(host, port if isinstance(port, int) else None):
            shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            self._refuse(shown, "a socket connection to")

    # -- the patches --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def active(self) -> Iterator[NetGuard]:
        """Patch the network entry points; every patch is undone on exit, in reverse order."""
        with contextlib.ExitStack() as stack:
            for module_name in ("httpx", "httpx2"):
                module = _optional(module_name)
                if module is not None:
                    stack.enter_context(self._patch_httpx(module, module_name))
            requests_adapters = _optional("requests.adapters")
            if requests_adapters is not None:
                stack.enter_context(self._patch_requests(requests_adapters))
            stack.enter_context(self._patch_socket())
            yield self

    @contextlib.contextmanager
    def _patch_httpx(self, module: Any, name: str) -> Iterator[None]:
        sync_cls, async_cls = module.HTTPTransport, module.AsyncHTTPTransport
        original_sync, original_async = sync_cls.handle_request, async_cls.handle_async_request
        guard = self

        def handle_request(transport: Any, request: Any) -> Any:
            guard.check_url(request.url, f"{name} {request.method}")
            token = _ALLOWED.set(True)
            try:
                return original_sync(transport, request)
            finally:
                _ALLOWED.reset(token)

        async def handle_async_request(transport: Any, request: Any) -> Any:
            guard.check_url(request.url, f"{name} {request.method}")
            token = _ALLOWED.set(True)
            try:
                return await original_async(transport, request)
            finally:
                _ALLOWED.reset(token)

        sync_cls.handle_request = handle_request
        async_cls.handle_async_request = handle_async_request
        try:
            yield
        finally:
            sync_cls.handle_request = original_sync
            async_cls.handle_async_request = original_async

    @contextlib.contextmanager
    def _patch_requests(self, adapters: Any) -> Iterator[None]:
        cls = adapters.HTTPAdapter
        original = cls.send
        guard = self

        def send(adapter: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            url = str(request.url)
            host, port = _host_port(url)
            if not guard.allowed(host, port):
                guard._refuse(url, f"requests {request.method}")
            token = _ALLOWED.set(True)
            try:
                return original(adapter, request, *args, **kwargs)
            finally:
                _ALLOWED.reset(token)

        cls.send = send
        try:
            yield
        finally:
            cls.send = original

    @contextlib.contextmanager
    def _patch_socket(self) -> Iterator[None]:
        cls = socket.socket
        original_connect, original_connect_ex = cls.connect, cls.connect_ex
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            guard.check_address(sock.family, address)
            original_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard.check_address(sock.family, address)
            return original_connect_ex(sock, address)

        original_socketpair = socket.socketpair

        def socketpair(*args: Any, **kwargs: Any) -> Any:
            """Where the platform has no socketpair (Windows), Python connects two loopback sockets; an event
            loop's wake-up pair is not a request."""
            token = _ALLOWED.set(True)
            try:
                return original_socketpair(*args, **kwargs)
            finally:
                _ALLOWED.reset(token)

        cls.connect = connect  # type: ignore[method-assign,assignment]
        cls.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
        socket.socketpair = socketpair
        try:
            yield
        finally:
            cls.connect = original_connect  # type: ignore[method-assign]
            cls.connect_ex = original_connect_ex  # type: ignore[method-assign]
            socket.socketpair = original_socketpair


def _optional(name: str) -> Any:
    """The module if it is installed (imported here: a test may import it after the guard is up)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _is_address(text: str) -> bool:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, text)
        except (OSError, ValueError):
            continue
        return True
    return False


def _default_port(url: str) -> int | None:
    return 443 if url.startswith("https:") else 80 if url.startswith("http:") else None


def _host_port(url: str) -> tuple[str, int | None]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.hostname or ""), port if port is not None else _default_port(url)
