"""The network guard against the roads around an allowed host: a proxy (httpx `proxy=`, httpx2, requests
`proxies=`, aiohttp, urllib, http.client tunnels, `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY`) and DNS lookups.

A replayed test that allows one host may reach that host and nothing else: a proxy nobody allowed is refused
even for the allowed host, and an allowed proxy is refused a request for a host nobody allowed (it would
forward it).  The proxy is a real process (`tests/http_proxy.py`) printing every request it gets and every host
it connects to; the origins are HTTP servers on 127.0.0.1 counting what reaches them.  A name the test did not
allow is never looked up."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import pytest

from blackbox.plugin.network import NetGuard, parse_hosts
from tests.test_pytest_netguard import empty_cassette, run
from tests.test_pytest_plugin import lines
from tests.waiting import HANG_GUARD, ended

pytest_plugins = ["pytester"]

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


class Origin:
    """An HTTP server on 127.0.0.1 answering every request with `origin`, counting them (before it answers)."""

    def __init__(self) -> None:
        origin = self
        self.count = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # http.server's name for it
                origin.count += 1
                self.send_response(200)
                self.send_header("content-length", "6")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(b"origin")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Proxy:
    """tests/http_proxy.py as a process; `events()` is what it printed until now (a marker request is sent and
    waited for: the proxy prints in order, so every earlier event is in by then)."""

    def __init__(self) -> None:
        script = Path(__file__).parent / "http_proxy.py"
        self.process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        assert first.startswith("port "), first
        self.port = int(first.split()[1])
        self.lines: list[str] = []
        self._seen = threading.Condition()
        self._markers = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._seen:
                self.lines.append(line.rstrip("\n"))
                self._seen.notify_all()

    def events(self) -> list[str]:
        """Every `request` and `upstream` line the proxy printed before now."""
        self._markers += 1
        marker = f"request MARKER {self._markers} HTTP/1.1"
        with socket.create_connection(("127.0.0.1", self.port)) as sock:
            sock.sendall(f"MARKER {self._markers} HTTP/1.1\r\n\r\n".encode())
            with self._seen:
                assert self._seen.wait_for(lambda: marker in self.lines, timeout=HANG_GUARD), "the marker was lost"
                before = self.lines[:self.lines.index(marker)]
        return [line for line in before if not line.startswith(("accept", "request MARKER"))]

    def close(self) -> None:
        self.process.terminate()
        ended(self.process)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture
def roads(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Proxy, Origin, Origin]]:
    """The proxy, the allowed origin and another one; their ports in the environment, no proxy variable set."""
    for name in [n for n in os.environ if n.startswith("BLACKBOX_") or n.upper() in PROXY_VARIABLES] + ["CI"]:
        monkeypatch.delenv(name, raising=False)
    proxy, origin, other = Proxy(), Origin(), Origin()
    monkeypatch.setenv("PROXY_PORT", str(proxy.port))
    monkeypatch.setenv("ORIGIN_PORT", str(origin.port))
    monkeypatch.setenv("OTHER_PORT", str(other.port))
    try:
        yield proxy, origin, other
    finally:
        proxy.close()
        origin.close()
        other.close()


PROXIES = '''
import asyncio
import http.client
import os
import urllib.request

import aiohttp
import httpx
import httpx2
import pytest
import requests

PROXY_PORT, ORIGIN_PORT, OTHER_PORT = (int(os.environ[name]) for name in ("PROXY_PORT", "ORIGIN_PORT", "OTHER_PORT"))
PROXY = f"http://127.0.0.1:{PROXY_PORT}"
ORIGIN = f"http://127.0.0.1:{ORIGIN_PORT}/"
OTHER = f"http://127.0.0.1:{OTHER_PORT}/"

ONLY_THE_ORIGIN = pytest.mark.blackbox("cassettes/empty.json", allow_hosts=[f"127.0.0.1:{ORIGIN_PORT}"])
PROXY_AND_ORIGIN = pytest.mark.blackbox("cassettes/empty.json",
                                        allow_hosts=[f"127.0.0.1:{ORIGIN_PORT}", f"127.0.0.1:{PROXY_PORT}"])


@pytest.fixture(autouse=True)
def replays(blackbox):
    assert blackbox.mode == "replay"


def through_httpx(url):
    with httpx.Client(proxy=PROXY) as client:
        return client.get(url).content


def through_httpx2_async(url):
    async def go():
        async with httpx2.AsyncClient(proxy=PROXY) as client:
            return (await client.get(url)).content

    return asyncio.run(go())


def through_requests(url):
    with requests.Session() as session:
        return session.get(url, proxies={"http": PROXY}).content


def through_urllib(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": PROXY}))
    with opener.open(url) as response:
        return response.read()


def through_a_tunnel(url):
    connection = http.client.HTTPConnection("127.0.0.1", PROXY_PORT)
    try:
        connection.set_tunnel("127.0.0.1", int(url.rstrip("/").rsplit(":", 1)[1]))
        connection.request("GET", "/")
        return connection.getresponse().read()
    finally:
        connection.close()


def through_aiohttp(url):
    async def go():
        async with aiohttp.ClientSession() as session, session.get(url, proxy=PROXY) as response:
            return await response.read()

    return asyncio.run(go())


EVERY_CLIENT = [through_httpx, through_requests, through_urllib, through_a_tunnel, through_aiohttp]


@ONLY_THE_ORIGIN
@pytest.mark.parametrize("send", [through_httpx, through_httpx2_async, through_requests, through_aiohttp])
def test_a_proxy_nobody_allowed(send):
    send(ORIGIN)


@ONLY_THE_ORIGIN
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "all_proxy", "HTTPS_PROXY"])
@pytest.mark.parametrize("library", ["httpx", "requests"])
def test_a_proxy_from_the_environment(monkeypatch, library, variable):
    monkeypatch.setenv(variable, PROXY)
    url = ORIGIN.replace("http:", "https:") if variable == "HTTPS_PROXY" else ORIGIN
    with httpx.Client() if library == "httpx" else requests.Session() as client:
        client.get(url)


@PROXY_AND_ORIGIN
@pytest.mark.parametrize("send", EVERY_CLIENT)
def test_an_allowed_proxy_asked_for_another_host(send):
    send(OTHER)


@PROXY_AND_ORIGIN
@pytest.mark.parametrize("send", EVERY_CLIENT)
def test_an_allowed_proxy_to_the_allowed_origin(send):
    assert send(ORIGIN) == b"origin"
'''


def test_a_proxy_reaches_only_allowed_hosts_and_only_when_allowed_itself(
        pytester: pytest.Pytester, roads: tuple[Proxy, Origin, Origin]) -> None:
    proxy, origin, other = roads
    empty_cassette(pytester.path)
    pytester.makepyfile(test_proxies=PROXIES)
    result = run(pytester, "-p", "no:randomly")
    text = lines(result)
    result.assert_outcomes(passed=5, failed=15)
    at, to_origin, to_other = f"127.0.0.1:{proxy.port}", f"127.0.0.1:{origin.port}", f"127.0.0.1:{other.port}"
    unallowed = f"through the proxy {at}, which is not allowed\n"
    for refusal in (f"httpx GET http://{to_origin}/ {unallowed}", f"httpx2 GET http://{to_origin}/ {unallowed}",
                    f"requests GET http://{to_origin}/ {unallowed}", f"aiohttp GET http://{to_origin}/ {unallowed}",
                    f"httpx GET https://{to_origin}/ {unallowed}", f"requests GET https://{to_origin}/ {unallowed}",
                    f"httpx GET http://{to_other}/\n", f"requests GET http://{to_other}/\n",
                    f"http.client GET http://{to_other}/, asked of the proxy {at}\n",
                    f"http.client CONNECT {to_other}, asked of the proxy {at}\n", f"aiohttp GET http://{to_other}/\n"):
        assert f"[blackbox] a request went around Blackbox: {refusal}" in text, refusal
    assert text.count(unallowed) == 10, "every proxy nobody allowed is refused, whatever named it"
    assert proxy.events() == [f"request GET http://{to_origin}/ HTTP/1.1", f"upstream {to_origin}"] * 3 + [
        f"request CONNECT {to_origin} HTTP/1.0", f"upstream {to_origin}",
        f"request GET http://{to_origin}/ HTTP/1.1", f"upstream {to_origin}"], "only the allowed test's requests"
    assert (origin.count, other.count) == (5, 0)


LOOKUPS = '''
import asyncio
import contextlib
import socket

import pytest

NAME = "blackbox-never-looked-up.invalid"
pytestmark = pytest.mark.blackbox("cassettes/empty.json", allow_hosts=["127.0.0.1"])


@pytest.fixture(autouse=True)
def replays(blackbox):
    assert blackbox.mode == "replay"


def test_getaddrinfo():
    socket.getaddrinfo(NAME, 80)


def test_gethostbyname():
    socket.gethostbyname(NAME)


def test_gethostbyname_ex():
    socket.gethostbyname_ex(NAME)


def test_gethostbyaddr():
    socket.gethostbyaddr("192.0.2.7")


def test_getnameinfo():
    socket.getnameinfo(("192.0.2.8", 80), 0)


def test_create_connection_to_a_name():
    socket.create_connection((NAME, 80))


def test_connect_to_a_name():
    # the C module resolves a name before it tells the audit hook: refused before that
    with socket.socket() as sock:
        sock.connect((NAME, 81))


def test_asyncio_resolver():
    async def go():
        await asyncio.get_running_loop().getaddrinfo(NAME, 82)

    asyncio.run(go())


def test_asyncio_open_connection():
    async def go():
        await asyncio.open_connection(NAME, 83)

    asyncio.run(go())


def test_a_lookup_swallowed():
    with contextlib.suppress(BaseException):
        socket.getaddrinfo(NAME, 84)


def test_what_stays_on_this_machine():
    socket.getaddrinfo("localhost", 80)
    socket.getaddrinfo("127.0.0.1", 80)
    socket.getaddrinfo(None, 80)
    socket.gethostbyaddr("127.0.0.1")
    with contextlib.suppress(OSError):  # the machine's own name: answered here, if at all
        socket.gethostbyname(socket.gethostname())
    socket.getfqdn("127.0.0.1")
'''


def test_a_name_nobody_allowed_is_never_looked_up(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("BLACKBOX_")] + ["CI"]:
        monkeypatch.delenv(name, raising=False)
    empty_cassette(pytester.path)
    pytester.makepyfile(test_lookups=LOOKUPS)
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=10)
    text = lines(result)
    for refusal in ["a DNS lookup of blackbox-never-looked-up.invalid"] * 2 + [
            "a reverse DNS lookup of 192.0.2.7", "a reverse DNS lookup of 192.0.2.8"]:
        assert f"[blackbox] a request went around Blackbox: {refusal}" in text, refusal
    assert text.count("a DNS lookup of blackbox-never-looked-up.invalid") >= 8
    assert "(caught and swallowed): a DNS lookup of blackbox-never-looked-up.invalid" in text
    assert "gaierror" not in text, "no lookup was made"


def test_the_lookup_rules() -> None:
    """What a guard lets be resolved: allowed names (not a name merely resolving to an allowed address),
    addresses, loopback names; reverse lookups of loopback and allowed addresses."""
    refused: list[str] = []

    def refuse(message: str) -> NoReturn:
        refused.append(message.splitlines()[0])
        raise ConnectionRefusedError(message)

    names = NetGuard(parse_hosts(["api.example.com"]), refuse, lambda: "why")
    addresses = NetGuard(parse_hosts(["10.1.2.3:443"]), refuse, lambda: "why")  # reverse: nothing to resolve
    for name in ("api.example.com", "API.Example.com.", "10.9.9.9", "::1", "localhost", "a.localhost", None,
                 b"10.1.2.3"):
        names.check_lookup(name)
    for address in ("127.0.0.1", "::1", "10.1.2.3"):
        addresses.check_lookup(address, reverse=True)
    assert refused == []
    for guard, name, reverse in ((names, "other.example.com", False), (names, b"other.example.com", False),
                                 (addresses, "10.9.9.9", True)):
        with pytest.raises(ConnectionRefusedError):
            guard.check_lookup(name, reverse)
    assert refused == ["[blackbox] a request went around Blackbox: a DNS lookup of other.example.com"] * 2 + [
        "[blackbox] a request went around Blackbox: a reverse DNS lookup of 10.9.9.9"]
    names.enabled = False
    names.check_lookup("other.example.com")  # a recording test looks up what it wants
