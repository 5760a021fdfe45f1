"""Exporters: a cassette (or a folder of them) as OpenTelemetry GenAI traces (docs/format.md, "Export").

`spans` turns a cassette into span data (pure), `content` shapes and redacts message content, `batch` checks and
converts the files, `otlp_json` writes the OTLP JSON form, `otlp` speaks OpenTelemetry's SDK (imported only when
an export runs), `registry` holds one object per `--to` target.
"""
