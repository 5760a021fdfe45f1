"""The pytest plugin's network guard, driven by `pytester`: replayed tests try every way a socket sends (TCP,
UDP, TCP Fast Open, the C socket class, asyncio, a thread, a child process) in every phase (fixture setup, the
call, fixture teardown), and a loopback sink counts what reached it.  The sink's count is taken after a marker
connection and a marker datagram arrive (the kernel queues loopback traffic in order), so no test waits on a
clock."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

import blackbox
from blackbox.live.settings import ENV_ALLOW_HOSTS, ENV_NO_NETWORK
from blackbox.plugin.network import NetGuard, format_hosts, guard_from_environment, parse_hosts
from tests.test_pytest_plugin import NO_PLUGINS, lines, says
from tests.waiting import HANG_GUARD

pytest_plugins = ["pytester"]


class Sink:
    """A TCP listener and a UDP socket on one loopback address, counting connections and datagrams."""

    def __init__(self, host: str) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.host, self.family = host, family
        self.tcp = socket.socket(family, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "TCP_FASTOPEN"):  # so a Fast Open client's data would be taken with the SYN
            self.tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
        self.tcp.bind((host, 0))
        self.tcp.listen(64)
        self.udp = socket.socket(family, socket.SOCK_DGRAM)
        self.udp.bind((host, 0))
        self.connections: list[object] = []
        self.datagrams: list[bytes] = []
        self._markers: set[object] = set()
        self._expected: set[object] = set()  # the marker connection's key, while `counts` waits for it
        self._seen = threading.Condition()
        self._open: list[socket.socket] = []
        for target in (self._accept, self._receive):
            threading.Thread(target=target, daemon=True).start()

    @property
    def tcp_port(self) -> int:
        return int(self.tcp.getsockname()[1])

    @property
    def udp_port(self) -> int:
        return int(self.udp.getsockname()[1])

    def _accept(self) -> None:
        while True:
            try:
                conn, peer = self.tcp.accept()
            except OSError:
                return
            with self._seen:
                self._open.append(conn)
                key = ("tcp", peer[1])
                if key in self._expected:
                    self._markers.add(key)
                else:
                    self.connections.append(key)
                self._seen.notify_all()

    def _receive(self) -> None:
        while True:
            try:
                data = self.udp.recv(65536)
            except OSError:
                return
            with self._seen:
                if data.startswith(b"MARKER "):
                    self._markers.add(("udp", data))
                else:
                    self.datagrams.append(data)
                self._seen.notify_all()

    def counts(self) -> tuple[int, int]:
        """(connections, datagrams) that arrived before now: a marker of each is sent and waited for."""
        marker = socket.socket(self.family, socket.SOCK_STREAM)
        marker.bind((self.host, 0))
        tcp_key = ("tcp", marker.getsockname()[1])
        udp_key = ("udp", f"MARKER {tcp_key[1]}".encode())
        self._expected = {tcp_key}
        marker.connect((self.host, self.tcp_port))
        sender = socket.socket(self.family, socket.SOCK_DGRAM)
        sender.sendto(udp_key[1], (self.host, self.udp_port))
        with self._seen:
            assert self._seen.wait_for(lambda: {tcp_key, udp_key} <= self._markers, timeout=HANG_GUARD), "markers lost"
        marker.close()
        sender.close()
        return len(self.connections), len(self.datagrams)

    def close(self) -> None:
        for sock in (self.tcp, self.udp, *self._open):
            sock.close()


@pytest.fixture
def sink(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sink]:
    found = Sink("127.0.0.1")
    monkeypatch.setenv("SINK_HOST", found.host)
    monkeypatch.setenv("SINK_TCP", str(found.tcp_port))
    monkeypatch.setenv("SINK_UDP", str(found.udp_port))
    for name in [n for n in os.environ if n.startswith("BLACKBOX_")] + ["CI"]:
        monkeypatch.delenv(name, raising=False)
    yield found
    found.close()


def empty_cassette(folder: Path, name: str = "empty.json") -> Path:
    """A cassette of a run that made no call (what the plugin records for a test that only builds a client)."""
    path = folder / "cassettes" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    blackbox.session(mode="record", out=path, trace_id="empty").finish()
    return path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(*NO_PLUGINS, *args)


HEADER = '''
import asyncio
import contextlib
import os
import socket
import _socket
import subprocess
import sys
import threading

import pytest

HOST = os.environ["SINK_HOST"]
TCP, UDP = int(os.environ["SINK_TCP"]), int(os.environ["SINK_UDP"])
FAMILY = socket.AF_INET6 if ":" in HOST else socket.AF_INET


SOCKETS = []


def teardown_module():
    for sock in SOCKETS:
        sock.close()


def new(kind=socket.SOCK_STREAM, cls=socket.socket):
    """A socket closed when the module ends (a refused one is never connected, and never closed by its test)."""
    SOCKETS.append(cls(FAMILY, kind))
    return SOCKETS[-1]


def replays(blackbox):
    assert blackbox.mode == "replay"


def udp(data=b"udp"):
    new(socket.SOCK_DGRAM).sendto(data, (HOST, UDP))


def tcp():
    # closed even when refused (create_connection closes its socket only on an OSError, not on a refusal)
    with socket.socket(FAMILY, socket.SOCK_STREAM) as sock:
        sock.connect((HOST, TCP))
'''

EVERY_WAY = HEADER + '''
pytestmark = pytest.mark.blackbox("cassettes/empty.json")


def test_udp_sendto(blackbox):
    replays(blackbox)
    udp()


def test_udp_swallowed(blackbox):
    replays(blackbox)
    try:
        udp()
    except BaseException:
        pass


def test_tcp_fast_open_sendto(blackbox):
    replays(blackbox)
    new().sendto(b"tfo", socket.MSG_FASTOPEN, (HOST, TCP))


def test_tcp_fast_open_sendmsg(blackbox):
    replays(blackbox)
    new().sendmsg([b"tfo"], [], socket.MSG_FASTOPEN, (HOST, TCP))


def test_udp_sendmsg(blackbox):
    replays(blackbox)
    new(socket.SOCK_DGRAM).sendmsg([b"udp"], [], 0, (HOST, UDP))


def test_c_socket_connect(blackbox):
    replays(blackbox)
    new(cls=_socket.socket).connect((HOST, TCP))


def test_c_socket_connect_ex(blackbox):
    replays(blackbox)
    assert new(cls=_socket.socket).connect_ex((HOST, TCP)) == 0


def test_c_socket_sendto(blackbox):
    replays(blackbox)
    new(socket.SOCK_DGRAM, _socket.socket).sendto(b"udp", (HOST, UDP))


def test_asyncio_sock_connect(blackbox):
    replays(blackbox)

    async def go():
        sock = new()
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (HOST, TCP))

    asyncio.run(go())


def test_asyncio_create_connection(blackbox):
    replays(blackbox)

    async def go():
        await asyncio.get_running_loop().create_connection(asyncio.Protocol, HOST, TCP)

    asyncio.run(go())


def test_asyncio_datagram_endpoint(blackbox):
    replays(blackbox)

    async def go():
        transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=(HOST, UDP))
        with contextlib.closing(transport):
            transport.sendto(b"udp")

    asyncio.run(go())


def test_asyncio_datagram_sendto(blackbox):
    # the transport's sendto catches every exception and only logs it: the guard still fails the test
    replays(blackbox)

    async def go():
        transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
            asyncio.DatagramProtocol, local_addr=(HOST, 0))
        with contextlib.closing(transport):
            transport.sendto(b"udp", (HOST, UDP))

    asyncio.run(go())


def test_in_a_thread(blackbox):
    replays(blackbox)
    thread = threading.Thread(target=tcp)
    thread.start()
    thread.join()


class Hidden(socket.socket):
    """A socket whose `family` says nothing the guard knows; the C module still connects by its real one."""

    @property
    def family(self):
        return "inet"


def test_a_subclass_hiding_its_family(blackbox):
    replays(blackbox)
    new(cls=Hidden).connect((HOST, TCP))
'''
EVERY_WAY_COUNT = EVERY_WAY.count("\ndef test_")


@pytest.mark.parametrize("mode", ["replay", "record-new"])
def test_every_way_a_socket_sends_is_refused(pytester: pytest.Pytester, sink: Sink, mode: str) -> None:
    """Under --blackbox-record too: a cassette that exists replays, and the guard must stay up for it."""
    empty_cassette(pytester.path)
    pytester.makepyfile(test_ways=EVERY_WAY)
    result = run(pytester, *(["--blackbox-record"] if mode == "record-new" else []))
    result.assert_outcomes(failed=EVERY_WAY_COUNT)
    assert sink.counts() == (0, 0), "nothing reached the sink"
    text = lines(result)
    host = sink.host
    for line in (f"a datagram (sendto) to {host}:{sink.udp_port}", f"a message (sendmsg) to {host}:{sink.tcp_port}",
                 f"a socket connection to {host}:{sink.tcp_port}", "(caught and swallowed): a datagram (sendto)"):
        assert line in text, line
    says(result, "this test replays cassettes/empty.json")
    if mode == "record-new":
        says(result, "it exists, so --blackbox-record replays it")
    assert f"{EVERY_WAY_COUNT} bypassed Blackbox" in text
    assert ENV_NO_NETWORK not in os.environ


PHASES = HEADER + '''
pytestmark = pytest.mark.blackbox("cassettes/empty.json")


@pytest.fixture
def connects_in_setup():
    tcp()
    yield


@pytest.fixture
def sends_in_teardown():
    yield
    udp(b"function teardown")


@pytest.fixture
def swallows_in_teardown():
    yield
    try:
        tcp()
    except BaseException:
        pass


@pytest.fixture(scope="module")
def module_wide():
    tcp()  # wider scopes are shared with tests that do not replay: outside the guard, as documented
    yield
    udp(b"module teardown")


def test_fixture_setup(connects_in_setup, blackbox):
    replays(blackbox)


def test_fixture_teardown(blackbox, sends_in_teardown):
    replays(blackbox)


def test_fixture_teardown_swallowed(blackbox, swallows_in_teardown):
    replays(blackbox)


def test_module_fixture(module_wide, blackbox):
    replays(blackbox)
'''


def test_fixtures_are_guarded_in_setup_and_teardown(pytester: pytest.Pytester, sink: Sink) -> None:
    empty_cassette(pytester.path)
    pytester.makepyfile(test_phases=PHASES)
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=3, errors=3)  # the two teardown tests pass, then their teardown errs
    assert sink.counts() == (1, 1), "only the module-scoped fixture's connection and datagram arrived"
    says(result, "ERROR at setup of test_fixture_setup", f"a socket connection to {sink.host}:{sink.tcp_port}")
    says(result, "ERROR at teardown of test_fixture_teardown ", f"a datagram (sendto) to {sink.host}:{sink.udp_port}")
    says(result, "ERROR at teardown of test_fixture_teardown_swallowed",
         "the test's teardown made requests around Blackbox (caught and swallowed): a socket connection to")
    says(result, "3 bypassed Blackbox")


RECORDING = HEADER + '''

@pytest.mark.blackbox("cassettes/new.json")
def test_records(blackbox):
    tcp()  # before the recording starts: the test records, so it may use the network
    assert blackbox.mode == "record"
    udp(b"while recording")


@pytest.mark.blackbox("cassettes/skipped.json")
def test_skipped(blackbox):
    blackbox.http_client()
    pytest.skip("not today")


@pytest.mark.xfail(reason="known to fail")
@pytest.mark.blackbox("cassettes/xpassed.json")
def test_xpassed(blackbox):
    blackbox.http_client()


@pytest.mark.xfail(reason="known to fail")
@pytest.mark.blackbox("cassettes/xfailed.json")
def test_xfailed(blackbox):
    blackbox.http_client()
    assert False
'''


def test_a_recording_test_may_use_the_network_and_the_summary_says_why_nothing_was_written(
        pytester: pytest.Pytester, sink: Sink) -> None:
    pytester.makepyfile(test_recording=RECORDING)
    result = run(pytester, "--blackbox-record")
    result.assert_outcomes(passed=1, skipped=1, xpassed=1, xfailed=1)
    assert sink.counts() == (1, 1)
    assert "this test replays" not in lines(result)
    assert (pytester.path / "cassettes/new.json").is_file()
    says(result, "cassettes: 0 replayed, 1 recorded, 0 missing, 0 diverged, 3 not recorded")
    text = lines(result)
    for line in ("cassettes/skipped.json: not recorded: the test was skipped",
                 "cassettes/xpassed.json: not recorded: the test is marked xfail (it passed: remove the mark",
                 "cassettes/xfailed.json: not recorded: the test is marked xfail"):
        assert line in text, line
    assert "the test failed" not in text
    assert not list((pytester.path / "cassettes").glob(".*")), "no temporary recording is left"


ALLOWED = HEADER + '''
pytestmark = pytest.mark.blackbox("cassettes/empty.json", allow_hosts=[f"[{HOST}]:{TCP}"])


def test_the_allowed_port(blackbox):
    replays(blackbox)
    tcp()
    new().sendto(b"tfo", socket.MSG_FASTOPEN, (HOST, TCP))


def test_another_port(blackbox):
    replays(blackbox)
    udp()


class Port:
    """A port as the C module also takes it (anything with `__index__`)."""

    def __index__(self):
        return UDP


def test_another_port_not_an_int(blackbox):
    replays(blackbox)
    new(socket.SOCK_DGRAM).sendto(b"udp", (HOST, Port()))


class TestAFixtureAllows:
    @pytest.fixture
    def blackbox_allow_hosts(self):
        return [f"[{HOST}]:{UDP}"]

    def test_its_port(self, blackbox):
        replays(blackbox)
        udp()
'''


def test_an_ipv6_host_with_its_port_is_allowed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        six = Sink("::1")
    except OSError as exc:  # pragma: no cover - a machine without IPv6 loopback
        pytest.fail(f"this test needs the IPv6 loopback address ::1: {exc}")
    try:
        monkeypatch.setenv("SINK_HOST", six.host)
        monkeypatch.setenv("SINK_TCP", str(six.tcp_port))
        monkeypatch.setenv("SINK_UDP", str(six.udp_port))
        empty_cassette(pytester.path)
        pytester.makepyfile(test_allowed=ALLOWED)
        result = run(pytester)
        result.assert_outcomes(passed=2, failed=2)
        says(result, "test_another_port", f"a datagram (sendto) to [::1]:{six.udp_port}")
        says(result, "test_another_port_not_an_int", f"a datagram (sendto) to [::1]:{six.udp_port}")
        assert six.counts() == (2, 1), "the allowed port's two connections and the fixture's datagram"
    finally:
        six.close()


def test_bad_allowed_hosts_are_one_clear_line(pytester: pytest.Pytester, sink: Sink) -> None:
    empty_cassette(pytester.path)
    pytester.makepyfile(test_bad='''
import pytest

@pytest.mark.blackbox("cassettes/empty.json", allow_hosts=["[::1"])
def test_bad(blackbox):
    pass
''')
    result = run(pytester)
    result.assert_outcomes(errors=1)
    says(result, "[blackbox] @pytest.mark.blackbox(allow_hosts=...): '[::1' is not a host: write an IPv6 address "
                 "as [::1] or [::1]:8080")
    pytester.makeini("[pytest]\nblackbox_allow_hosts = 127.0.0.1:http\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "blackbox_allow_hosts: '127.0.0.1:http' is not a host or host:port" in "\n".join(result.errlines)


def test_parse_hosts_reads_every_spelling() -> None:
    assert parse_hosts(["[::1]:8080, localhost", "127.0.0.1:80 ::1", "[0:0::1]", "API.example.com"]) == {
        ("::1", 8080), ("localhost", None), ("127.0.0.1", 80), ("::1", None), ("api.example.com", None)}
    assert parse_hosts([format_hosts({("::1", 8080), ("h", None), ("10.0.0.1", 1)})]) == {
        ("::1", 8080), ("h", None), ("10.0.0.1", 1)}
    for bad in ("[::1]8080", "[::1]:", "host:", ":80", "a:b:c", "host:65536"):
        with pytest.raises(ValueError, match=r"is not a host|no port"):
            parse_hosts([bad])


CHILDREN = HEADER + '''
CHILD = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2]))).close()"
GUARDED = "import blackbox.plugin.network; blackbox.plugin.network.guard_from_environment(); " + CHILD
CHILD_TEST = """
import os, socket

