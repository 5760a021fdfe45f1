"""`--to otlp-json`: the OTLP JSON file form, written straight from the span data (docs/format.md, "Export").

The same request the OTLP/HTTP exporter sends (a test parses this file back into the protobuf request and
compares the two), without building protobuf messages first: ids in hex, enums as integers, 64-bit integers as
strings, field names in lowerCamelCase, as the OTLP specification's JSON encoding says.  It needs no
OpenTelemetry package: without the SDK the resource names Blackbox as the telemetry SDK that wrote the spans.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from blackbox.exporters.base import Exporter, Target
from blackbox.exporters.spans import SCHEMA_URL, SCOPE, SpanData

__all__ = ["OtlpJson", "request_document", "resource_attributes"]

_KINDS = {"INTERNAL": 1, "CLIENT": 3}
_LOCAL, _REMOTE = 0x100, 0x300  # the span flags the SDK writes: "is_remote known", and remote (links)


def resource_attributes(service: str) -> dict[str, Any]:
    """The resource every export carries: `telemetry.sdk.*` (OpenTelemetry's SDK, as the OTLP exporter sends it;
    Blackbox itself where the SDK is not installed) and `service.name`."""
    try:
        from opentelemetry.sdk.version import __version__ as version

        sdk = "opentelemetry"
    except ImportError:
        from blackbox import __version__ as version

        sdk = "blackbox"
    return {"telemetry.sdk.language": "python", "telemetry.sdk.name": sdk, "telemetry.sdk.version": version,
            "service.name": service}


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attributes.items()]


def _span(span: SpanData) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": f"{span.trace_id:032x}", "spanId": f"{span.span_id:016x}"}
    if span.parent_id is not None:
        out["parentSpanId"] = f"{span.parent_id:016x}"
    attributes = dict(span.attributes)
    status: dict[str, Any] = {}
    if span.error is not None:
        attributes["error.type"] = span.error
        status = {"message": span.error, "code": 2}
    out.update({"name": span.name, "kind": _KINDS[span.kind], "startTimeUnixNano": str(span.start_ns),
                "endTimeUnixNano": str(span.end_ns), "attributes": _attributes(attributes), "status": status,
                "flags": _LOCAL})
    if span.links:
        out["links"] = [{"traceId": f"{link.trace_id:032x}", "spanId": f"{link.span_id:016x}",
                         "attributes": _attributes(link.attributes), "flags": _REMOTE} for link in span.links]
    return out


def request_document(spans: Sequence[SpanData], service: str = "blackbox") -> dict[str, Any]:
    """One `ExportTraceServiceRequest` holding every span, in OTLP JSON."""
    from blackbox import __version__

    return {"resourceSpans": [{
        "resource": {"attributes": _attributes(resource_attributes(service))},
        "scopeSpans": [{"scope": {"name": SCOPE, "version": __version__}, "spans": [_span(s) for s in spans],
                        "schemaUrl": SCHEMA_URL}],
    }]}


class OtlpJson(Exporter):
    """One OTLP JSON file holding every cassette's trace, written atomically."""

    name = "otlp-json"
    description = "the OTLP JSON file form (one ExportTraceServiceRequest), for air-gapped use or a collector"
    needs_out = True

    def export(self, batches: Sequence[Sequence[SpanData]], target: Target,
               done: Callable[[int], None] | None = None, note: Callable[[str], None] | None = None) -> None:
        from blackbox.format.writing import atomic_write, pretty_json

        assert target.out is not None
        document = request_document([span for batch in batches for span in batch])
        atomic_write(target.out, pretty_json(document, indent=0).encode("utf-8", "surrogatepass"))
        if done is not None:
            done(len(batches))
