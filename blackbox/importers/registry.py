"""Every importer, by its `--from` name: the one list the CLI (`--from`, its help, folder imports), the JSON
schema's `source` values, the fuzz targets and the docs are checked against (docs/format.md, "Import").

A new importer is its module (a transcript reader and an `Importer` subclass holding its facts) and one entry
here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from blackbox.format.agentview import agent_of
from blackbox.importers.chat_json import ChatJson
from blackbox.importers.claude_code import ClaudeCode
from blackbox.importers.codex import Codex
from blackbox.importers.common import Importer
from blackbox.importers.gemini import Gemini
from blackbox.importers.otel import Otel

__all__ = ["IMPORTERS", "imported_provider", "names", "with_folder"]

IMPORTERS: dict[str, Importer] = {importer.name: importer
                                  for importer in (ClaudeCode(), Codex(), Gemini(), ChatJson(), Otel())}


def names() -> tuple[str, ...]:
    return tuple(IMPORTERS)


def with_folder() -> tuple[str, ...]:
    """The importers whose agent keeps sessions in a folder (a folder `--in`, or none: that folder)."""
    return tuple(name for name, importer in IMPORTERS.items() if importer.folder is not None)


def imported_provider(steps: Sequence[Any]) -> str | None:
    """The provider an imported run's agent talks to (Codex: `responses`), or None for a recording."""
    agent = agent_of(list(steps[:1]))
    return IMPORTERS[agent].provider if agent is not None else None
