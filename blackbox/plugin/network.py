"""A network guard for replayed tests: any request that does not go through Blackbox fails loudly.

In replay, Blackbox's transport answers every model call itself and never hands a request to the network
transport below it.  So while a test replays, *any* use of the network stack is a request made around
Blackbox: a client built without `bb.http_client()`, a plain httpx / httpx2 / requests call, a raw socket.
A bypass to a local stub hides the same bug as a bypass to the real API, so loopback is not exempt; only the
hosts the test names are.

Two layers, both undone when the last guard goes down:

- the network transports of httpx and httpx2 (sync and async) and requests' adapter are patched, because they
  know the URL the refusal names;
- an audit hook (`sys.addaudithook`, installed once: a hook cannot be removed, so it does nothing while no
  guard is up) refuses every `socket.connect` / `connect_ex`, `sendto` and `sendmsg` with an address (UDP,
  TCP Fast Open), raised by the C socket module itself.  That covers `_socket.socket`, which no Python patch
  reaches, and everything built on sockets: asyncio's `sock_connect`, `create_connection`,
  `create_datagram_endpoint`, `sock_sendto`; `sendfile` and `send` need a connected socket.

What stays open, in this process: a socket connected before the guard came up, and native code that calls the
C library itself (ctypes, an extension module with its own network stack, an event loop such as uvloop).
A child process has its own interpreter: the guard exports `BLACKBOX_NO_NETWORK` (and the allowed hosts in
`BLACKBOX_ALLOW_HOSTS`) while it is up, and a Python child closes itself with `guard_from_environment()` (the
pytest plugin does this by itself in a child pytest run).

A refused request raises `refuse(message)` (the plugin passes pytest's `fail`, a child gets `NetworkRefused`:
both are `BaseException`s the SDKs' retry loops do not catch) and is kept in `violations`, so a caller that
swallowed the error still fails.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import ipaddress
import os
import socket
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

from blackbox.live.settings import ENV_ALLOW_HOSTS, ENV_NO_NETWORK

__all__ = ["Host", "NetGuard", "NetworkRefused", "format_hosts", "guard_from_environment", "parse_hosts"]

Host = tuple[str, int | None]  # (name or address, port or any)

# Set while an allowed request runs, so the socket it opens is not refused a second time by address.
_ALLOWED: contextvars.ContextVar[bool] = contextvars.ContextVar("blackbox_netguard_allowed", default=False)

_LOOPBACK_NAMES = {"localhost": ("127.0.0.1", "::1"), "localhost.localdomain": ("127.0.0.1", "::1")}
# Families that talk to this machine's kernel, not to a network; every other family sends to one.
_LOCAL_FAMILIES = {getattr(socket, name) for name in ("AF_UNIX", "AF_NETLINK", "AF_ALG") if hasattr(socket, name)}
_AUDITED = {"socket.connect": "a socket connection to", "socket.sendto": "a datagram (sendto) to",
            "socket.sendmsg": "a message (sendmsg) to"}

_GUARDS: list[NetGuard] = []  # the guards up now; every one must allow a request
_PATCHES: contextlib.ExitStack | None = None  # the library patches, while any guard is up
_HOOKED = False


class NetworkRefused(BaseException):
    """A request refused outside pytest (a child process of a replayed test).  A `BaseException`, so an SDK's
    retry loop or a library's `except Exception` does not turn it into a retry or a silent fallback."""


def parse_hosts(values: Iterable[str]) -> frozenset[Host]:
    """Host entries from ini lines, a marker or the environment: `host`, `host:port`, an IPv6 address, or
    `[IPv6]:port`; comma or space separated.  A bad entry raises ValueError naming it."""
    hosts: set[Host] = set()
    for value in values:
        for part in str(value).replace(",", " ").split():
            hosts.add(_parse_host(part))
    return frozenset(hosts)


def _parse_host(text: str) -> Host:
    entry = text.strip().lower()
    host, port = entry, ""
    if entry.startswith("["):
        host, bracket, rest = entry[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r} is not a host: write an IPv6 address as [::1] or [::1]:8080")
        port = rest[1:] if rest else ""
        if rest and not port:
            raise ValueError(f"{text!r} has no port after the colon")
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
        if not port:
            raise ValueError(f"{text!r} has no port after the colon")
    elif ":" in entry and not _is_address(entry):
        raise ValueError(f"{text!r} is not a host, host:port, IPv6 address or [IPv6]:port")
    if not host or (port and not (port.isdecimal() and int(port) <= 65535)):
        raise ValueError(f"{text!r} is not a host or host:port (a port is a number up to 65535)")
    return _normal(host), int(port) if port else None


