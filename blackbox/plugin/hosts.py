"""Hosts as the network guard reads and compares them: the allowed-host entries (`host`, `host:port`, an IPv6
address, `[IPv6]:port`), one spelling per address, the host and port a URL or a socket address names, and the
names whose lookup never leaves the machine.  Pure functions: the guard (`plugin.network`) and its library
patches (`plugin.net_patches`) share them."""

from __future__ import annotations

import ipaddress
import operator
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Host", "address_host", "address_port", "default_port", "format_hosts", "host_port", "is_address",
           "is_local_name", "normal", "parse_hosts", "shown"]

Host = tuple[str, int | None]  # (name or address, port or any)

# Names the resolver answers from this machine (RFC 6761's `localhost` and the usual /etc/hosts spellings).
LOOPBACK_NAMES = {"localhost": ("127.0.0.1", "::1"), "localhost.localdomain": ("127.0.0.1", "::1"),
                  "ip6-localhost": ("::1",), "ip6-loopback": ("::1",)}
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "socks5": 1080, "socks5h": 1080,
                  "socks4": 1080, "socks4a": 1080}


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
    elif ":" in entry and not is_address(entry):
        raise ValueError(f"{text!r} is not a host, host:port, IPv6 address or [IPv6]:port")
    if not host or (port and not (port.isdecimal() and int(port) <= 65535)):
        raise ValueError(f"{text!r} is not a host or host:port (a port is a number up to 65535)")
    return normal(host), int(port) if port else None


def format_hosts(hosts: Iterable[Host]) -> str:
    """The entries as `parse_hosts` reads them back (for a child's environment, and for messages)."""
    return " ".join(sorted(shown(host, port) for host, port in hosts))


def shown(host: str, port: int | None) -> str:
    if port is None:
        return host
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def normal(host: str) -> str:
    """One spelling per address (`0:0::1` and `::1` are one host); a name as it is, lower-cased."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


def is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def is_local_name(name: str) -> bool:
    """A name the resolver answers without asking the network: a loopback name, or this machine's own name
    (`http.server` and `socket.getfqdn` look it up)."""
    name = name.rstrip(".").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    return name == socket.gethostname().lower()


def is_loopback(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def address_host(value: Any) -> str | None:
    """The host text of a socket address's first item as the C socket module reads it (a `str` or bytes; a
    subclass's overridden `__str__` is not asked), or None when it is neither."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bytes | bytearray):
        return bytes(memoryview(value)).decode("ascii", "replace")
    return None


def address_port(value: Any) -> int | None:
    """A socket address's port as the C module reads it (anything with `__index__`), or None."""
    try:
        return operator.index(value)
    except TypeError:
        return None


def default_port(url: str) -> int | None:
    scheme = url.partition(":")[0].lower()
    return _DEFAULT_PORTS.get(scheme)


def host_port(url: str) -> tuple[str, int | None]:
    """The host and port a URL names (its scheme's default port when it names none)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.hostname or ""), port if port is not None else default_port(url)
