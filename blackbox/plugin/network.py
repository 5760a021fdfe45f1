"""A network guard for replayed tests: any request that does not go through Blackbox fails loudly.

In replay, Blackbox's transport answers every model call itself and never hands a request to the network
transport below it.  So while a test replays, *any* use of the network stack is a request made around
Blackbox: a client built without `bb.http_client()`, a plain httpx / httpx2 / requests call, a raw socket.
A bypass to a local stub hides the same bug as a bypass to the real API, so loopback is not exempt; only the
hosts the test names are.

Two layers, both undone when the last guard goes down:

- the HTTP libraries that know the URL a refusal names are patched (`plugin.net_patches`): httpx and httpx2
  transports, requests' adapter, aiohttp's connector.  The target host must be allowed, and so must a proxy
  the request goes through (`proxy=`, `proxies=`, `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY`): an allowed
  proxy forwards wherever it is asked, so it carries no request for a host nobody allowed;
- an audit hook (`sys.addaudithook`, installed once: a hook cannot be removed, so it does nothing while no
  guard is up) refuses every `socket.connect` / `connect_ex`, `sendto` and `sendmsg` with an address (UDP,
  TCP Fast Open), raised by the C socket module itself, reading the socket's family and address as the C
  module does (a subclass's `family` property is not asked).  That covers `_socket.socket`, which no Python
  patch reaches, and everything built on sockets: asyncio's `sock_connect`, `create_connection`,
  `create_datagram_endpoint`, `sock_sendto`; `sendfile` and `send` need a connected socket.  The same hook
  refuses a DNS lookup (`getaddrinfo`, `gethostbyname[_ex]`, `gethostbyaddr`, `getnameinfo`, and so asyncio's
  resolver, which calls them in a thread) of any name but an allowed one, a loopback name or the machine's own,
  and a proxy request line http.client sends (urllib, urllib3) for a host nobody allowed.

What stays open, in this process: a socket connected before the guard came up; a connection to an allowed
host carries whatever is written to it (a raw socket asking an allowed proxy for another host, or a client
this module does not know); a `_socket.socket` (the C class itself, not `socket.socket`) given a host name
resolves it before the refusal; native code that calls the C library itself (ctypes, an extension module with
its own network stack or resolver such as aiodns, an event loop such as uvloop).
A child process has its own interpreter: the guard exports `BLACKBOX_NO_NETWORK` (and the allowed hosts in
`BLACKBOX_ALLOW_HOSTS`) while it is up, and a Python child closes itself with `guard_from_environment()` (the
pytest plugin does this by itself in a child pytest run).

A refused request raises `refuse(message)` (the plugin passes pytest's `fail`, a child gets `NetworkRefused`:
both are `BaseException`s the SDKs' retry loops do not catch) and is kept in `violations`, so a caller that
swallowed the error still fails.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn
from urllib.parse import urlsplit

from blackbox.live.settings import ENV_ALLOW_HOSTS, ENV_NO_NETWORK
from blackbox.plugin.hosts import (
    LOOPBACK_NAMES,
    Host,
    address_host,
    address_port,
    format_hosts,
    host_port,
    is_address,
    is_local_name,
    is_loopback,
    normal,
    parse_hosts,
    shown,
)
from blackbox.plugin.net_patches import ALLOWED, patch_libraries, shown_url, true_family

__all__ = ["Host", "NetGuard", "NetworkRefused", "format_hosts", "guard_from_environment", "parse_hosts"]

# Families that talk to this machine's kernel, not to a network; every other family sends to one.
_LOCAL_FAMILIES = {getattr(socket, name) for name in ("AF_UNIX", "AF_NETLINK", "AF_ALG") if hasattr(socket, name)}
_AUDITED = {"socket.connect": "a socket connection to", "socket.sendto": "a datagram (sendto) to",
            "socket.sendmsg": "a message (sendmsg) to"}
_LOOKUPS = {"socket.getaddrinfo": False, "socket.gethostbyname": False,  # also gethostbyname_ex's event
            "socket.gethostbyaddr": True, "socket.getnameinfo": True}  # event: reverse?
# The request line http.client sends to a proxy: a tunnel (`CONNECT host:port`) or an absolute URI.
_PROXY_LINE = re.compile(rb"(CONNECT) (\S+) HTTP/\d(?:\.\d)?\r?\n|([A-Z]+) ([a-zA-Z][a-zA-Z0-9+.-]*://\S+) HTTP/")

_GUARDS: list[NetGuard] = []  # the guards up now; every one must allow a request
_PATCHES: contextlib.ExitStack | None = None  # the library patches, while any guard is up
_HOOKED = False


class NetworkRefused(BaseException):
    """A request refused outside pytest (a child process of a replayed test).  A `BaseException`, so an SDK's
    retry loop or a library's `except Exception` does not turn it into a retry or a silent fallback."""


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
        host = normal(host.strip("[]"))
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
        if is_address(name):
            found = (name,)
        else:
            found = LOOPBACK_NAMES.get(name, ())
            if not found:
                with contextlib.suppress(OSError, UnicodeError):
                    found = tuple({normal(str(info[4][0])) for info in socket.getaddrinfo(name, None)})
        self._allowed_addresses[name] = found
        return found

    def _refuse(self, target: str, via: str) -> NoReturn:
        self.violations.append(f"{via} {target}")
        self.refuse_with(f"[blackbox] a request went around Blackbox: {via} {target}\n  {self.explain()}")

    def check(self, host: str, port: int | None, target: str, via: str) -> None:
        """A request for `host:port` (`target` is what a refusal names): refused unless the host is allowed."""
        if not self.allowed(host, port):
            self._refuse(target, via)

    def check_url(self, url: Any, via: str) -> None:
        host, port = host_port(str(url))
        self.check(host, port, shown_url(str(url)), via)

    def check_address(self, family: int | None, address: Any, via: str = "a socket connection to") -> None:
        """A socket about to connect or send to `address` (an audit event, or the guard's own patches); read
        as the C module reads it, so a subclass cannot show the guard one address and connect to another."""
        if ALLOWED.get() or not self._enabled or family in _LOCAL_FAMILIES or address is None:
            return
        if family is None:
            self._refuse(f"{address!r} (address family unknown)", via)
        if family not in (socket.AF_INET, socket.AF_INET6):
            self._refuse(f"{address!r} (address family {_family_name(family)})", via)
        if not isinstance(address, tuple) or tuple.__len__(address) < 2:
            return  # not an address the C module accepts for this family: it raises itself
        host, port = address_host(tuple.__getitem__(address, 0)), address_port(tuple.__getitem__(address, 1))
        if host is None or port is None:
            self._refuse(f"{address!r}", via)
        self.check(host, port, shown(host, port), via)

    def check_lookup(self, host: Any, reverse: bool = False) -> None:
        """A name about to be resolved (or, `reverse`, an address about to be named): refused unless the query
        stays on this machine (an address, a loopback name, the machine's own) or is about an allowed host."""
        if not self._enabled:
            return
        name = host if host is None else address_host(host)
        if not name or is_local_name(name):
            return
        if reverse:
            if is_loopback(name) or self.allowed(name, None):
                return
            self._refuse(name, "a reverse DNS lookup of")
        if is_address(name.partition("%")[0]) or normal(name.rstrip(".")) in {entry for entry, _ in self.allow}:
            return
        self._refuse(name, "a DNS lookup of")

    def check_proxy_line(self, connection: Any, data: Any) -> None:
        """What http.client sends (urllib, urllib3, http.client itself): a request line that asks a proxy for
        another host names that host, which must be allowed like any other."""
        if not isinstance(data, bytes | bytearray | memoryview):
            return
        match = _PROXY_LINE.match(bytes(data[:2048]))
        if match is None:
            return
        proxy = shown(str(getattr(connection, "host", "?")), getattr(connection, "port", None))
        if match.group(1):
            authority = match.group(2).decode("ascii", "replace")
            parts = urlsplit(f"//{authority}")
            host, port = parts.hostname or "", _port_of(parts)
            self.check(host, port, f"{shown(host, port)}, asked of the proxy {proxy}", "http.client CONNECT")
        else:
            url = match.group(4).decode("ascii", "replace")
            host, port = host_port(url)
            method = match.group(3).decode("ascii")
            self.check(host, port, f"{shown_url(url)}, asked of the proxy {proxy}", f"http.client {method}")

    # -- the patches --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def active(self) -> Iterator[NetGuard]:
        """Up until the block ends: patches, the audit hook's attention, the child's variables; re-entrant."""
        if self._active:
            yield self
            return
        global _PATCHES
        if not _GUARDS:  # the first guard up patches the libraries, the last one down restores them
            _PATCHES = patch_libraries(_check, _lookup)
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
    if not _GUARDS:
        return
    if event in _AUDITED:
        family = true_family(args[0])
        for guard in tuple(_GUARDS):
            guard.check_address(family, args[1], _AUDITED[event])
    elif event in _LOOKUPS:
        reverse = _LOOKUPS[event]
        host = args[0]
        if event == "socket.getnameinfo":
            host = tuple.__getitem__(host, 0) if isinstance(host, tuple) and tuple.__len__(host) else None
        for guard in tuple(_GUARDS):
            guard.check_lookup(host, reverse)
    elif event == "http.client.send":
        for guard in tuple(_GUARDS):
            guard.check_proxy_line(args[0], args[1])


def _check(host: str, port: int | None, target: str, via: str) -> None:
    for guard in tuple(_GUARDS):
        guard.check(host, port, target, via)


def _lookup(host: str) -> None:
    for guard in tuple(_GUARDS):
        guard.check_lookup(host)


def _install_audit_hook() -> None:
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True


def _family_name(family: int) -> str:
    try:
        return socket.AddressFamily(family).name
    except ValueError:
        return str(family)


def _port_of(parts: Any) -> int | None:
    try:
        port = parts.port
    except ValueError:
        return None
    return port if port is not None else 443