def format_hosts(hosts: Iterable[Host]) -> str:
    """The entries as `parse_hosts` reads them back (for a child's environment, and for messages)."""
    return " ".join(sorted(_shown(host, port) for host, port in hosts))


def _shown(host: str, port: int | None) -> str:
    if port is None:
        return host
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class NetGuard:
    """Refuses every network request outside the allowed hosts while `active()` and `enabled`."""

    def __init__(self, allow: frozenset[Host], refuse: Callable[[str], NoReturn], explain: Callable[[], str],
                 started_by: Callable[[], str] | None = None) -> None:
        self.allow = allow
        self.refuse_with = refuse
        self.explain = explain  # the lines after the first of a refusal: why nothing may go out, what to do
        self.started_by = started_by  # what a child process is told (BLACKBOX_NO_NETWORK); None: not exported
        self.violations: list[str] = []
        self._enabled = True
        self._active = False
        self._exported: dict[str, str | None] = {}
        self._allowed_addresses: dict[str, tuple[str, ...]] = {}
        self._process_stack: contextlib.ExitStack | None = None

    # -- on or off -----------------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        """Off once the test records (a recording goes to the real API); a child started then may use it too."""
        self._enabled = value
        if self._active:
            self._export()

    def _export(self) -> None:
        """While on, a child process inherits the guard's variables; off, the ones from before come back."""
        if self.started_by is None:
            return
        if self._enabled:
            for name, value in ((ENV_NO_NETWORK, self.started_by()),
                                (ENV_ALLOW_HOSTS, format_hosts(self.allow))):
                self._exported.setdefault(name, os.environ.get(name))
                os.environ[name] = value
        else:
            self._unexport()

    def _unexport(self) -> None:
        for name, value in self._exported.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._exported.clear()

    # -- the decision -------------------------------------------------------------------------------

    def allowed(self, host: str, port: int | None) -> bool:
        if not self._enabled:
            return True
        host = _normal(host.strip("[]"))
        for name, want_port in self.allow:
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
                    found = tuple({_normal(str(info[4][0])) for info in socket.getaddrinfo(name, None)})
        self._allowed_addresses[name] = found
        return found

    def _refuse(self, target: str, via: str) -> NoReturn:
        self.violations.append(f"{via} {target}")
        self.refuse_with(f"[blackbox] a request went around Blackbox: {via} {target}\n  {self.explain()}")

    def check_url(self, url: Any, via: str) -> None:
        host = str(getattr(url, "host", "") or "")
        port = getattr(url, "port", None)
        if not self.allowed(host, port if isinstance(port, int) else _default_port(str(url))):
            self._refuse(str(url), via)

    def check_address(self, family: int, address: Any, via: str = "a socket connection to") -> None:
        """A socket about to connect or send to `address` (an audit event, or the guard's own patches)."""
        if _ALLOWED.get() or not self._enabled or family in _LOCAL_FAMILIES or address is None:
            return
        if family not in (socket.AF_INET, socket.AF_INET6):
            self._refuse(f"{address!r} (address family {_family_name(family)})", via)
        if not isinstance(address, tuple) or len(address) < 2:
            return  # not an address the C module accepts for this family: it raises itself
        host, port = str(address[0]), address[1]
        if not self.allowed(host, port if isinstance(port, int) else None):
            self._refuse(_shown(host, port if isinstance(port, int) else None), via)

    # -- the patches --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def active(self) -> Iterator[NetGuard]:
        """Up until the block ends: patches, the audit hook's attention, the child's variables; re-entrant."""
        if self._active:
            yield self
            return
        global _PATCHES
        if not _GUARDS:  # the first guard up patches the libraries, the last one down restores them
            _PATCHES = _patch_libraries()
        _install_audit_hook()
        _GUARDS.append(self)
        self._active = True
        try:
            self._export()
            yield self
        finally:
            self._active = False
            self._unexport()
            _GUARDS.remove(self)
            if not _GUARDS and _PATCHES is not None:
                patches, _PATCHES = _PATCHES, None
                patches.close()

    def install(self) -> None:
        """Up for the rest of the process (a child of a replayed test has no block to end)."""
        if self._process_stack is None:
            self._process_stack = contextlib.ExitStack()
            self._process_stack.enter_context(self.active())

    def uninstall(self) -> None:
        if self._process_stack is not None:
            self._process_stack.close()
            self._process_stack = None


