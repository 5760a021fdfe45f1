"""Every exporter, by its `--to` name: the one list the CLI (`--to`, its checks, its help) and the docs follow.

This module only lists them.  An exporter is its own module (a class of `exporters.base.Exporter`, its facts
as class data) and its entry here: the import and the class in `EXPORTERS`, in the order `--help` shows them.
"""

from __future__ import annotations

from blackbox.exporters.base import Exporter
from blackbox.exporters.otlp import Otlp
from blackbox.exporters.otlp_json import OtlpJson

__all__ = ["EXPORTERS"]

EXPORTERS: dict[str, Exporter] = {exporter.name: exporter for exporter in (
    Otlp(),
    OtlpJson(),
)}