def test_plain():
    socket.create_connection((os.environ["SINK_HOST"], int(os.environ["SINK_TCP"]))).close()
"""

pytestmark = pytest.mark.blackbox("cassettes/empty.json")


def test_a_plain_child_is_not_guarded(blackbox):
    replays(blackbox)
    subprocess.run([sys.executable, "-c", CHILD, HOST, str(TCP)], check=True)


def test_a_child_that_asks_is_guarded(blackbox):
    replays(blackbox)
    done = subprocess.run([sys.executable, "-c", GUARDED, HOST, str(TCP)], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "NetworkRefused: [blackbox] a request went around Blackbox: a socket connection to" in done.stderr
    assert "test_children.py::test_a_child_that_asks_is_guarded replays cassettes/empty.json, and this process was " \\
        "started by it" in done.stderr


def test_a_child_pytest_is_guarded(blackbox, tmp_path):
    replays(blackbox)
    (tmp_path / "test_child.py").write_text(CHILD_TEST)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert "[blackbox] a request went around Blackbox: a socket connection to" in done.stdout


def test_the_variables_are_gone_after_the_test():
    assert "BLACKBOX_NO_NETWORK" not in os.environ and "BLACKBOX_ALLOW_HOSTS" not in os.environ
'''


def test_a_child_process_is_guarded_when_it_asks(pytester: pytest.Pytester, sink: Sink) -> None:
    """A child has its own interpreter: the guard tells it (BLACKBOX_NO_NETWORK), a child pytest and a child that
    calls `guard_from_environment()` refuse, and a child that does neither reaches the network (documented)."""
    empty_cassette(pytester.path)
    pytester.makepyfile(test_children=CHILDREN)
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=4)
    assert sink.counts() == (1, 0), "only the plain child's connection arrived"


CHILDREN_ALLOWED = HEADER + '''
CHILD = """
import socket, sys
import blackbox.plugin.network
blackbox.plugin.network.guard_from_environment()
host, tcp, udp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socket.create_connection((host, tcp)).close()
print("connected", flush=True)
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
    sock.sendto(b"child", (host, udp))