def guard_from_environment(refuse: Callable[[str], NoReturn] | None = None,
                           environ: dict[str, str] | None = None) -> NetGuard | None:
    """In a process started by a replayed test (`BLACKBOX_NO_NETWORK` set), put the guard up for the rest of
    the process, with the hosts that test allows; elsewhere do nothing.  Call it first thing in a child (its
    `sitecustomize`, `conftest.py` or `main`); the pytest plugin calls it in a child pytest run."""
    env = os.environ if environ is None else environ
    started_by = env.get(ENV_NO_NETWORK)
    if not started_by:
        return None
    try:
        allow = parse_hosts([env.get(ENV_ALLOW_HOSTS, "")])
    except ValueError as exc:
        raise SystemExit(f"[blackbox] {ENV_ALLOW_HOSTS}: {exc}") from None

    def raise_refused(message: str) -> NoReturn:
        raise NetworkRefused(message)

    def explain() -> str:
        return (f"{started_by}, and this process was started by it: nothing in it may use the network "
                f"(allowed: {format_hosts(allow) or 'no host'}; allow a host in the test that started it)")

    guard = NetGuard(allow, refuse or raise_refused, explain, started_by=lambda: started_by)
    guard.install()
    return guard


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: asked for every audited event of the process, so it returns at once when no guard is up."""
    if not _GUARDS or event not in _AUDITED:
        return
    sock, address = args[0], args[1]
    family = getattr(sock, "family", None)
    if isinstance(family, int):
        for guard in tuple(_GUARDS):
            guard.check_address(family, address, _AUDITED[event])


def _patch_libraries() -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    for module_name in ("httpx", "httpx2"):
        module = _optional(module_name)
        if module is not None:
            stack.enter_context(_patch_httpx(module, module_name))
    requests_adapters = _optional("requests.adapters")
    if requests_adapters is not None:
        stack.enter_context(_patch_requests(requests_adapters))
    stack.enter_context(_patch_socketpair())
    return stack


def _install_audit_hook() -> None:
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True


def _allowed_request(call: Callable[[], Any]) -> Any:
    token = _ALLOWED.set(True)
    try:
        return call()
    finally:
        _ALLOWED.reset(token)


def _check_url(url: Any, via: str) -> None:
    for guard in tuple(_GUARDS):
        guard.check_url(url, via)


@contextlib.contextmanager
def _patch_httpx(module: Any, name: str) -> Iterator[None]:
    sync_cls, async_cls = module.HTTPTransport, module.AsyncHTTPTransport
    original_sync, original_async = sync_cls.handle_request, async_cls.handle_async_request

    def handle_request(transport: Any, request: Any) -> Any:
        _check_url(request.url, f"{name} {request.method}")
        return _allowed_request(lambda: original_sync(transport, request))

    async def handle_async_request(transport: Any, request: Any) -> Any:
        _check_url(request.url, f"{name} {request.method}")
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
def _patch_requests(adapters: Any) -> Iterator[None]:
    cls = adapters.HTTPAdapter
    original = cls.send

    def send(adapter: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        url = str(request.url)
        host, port = _host_port(url)
        for guard in tuple(_GUARDS):
            if not guard.allowed(host, port):
                guard._refuse(url, f"requests {request.method}")
        return _allowed_request(lambda: original(adapter, request, *args, **kwargs))

    cls.send = send
    try:
        yield
    finally:
        cls.send = original


@contextlib.contextmanager
def _patch_socketpair() -> Iterator[None]:
    """Where the platform has no socketpair (Windows), Python connects two loopback sockets; an event loop's
    wake-up pair is not a request."""
    original = socket.socketpair

    def socketpair(*args: Any, **kwargs: Any) -> Any:
        return _allowed_request(lambda: original(*args, **kwargs))

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


def _normal(host: str) -> str:
    """One spelling per address (`0:0::1` and `::1` are one host); a name as it is, lower-cased."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _family_name(family: int) -> str:
    try:
        return socket.AddressFamily(family).name
    except ValueError:
        return str(family)


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
