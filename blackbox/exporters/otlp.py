"""`--to otlp`: the spans sent over OTLP/HTTP (protobuf) with OpenTelemetry's own exporter; and the SDK's
`ReadableSpan`s, the OTLP protobuf request and its JSON form that it builds on (`opentelemetry-sdk`,
`opentelemetry-exporter-otlp-proto-http`: the `otel` extra).

OpenTelemetry is imported only when an export runs, so the core and `blackbox --help` never load it.
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from blackbox.errors import UsageError
from blackbox.exporters.base import Exporter, ExportError, Target
from blackbox.exporters.spans import SCHEMA_URL, SCOPE, SpanData

__all__ = ["ExportError", "Otlp", "endpoint_url", "readable_json", "readable_spans", "request_of", "send", "shown"]


def readable_spans(spans: Sequence[SpanData], service: str = "blackbox") -> list[Any]:
    """The SDK's spans for `spans`, with the recorded times and the derived ids."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

    from blackbox import __version__

    sdk = Resource.create({}).attributes  # telemetry.sdk.*, without the random service.instance.id
    resource = Resource({**{k: v for k, v in sdk.items() if k.startswith("telemetry.sdk.")}, "service.name": service})
    scope = InstrumentationScope(SCOPE, __version__, SCHEMA_URL)
    flags = TraceFlags(TraceFlags.SAMPLED)
    out = []
    for span in spans:
        context = SpanContext(span.trace_id, span.span_id, is_remote=False, trace_flags=flags)
        parent = (SpanContext(span.trace_id, span.parent_id, is_remote=False, trace_flags=flags)
                  if span.parent_id is not None else None)
        links = [Link(SpanContext(link.trace_id, link.span_id, is_remote=True, trace_flags=flags), link.attributes)
                 for link in span.links]
        attributes = dict(span.attributes)
        status = Status(StatusCode.UNSET)
        if span.error is not None:
            attributes["error.type"] = span.error
            status = Status(StatusCode.ERROR, span.error)
        kind = SpanKind.CLIENT if span.kind == "CLIENT" else SpanKind.INTERNAL
        out.append(ReadableSpan(span.name, context, parent, resource, attributes, (), links, kind, None, status,
                                span.start_ns, span.end_ns, scope))
    return out


def request_of(spans: Sequence[SpanData], service: str = "blackbox") -> Any:
    """The `ExportTraceServiceRequest` protobuf the OTLP exporter sends for `spans`."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(readable_spans(spans, service))


_IDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(value: Any) -> Any:
    """OTLP JSON writes trace and span ids as hex, where protobuf's JSON mapping writes base64."""
    if isinstance(value, dict):
        return {k: base64.b64decode(v).hex() if k in _IDS and isinstance(v, str) else _hex_ids(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def readable_json(spans: Sequence[Any]) -> dict[str, Any]:
    """The OTLP JSON form of the SDK's spans (ids in hex, enums as integers, field names in lowerCamelCase)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return dict(_hex_ids(MessageToDict(encode_spans(spans), use_integers_for_enums=True)))


_EXPORTER_LOGGERS = ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "opentelemetry.exporter.otlp.common.http")


class _Failure(logging.Handler):
    """Keeps the HTTP status of a failed export (the SDK says it only in a log record), and shows nothing."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.status: int | None = None
        self.failed = False

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.failed = True
            args = record.args if isinstance(record.args, tuple) else ()
            if len(args) >= 2 and isinstance(args[1], int):
                self.status = args[1]


@contextmanager
def _quiet() -> Iterator[_Failure]:
    handler = _Failure()
    loggers = [logging.getLogger(name) for name in _EXPORTER_LOGGERS]
    saved = [(lg.propagate, lg.level) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.propagate = False
        lg.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        for lg, (propagate, level) in zip(loggers, saved, strict=True):
            lg.removeHandler(handler)
            lg.propagate, lg.level = propagate, level


def endpoint_url(endpoint: str | None) -> str | None:
    """`--endpoint`: a base URL gets the traces path (`/v1/traces`), as OTEL_EXPORTER_OTLP_ENDPOINT does."""
    if endpoint is None:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError("--endpoint must be an http:// or https:// URL (the OTLP/HTTP traces endpoint, "
                         "such as http://localhost:4318/v1/traces)")
    return endpoint if parts.path.strip("/") else endpoint.rstrip("/") + "/v1/traces"


def shown(url: str) -> str:
    """The endpoint as an error line may show it: no user or password, no query."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


_CREDENTIAL_PROVIDERS = ("OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
                         "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER")


def send(spans: Sequence[SpanData], endpoint: str | None, headers: Mapping[str, str],
         service: str = "blackbox", note: Callable[[str], None] | None = None) -> None:
    """POST the spans to an OTLP/HTTP endpoint (protobuf); ExportError in one line when it is refused or down.

    `endpoint` None: the OTEL_EXPORTER_OTLP_* variables, else the standard local one.  One request per call,
    so a refusal stores nothing of it.  A backend that cannot be reached fails at once; `note(text)` hears of
    each retry the SDK makes of an answer it may retry (`otlp_session`)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from blackbox.exporters.otlp_session import WatchingSession, unreachable_reason

    # A credential provider brings its own session; the SDK's retries then stay as they are.
    session = None if any(os.environ.get(name) for name in _CREDENTIAL_PROVIDERS) else WatchingSession(note)
    exporter = OTLPSpanExporter(endpoint=endpoint_url(endpoint), headers=dict(headers) or None, session=session)
    where = shown(exporter._endpoint)
    try:
        with _quiet() as failure:
            result = exporter.export(readable_spans(spans, service))
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]
    if result is not SpanExportResult.SUCCESS:
        if session is not None and session.unreachable is not None:
            raise ExportError(f"{where} cannot be reached ({unreachable_reason(session.unreachable)}); start the "
                              "OTLP backend or collector there, or point --endpoint (or "
                              "OTEL_EXPORTER_OTLP_ENDPOINT) at one that runs")
        if failure.status is not None:
            raise ExportError(f"{where} refused the export (HTTP {failure.status}); check the endpoint and its "
                              "headers (--header K=V, OTEL_EXPORTER_OTLP_HEADERS)")
        raise ExportError(f"{where} did not answer (refused or timed out); start the backend or check "
                          "--endpoint / OTEL_EXPORTER_OTLP_ENDPOINT")


class Otlp(Exporter):
    """OTLP over HTTP/protobuf, one request per cassette: a refusal stores none of that cassette."""

    name = "otlp"
    description = ("OTLP over HTTP/protobuf (Phoenix, MLflow, Langfuse, Jaeger, a collector); OTEL_EXPORTER_OTLP_* "
                   "honoured, default http://localhost:4318/v1/traces")
    network = True
    extra = "otel"
    modules = ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter")

    def check(self, target: Target) -> None:
        endpoint_url(target.endpoint)

    def where(self, target: Target) -> str:
        url = endpoint_url(target.endpoint)
        return shown(url) if url is not None else "the OTLP endpoint (OTEL_EXPORTER_OTLP_*, else localhost:4318)"

    def export(self, batches: Sequence[Sequence[SpanData]], target: Target,
               done: Callable[[int], None] | None = None, note: Callable[[str], None] | None = None) -> None:
        for n, batch in enumerate(batches, start=1):
            try:
                send(batch, target.endpoint, target.headers, note=note)
            except ExportError as exc:
                if len(batches) == 1:
                    raise
                raise ExportError(f"{exc} (cassette {n} of {len(batches)}: the {n - 1} before it were sent, the "
                                  "rest were not)") from None
            if done is not None:
                done(n)
