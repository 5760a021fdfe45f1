"""Exporters: a cassette (or a folder of them) as OpenTelemetry GenAI traces (docs/format.md, "Export").

`spans` turns a cassette into span data (pure), `content` shapes and redacts message content, `batch` checks and
converts the files; `base` is what every exporter is, `otlp` (OTLP/HTTP through OpenTelemetry's SDK, imported
only when an export runs) and `otlp_json` (the OTLP JSON file) are the exporters, one module each, and
`registry` lists them by their `--to` name.
"""
