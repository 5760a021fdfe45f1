"""Exporters: a cassette (or a folder of them) as OpenTelemetry GenAI traces (docs/format.md, "Export").

`spans` turns a cassette into span data (pure), `content` shapes and redacts message content, `otlp` speaks
OpenTelemetry (imported only when an export runs), `registry` holds one object per `--to` target.
"""
