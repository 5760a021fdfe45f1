"""A tiny HTTP proxy for the network guard's tests, run as a process of its own (`python tests/http_proxy.py`):
a `CONNECT host:port` tunnel or an absolute-URI request (`GET http://host:port/path`) is forwarded to the host
it names, as any forwarding proxy does.

It prints `port N` once it listens on 127.0.0.1, then one line per event, in order: `accept` (a client
connected), `request <request line>`, `upstream <host:port>` (it connected to the host asked for).  A test
sends `MARKER <id> HTTP/1.1` and waits for its `request` line to know every earlier event is printed.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from urllib.parse import urlsplit

_PRINT = threading.Lock()


def emit(line: str) -> None:
    with _PRINT:
        print(line, flush=True)


def read_head(conn: socket.socket) -> tuple[bytes, bytes]:
    """The request's head (through the blank line) and the bytes read after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b"", b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy until `source` ends, then end `sink`'s writing side."""
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def serve(conn: socket.socket) -> None:
    with conn:
        head, rest = read_head(conn)
        if not head:
            return
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        emit(f"request {line}")
        method, target, _version = [*line.split(" ", 2), "", ""][:3]
        if method == "MARKER":
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            address = (host.strip("[]"), int(port))
            first = b""
        else:
            parts = urlsplit(target)
            address = (parts.hostname or "", parts.port or 80)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            first = head.replace(target.encode("latin-1"), path.encode("latin-1"), 1) + rest
        try:
            upstream = socket.create_connection(address)
        except OSError:
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            return
        emit(f"upstream {address[0]}:{address[1]}")
        with upstream:
            if method == "CONNECT":
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                first = rest
            if first:
                upstream.sendall(first)
            back = threading.Thread(target=pump, args=(upstream, conn), daemon=True)
            back.start()
            pump(conn, upstream)
            back.join()


def main() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    emit(f"port {server.getsockname()[1]}")
    while True:
        conn, _ = server.accept()
        emit("accept")
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
