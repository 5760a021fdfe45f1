"""The real MCP server of the MCP tests (tests/mcp_weather_server.py), started over stdio, streamable HTTP or the
older HTTP+SSE transport."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

SERVER = str(Path(__file__).with_name("mcp_weather_server.py"))
NOWHERE = "/nonexistent/blackbox-no-such-mcp-server"  # the server's command, made unrunnable for replay


def stdio_params(command: str = sys.executable) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=command, args=[SERVER, "stdio"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


PATHS = {"http": "/mcp", "sse": "/sse"}  # where each HTTP transport's server listens


@contextmanager
def http_server(port: int | None = None, kind: str = "http") -> Iterator[str]:
    """The server on 127.0.0.1 over streamable HTTP (or `kind="sse"`, the HTTP+SSE transport): its URL while it
    runs; the port is closed afterwards."""
    port = port or free_port()
    process = subprocess.Popen([sys.executable, SERVER, kind, str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60  # a condition to wait for, with a bound only against a hang
        while not port_open(port):
            assert process.poll() is None, "the MCP server exited while starting"
            assert time.monotonic() < deadline, "the MCP server did not start listening"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}{PATHS[kind]}"
    finally:
        process.terminate()
        process.wait()
    assert not port_open(port)


class Served:
    """Where the real server is for one test: `live()` (HTTP: started when stopped) and `dead` (stdio: a command
    that cannot run; HTTP and SSE: the same URL, its port closed)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{PATHS.get(kind, '')}"
        self.dead = NOWHERE if kind == "stdio" else self.url
        self._running: Any = None

    def live(self) -> str:
        if self.kind == "stdio":
            return sys.executable
        if self._running is None:
            self._running = http_server(self.port, self.kind)
            self._running.__enter__()
        return self.url

    def stop(self) -> None:
        if self._running is not None:
            self._running.__exit__(None, None, None)
            self._running = None
        assert self.kind == "stdio" or not port_open(self.port)


@contextmanager
def serving(kind: str) -> Iterator[Served]:
    """The server of one test over `kind`, stopped afterwards."""
    where = Served(kind)
    try:
        yield where
    finally:
        where.stop()


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    """The server of one test, over stdio and over streamable HTTP on 127.0.0.1; stopped afterwards."""
    with serving(request.param) as where:
        yield where


@pytest.fixture(params=["stdio", "http", "sse"])
def served_any(request: pytest.FixtureRequest) -> Iterator[Served]:
    """`served`, and also over the older HTTP+SSE transport (which a raw `ClientSession` can still use)."""
    with serving(request.param) as where:
        yield where