print("sent", flush=True)
"""
CHILD_TESTS = """
import os, socket

HOST, TCP, UDP = os.environ["SINK_HOST"], int(os.environ["SINK_TCP"]), int(os.environ["SINK_UDP"])


def test_the_allowed_host():
    socket.create_connection((HOST, TCP)).close()


def test_another_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"child pytest", (HOST, UDP))
"""

pytestmark = pytest.mark.blackbox("cassettes/empty.json", allow_hosts=[f"{HOST}:{TCP}"])


def child():
    return subprocess.run([sys.executable, "-c", CHILD, HOST, str(TCP), str(UDP)], capture_output=True, text=True)


def test_a_child_reaches_the_allowed_host_only(blackbox):
    replays(blackbox)
    done = child()
    assert done.returncode == 1 and done.stdout == "connected\\n", done.stderr
    assert f"NetworkRefused: [blackbox] a request went around Blackbox: a datagram (sendto) to {HOST}:{UDP}" \\
        in done.stderr
    assert f"(allowed: {HOST}:{TCP}; allow a host in the test that started it)" in done.stderr


def test_a_child_pytest_reaches_the_allowed_host_only(blackbox, tmp_path):
    replays(blackbox)
    (tmp_path / "test_child.py").write_text(CHILD_TESTS)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                           str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert "1 failed, 1 passed" in done.stdout, done.stdout
    assert f"a request went around Blackbox: a datagram (sendto) to {HOST}:{UDP}" in done.stdout


class TestAFixtureAllows:
    @pytest.fixture
    def blackbox_allow_hosts(self):
        return [f"{HOST}:{UDP}"]

    def test_its_host_reaches_the_child_too(self, blackbox):
        replays(blackbox)
        done = child()
        assert done.returncode == 0 and done.stdout == "connected\\nsent\\n", done.stderr
'''


def test_a_child_is_allowed_what_its_test_allows(pytester: pytest.Pytester, sink: Sink) -> None:
    """The hosts a test allows (its marker's, its fixture's) reach a child that closes itself and a child pytest,
    and no other: the child connects to the allowed port and is refused the other."""
    empty_cassette(pytester.path)
    pytester.makepyfile(test_children_allowed=CHILDREN_ALLOWED)
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    assert sink.counts() == (3, 1), "three children connected to the allowed port, one sent where its test allowed"


def test_guard_from_environment_is_a_no_op_without_its_variable(sink: Sink) -> None:
    assert guard_from_environment(environ={}) is None
    refused: list[str] = []

    def refuse(message: str) -> NoReturn:
        refused.append(message)
        raise ConnectionRefusedError(message)

    guard = guard_from_environment(refuse, environ={ENV_NO_NETWORK: "tests/x.py::test_y replays x.json",
                                                    ENV_ALLOW_HOSTS: f"{sink.host}:{sink.udp_port}"})
    assert isinstance(guard, NetGuard)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.sendto(b"allowed", (sink.host, sink.udp_port))
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((sink.host, sink.tcp_port))
    finally:
        guard.uninstall()
    assert refused and "tests/x.py::test_y replays x.json, and this process was started by it" in refused[0]
    socket.create_connection((sink.host, sink.tcp_port)).close()  # down again
    assert sink.counts() == (1, 1)
