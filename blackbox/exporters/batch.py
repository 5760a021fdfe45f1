"""What `blackbox export` exports: the cassettes of a file or a folder, each checked, redacted by the policy in
force, its fork parent found, as span batches built before anything is sent (so a bad file stops the export
before a backend sees a span)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

from blackbox.errors import BlackboxError, CassetteError
from blackbox.exporters.spans import SpanData, cassette_spans
from blackbox.format.cassette import Cassette, chain_break, load, rechain

__all__ = ["Redactor", "cassette_files", "find_parent", "span_batches"]

#: A step's type and payload → the payload as the redaction policy lets it out (`redaction.apply.Redactor`).
Redactor = Callable[[str, Any], Any]


def cassette_files(path: Path) -> list[Path]:
    """The file itself, or the folder's `*.json` files at any depth, in path order."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*.json") if p.is_file())
    return [path]


def _checked(path: Path, redactor: Redactor | None = None) -> Cassette:
    """The cassette at `path`, its chain checked, then as `redactor` (a step's type and payload → the payload
    as the policy lets it out) rewrites it: the whole cassette, so rules placed by a step's path or a tool's
    name apply, re-chained as `blackbox redact` does (the ids and hashes exported are the redacted run's)."""
    cassette = load(path)
    broken = chain_break(cassette)
    if broken is not None:
        raise CassetteError(f"{path}: the hash chain breaks at step {broken.index} ({broken.reason}); "
                            "only a cassette that verifies is exported: run `blackbox verify` on it")
    if not cassette.steps:
        raise CassetteError(f"{path}: the cassette has no steps; there is nothing to export")
    return _redacted(cassette, redactor)


def _redacted(cassette: Cassette, redactor: Redactor | None) -> Cassette:
    if redactor is None:
        return cassette
    return msgspec.structs.replace(cassette, steps=rechain(list(cassette.steps), redactor))


def find_parent(fork: Cassette, candidates: Iterable[Cassette]) -> Cassette | None:
    """The run `fork` was forked from among `candidates`: the parent's id and the same first step."""
    if fork.parentId is None:
        return None
    return next((c for c in candidates if c.id == fork.parentId and c is not fork and c.steps
                 and c.steps[0].hash == fork.steps[0].hash), None)


def _neighbours(path: Path, parent_id: str, redactor: Redactor | None) -> Iterable[Cassette]:
    """Cassettes beside `path` whose id is `parent_id` (a fork is usually written next to its parent)."""
    from blackbox.format.lazy import load_lazy

    for other in sorted(path.parent.glob("*.json")):
        if other == path or not other.is_file():
            continue
        try:
            if load_lazy(other).id == parent_id:
                yield _redacted(load(other), redactor)
        except BlackboxError:
            continue


def span_batches(path: Path, *, with_content: bool = False, parent: Path | None = None,
                 loaded: Callable[[int, int], None] | None = None,
                 redact: Callable[[Any], Any] | None = None,
                 redactor: Redactor | None = None) -> tuple[list[Path], list[list[SpanData]], int]:
    """(files, one span batch per file, forks linked to their parent); CassetteError naming the first bad file.

    `redactor` rewrites every cassette (and `parent`) before its spans are built; `redact` is the content hook
    for pieces (`exporters.content.policy` by default).  `loaded(done, total)` is told as each file is read and
    turned into spans."""
    files = cassette_files(path)
    if not files:
        raise CassetteError(f"{path}: no *.json cassette in the folder; nothing to export")
    cassettes: list[Cassette] = []
    for n, file in enumerate(files, start=1):
        cassettes.append(_checked(file, redactor))
        if loaded is not None:
            loaded(n, len(files) * 2)
    given = [_checked(parent, redactor)] if parent is not None else []
    batches, linked = [], 0
    for n, (file, cassette) in enumerate(zip(files, cassettes, strict=True), start=1):
        found = None
        if cassette.parentId is not None:
            found = find_parent(cassette, given + cassettes)
            if found is None and not given and not path.is_dir():
                found = find_parent(cassette, _neighbours(file, cassette.parentId, redactor))
        linked += found is not None
        batches.append(cassette_spans(cassette, with_content=with_content, parent=found, redact=redact))
        if loaded is not None:
            loaded(len(files) + n, len(files) * 2)
    return files, batches, linked
