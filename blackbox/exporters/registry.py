"""Every exporter, by its `--to` name: the one list the CLI (`--to`, its help) and the docs follow.

An exporter is one object with its facts as class data and `export`, which takes the span batches of one or
more cassettes (one batch per cassette) and sends or writes them.  A new target is its class and one entry
here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from blackbox.exporters.spans import SpanData

__all__ = ["EXPORTERS", "Exporter", "Otlp", "OtlpJson", "Target"]


class Target:
    """Where an export goes: `--out` for a file target, `--endpoint` and `--header` for a network one."""

    def __init__(self, out: Path | None = None, endpoint: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        self.out, self.endpoint, self.headers = out, endpoint, dict(headers or {})


class Exporter:
    """One export target: its facts as class data (the CLI's `--to` and help read them) and `export`."""

    name: ClassVar[str]  # the `--to` value
    description: ClassVar[str]  # one line for `--help`
    needs_out: ClassVar[bool] = False  # a file target: `--out` is required
    network: ClassVar[bool] = False  # sends to an endpoint: `--endpoint` and `--header` apply

    def export(self, batches: Sequence[Sequence[SpanData]], target: Target,
               done: Callable[[int], None] | None = None, note: Callable[[str], None] | None = None) -> None:
        """Send or write the batches; `done(n)` after the n-th batch is out, `note(text)` when it waits (a
        retry).  ExportError when it fails."""
        raise NotImplementedError


class Otlp(Exporter):
    name = "otlp"
    description = ("OTLP over HTTP/protobuf (Phoenix, MLflow, Langfuse, Jaeger, a collector); OTEL_EXPORTER_OTLP_* "
                   "honoured, default http://localhost:4318/v1/traces")
    network = True

    def export(self, batches: Sequence[Sequence[SpanData]], target: Target,
               done: Callable[[int], None] | None = None, note: Callable[[str], None] | None = None) -> None:
        from blackbox.exporters.otlp import ExportError, send

        for n, batch in enumerate(batches, start=1):  # one request per cassette: a refusal stores none of it
            try:
                send(batch, target.endpoint, target.headers, note=note)
            except ExportError as exc:
                if len(batches) == 1:
                    raise
                raise ExportError(f"{exc} (cassette {n} of {len(batches)}: the {n - 1} before it were sent, the "
                                  "rest were not)") from None
            if done is not None:
                done(n)


class OtlpJson(Exporter):
    name = "otlp-json"
    description = "the OTLP JSON file form (one ExportTraceServiceRequest), for air-gapped use or a collector"
    needs_out = True

    def export(self, batches: Sequence[Sequence[SpanData]], target: Target,
               done: Callable[[int], None] | None = None, note: Callable[[str], None] | None = None) -> None:
        from blackbox.exporters.otlp_json import request_document
        from blackbox.format.writing import atomic_write, pretty_json

        assert target.out is not None
        spans = [span for batch in batches for span in batch]
        document = request_document(spans)
        atomic_write(target.out, pretty_json(document, indent=0).encode("utf-8", "surrogatepass"))
        if done is not None:
            done(len(batches))


EXPORTERS: dict[str, Exporter] = {exporter.name: exporter for exporter in (Otlp(), OtlpJson())}
