"""Reading a trace file into plain spans: the OTLP JSON form (one request, or JSON lines of them as a collector's
file exporter writes), and MLflow's trace JSON (`mlflow.get_trace(...).to_json()`, the UI's export, or a list of
them).  Errors name the position (`resourceSpans[0].scopeSpans[1].spans[4]`), never a value."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any

import msgspec

from blackbox.format.canonical import decode_json
from blackbox.importers.common import TranscriptError
from blackbox.importers.decoding import document_place, json_position, line_place, unreadable

__all__ = ["Span", "read_spans"]


class Span(msgspec.Struct):
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    error: bool
    where: str  # the span's position in the file, for error messages


def _any_value(value: Any) -> Any:
    """An OTLP AnyValue as a plain value."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        return int(raw) if isinstance(raw, int | str) and str(raw).lstrip("-").isdigit() else None
    if "boolValue" in value:
        return value["boolValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        return [_any_value(v) for v in _values(value["arrayValue"])]
    if "kvlistValue" in value:
        return {kv["key"]: _any_value(kv.get("value")) for kv in _values(value["kvlistValue"])
                if isinstance(kv, dict) and isinstance(kv.get("key"), str)}
    return None


def _values(container: Any) -> list[Any]:
    values = container.get("values") if isinstance(container, dict) else None
    return values if isinstance(values, list) else []


def _ns(value: Any, where: str, field: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    raise TranscriptError(f"{where}.{field} must be a time in nanoseconds since the epoch")


def _hex_id(value: Any, where: str, field: str, size: int) -> str:
    """A trace or span id as hex: OTLP JSON writes hex, protobuf's JSON mapping (MLflow) base64."""
    if not isinstance(value, str) or not value:
        raise TranscriptError(f"{where}.{field} must be a non-empty id")
    text = value.lower()
    if len(text) == size * 2 and all(c in "0123456789abcdef" for c in text):
        return text
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise TranscriptError(f"{where}.{field} is neither a hex nor a base64 id") from None
    if len(raw) != size:
        raise TranscriptError(f"{where}.{field} must be {size} bytes")
    return raw.hex()


def _otlp_span(span: Any, where: str) -> Span:
    if not isinstance(span, dict):
        raise TranscriptError(f"{where} must be an object")
    attributes: dict[str, Any] = {}
    items = span.get("attributes") or []
    if not isinstance(items, list):
        raise TranscriptError(f"{where}.attributes must be an array")
    for i, kv in enumerate(items):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise TranscriptError(f"{where}.attributes[{i}] must be an object with a `key`")
        attributes[kv["key"]] = _any_value(kv.get("value"))
    parent = span.get("parentSpanId")
    status: dict[str, Any] = span["status"] if isinstance(span.get("status"), dict) else {}
    name = span.get("name")
    return Span(_hex_id(span.get("traceId"), where, "traceId", 16), _hex_id(span.get("spanId"), where, "spanId", 8),
                _hex_id(parent, where, "parentSpanId", 8) if parent else None,
                name if isinstance(name, str) else "",
                _ns(span.get("startTimeUnixNano"), where, "startTimeUnixNano"),
                _ns(span.get("endTimeUnixNano"), where, "endTimeUnixNano"), attributes,
                status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR"), where)


def _otlp_request(document: dict[str, Any], prefix: str) -> list[Span]:
    spans: list[Span] = []
    resources = document.get("resourceSpans")
    if not isinstance(resources, list):
        raise TranscriptError(f"{prefix}resourceSpans must be an array")
    for r, resource in enumerate(resources):
        scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans")) \
            if isinstance(resource, dict) else None
        if not isinstance(scopes, list):
            raise TranscriptError(f"{prefix}resourceSpans[{r}].scopeSpans must be an array")
        if not isinstance(resource, dict):
            raise TranscriptError(f"{prefix}resourceSpans[{r}] must be an object")
        for s, scope in enumerate(scopes):
            items = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(items, list):
                raise TranscriptError(f"{prefix}resourceSpans[{r}].scopeSpans[{s}].spans must be an array")
            spans += [_otlp_span(span, f"{prefix}resourceSpans[{r}].scopeSpans[{s}].spans[{i}]")
                      for i, span in enumerate(items)]
    return spans


def _mlflow_value(value: Any) -> Any:
    """MLflow keeps each attribute as its JSON text; a value that is not JSON is the text itself."""
    if isinstance(value, str):
        try:
            return decode_json(value)
        except (msgspec.DecodeError, ValueError, RecursionError):
            return value
    return value


def _mlflow_span(span: Any, where: str) -> Span:
    if not isinstance(span, dict):
        raise TranscriptError(f"{where} must be an object")
    attributes: dict[str, Any] = span["attributes"] if isinstance(span.get("attributes"), dict) else {}
    status: dict[str, Any] = span["status"] if isinstance(span.get("status"), dict) else {}
    parent = span.get("parent_span_id")
    name = span.get("name")
    return Span(_hex_id(span.get("trace_id"), where, "trace_id", 16), _hex_id(span.get("span_id"), where, "span_id", 8),
                _hex_id(parent, where, "parent_span_id", 8) if parent else None,
                name if isinstance(name, str) else "",
                _ns(span.get("start_time_unix_nano"), where, "start_time_unix_nano"),
                _ns(span.get("end_time_unix_nano"), where, "end_time_unix_nano"),
                {k: _mlflow_value(v) for k, v in attributes.items() if isinstance(k, str)},
                status.get("code") in ("STATUS_CODE_ERROR", "ERROR", 2), where)


def _mlflow_trace(document: dict[str, Any], prefix: str) -> list[Span]:
    data = document.get("data")
    spans = data.get("spans") if isinstance(data, dict) else None
    if not isinstance(spans, list):
        raise TranscriptError(f"{prefix}data.spans must be an array")
    return [_mlflow_span(span, f"{prefix}data.spans[{i}]") for i, span in enumerate(spans)]


def _document(document: Any, prefix: str = "") -> list[Span]:
    if isinstance(document, list):
        return [s for i, item in enumerate(document) for s in _document(item, f"{prefix}[{i}].")]
    if isinstance(document, dict) and "resourceSpans" in document:
        return _otlp_request(document, prefix)
    if isinstance(document, dict) and "data" in document and "info" in document:
        return _mlflow_trace(document, prefix)
    raise TranscriptError(f"{prefix.rstrip('.') or 'the top level'}: neither an OTLP JSON request "
                          "(`resourceSpans`) nor an MLflow trace (`info`, `data.spans`)")


def _is_json(line: bytes) -> bool:
    try:
        decode_json(line)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return False
    return True


_WHAT = "an OpenTelemetry trace file"


def read_spans(path: Path) -> list[Span]:
    """Every span of the file; TranscriptError naming the position (and what is wrong there) when it is not a
    trace file: one JSON document, or JSON lines of them as a collector's file exporter writes them."""
    data = path.read_bytes()
    try:
        return _document(decode_json(data))
    except (msgspec.DecodeError, ValueError, RecursionError) as exc:
        lines = [line for line in data.splitlines() if line.strip()]
        if len(lines) < 2 or not _is_json(lines[0]):
            position = json_position(data, exc)
            ends = " (truncated?)" if position == "the end of the file" else ""
            raise (unreadable(data, exc, document_place(data), _WHAT) or TranscriptError(
                f"not JSON: invalid at {position}{ends}; export the trace again")) from None
    spans: list[Span] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            document = decode_json(line)
        except (msgspec.DecodeError, ValueError, RecursionError) as exc:
            ends = " (truncated?)" if "truncated" in str(exc) else ""
            raise (unreadable(line, exc, line_place(number), _WHAT) or TranscriptError(
                f"line {number}: not valid JSON{ends}; each line must be one OTLP JSON request")) from None
        spans += _document(document, f"line {number}: ")
    return spans
