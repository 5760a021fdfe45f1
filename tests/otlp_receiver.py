"""A loopback OTLP/HTTP receiver for the export tests: it keeps each request (path, headers, protobuf body)
and answers with the status a test sets (200, or a refusal)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self, status: int = 200, refuse_from: int | None = None, first: tuple[int, ...] = ()) -> None:
        self.status = status
        self.refuse_from = refuse_from  # from this request on (1-based) the answer is 400
        self.first = first  # the answers to the first requests, each with `Retry-After: 0` (then `status`)
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                late = receiver.refuse_from is not None and len(receiver.requests) >= receiver.refuse_from
                n = len(receiver.requests)
                early = receiver.first[n - 1] if n <= len(receiver.first) else None
                self.send_response(early or (400 if late else receiver.status))
                if early is not None:
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def decoded(self) -> list[Any]:
        """Each request as the `ExportTraceServiceRequest` the exporter sent (opentelemetry-proto)."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        out = []
        for _, _, body in self.requests:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            out.append(request)
        return out


def spans_of(request: Any) -> list[Any]:
    return [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]


def attributes(span: Any) -> dict[str, Any]:
    """A protobuf span's attributes as plain values."""
    out: dict[str, Any] = {}
    for kv in span.attributes:
        out[kv.key] = any_value(kv.value)
    return out


def any_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind is not None else None
