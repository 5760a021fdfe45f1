"""`blackbox scan`: the leak check for CI over cassettes, crash journals and leftover temporary files.

A hit is a value the policy would redact (its rules, plus every built-in detector) or the value of a known
key (an API key in the environment, the redaction key), found where it still stands in the clear.  Each hit
names the file, the step (or the line) and the JSON path, and shows the value masked: the text around it
with the value replaced by its mark.  Marks already in a file are never hits.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blackbox.errors import CassetteError
from blackbox.format.canonical import decode_json
from blackbox.format.cassette import load
from blackbox.format.marks import MARK
from blackbox.live.journal import JOURNAL_SUFFIX
from blackbox.live.redaction import known_key_rules
from blackbox.redaction.apply import Redactor
from blackbox.redaction.detectors import DETECTORS
from blackbox.redaction.policy import Policy, Rule

__all__ = ["Hit", "ScanResult", "scan_paths", "scanner_for"]

_SHOWN = 80  # characters of masked context per hit


@dataclass(frozen=True)
class Hit:
    """One value in the clear: where (file, step or line, path), which rule, and the text around it masked."""

    file: str
    kind: str  # cassette | journal | temporary file
    step: int | None
    line: int | None
    path: str
    rule: str
    masked: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "kind": self.kind, "step": self.step, "line": self.line, "path": self.path,
                "rule": self.rule, "masked": self.masked}


@dataclass
class ScanResult:
    files: int
    bytes: int
    hits: list[Hit]


def scanner_for(policy: Redactor | None, env: Mapping[str, str] | None = None) -> Redactor:
    """The known keys (`known_key_rules`: the API keys, the redaction key and its key-file, and any long piece
    of one), then the policy's rules (or none), then every built-in detector it lacks."""
    rules: list[Rule] = list(policy.policy.rules) if policy is not None else []
    names = {r.name for r in rules}
    rules += [Rule(name, "mask", detector=d) for name, d in DETECTORS.items() if name not in names]
    rules[:0] = known_key_rules(policy, env)
    key = policy.key if policy is not None else b""
    return Redactor(Policy(tuple(rules), policy.policy.source if policy else "built-in detectors"), key, "scan")


def _path_text(path: tuple[Any, ...]) -> str:
    out = ""
    for seg in path:
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else str(seg))
    return out or "(root)"


def _differences(before: Any, after: Any) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Each changed string (or key) of a redacted value, as (path, the redacted text); a stack, not recursion
    (a deeply nested payload is scanned like any other)."""
    stack: list[tuple[Any, Any, tuple[Any, ...]]] = [(before, after, ())]
    while stack:
        old, new, path = stack.pop()
        if old is new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            below = []
            for (k1, v1), (k2, v2) in zip(old.items(), new.items(), strict=False):
                if k1 != k2:
                    yield (*path, k2), k2
                below.append((v1, v2, (*path, k1)))
            stack.extend(reversed(below))
        elif isinstance(old, list) and isinstance(new, list):
            stack.extend(reversed([(a, b, (*path, i)) for i, (a, b) in enumerate(zip(old, new, strict=False))]))
        elif old != new:
            yield path, new if isinstance(new, str) else repr(new)


def _hits_in(scanner: Redactor, file: str, kind: str, step_type: str, payload: Any, step: int | None,
             line: int | None, prefix: tuple[Any, ...] = ()) -> Iterator[Hit]:
    for path, text in _differences(payload, scanner(step_type, payload)):
        for m in MARK.finditer(text):
            start = max(0, m.start() - 20)
            shown = text[start:start + _SHOWN]
            yield Hit(file, kind, step, line, _path_text((*prefix, *path)), m.group(1), shown)


def _scan_cassette(scanner: Redactor, path: Path, shown: str) -> list[Hit]:
    cassette = load(path)
    hits: list[Hit] = []
    for s in cassette.steps:
        hits.extend(_hits_in(scanner, shown, "cassette", s.type, s.payload, s.index, None, ("payload",)))
    return hits


def _scan_lines(scanner: Redactor, path: Path, shown: str, kind: str) -> list[Hit]:
    hits: list[Hit] = []
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                value = decode_json(raw.strip()) if raw.strip() else None
            except ValueError:
                value = None
            except Exception:  # msgspec's DecodeError: the line is text, scanned as text
                value = None
            if isinstance(value, dict | list):
                step_type = value.get("type", "tool_result") if isinstance(value, dict) else "tool_result"
                step = value.get("index") if isinstance(value, dict) and isinstance(value.get("index"), int) else None
                hits.extend(_hits_in(scanner, shown, kind, str(step_type), value, step, number))
            else:
                text = raw.decode("utf-8", "replace").rstrip("\n")
                hits.extend(_hits_in(scanner, shown, kind, "tool_result", {"result": text}, None, number))
    return hits


def _kind(path: Path) -> str | None:
    name = path.name
    if JOURNAL_SUFFIX in name:
        return "journal"
    if name.startswith(".") and name.endswith(".tmp"):
        return "temporary file"
    if name.endswith(".json"):
        return "cassette"
    return None


def _files(targets: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    for target in targets:
        if target.is_dir():
            for folder, dirs, names in os.walk(target):
                dirs[:] = sorted(d for d in dirs if d not in (".git", ".venv", "node_modules", "__pycache__"))
                for name in sorted(names):
                    p = Path(folder) / name
                    kind = _kind(p)
                    if kind is not None and p.is_file():
                        yield p, kind
        else:
            yield target, _kind(target) or "cassette"


def scan_paths(targets: Iterable[Path], scanner: Redactor) -> ScanResult:
    """Scan every cassette, journal and leftover temporary file at or below `targets`."""
    hits: list[Hit] = []
    files = size = 0
    for path, kind in _files(targets):
        files += 1
        with contextlib.suppress(OSError):
            size += path.stat().st_size
        shown = str(path)
        if kind == "cassette":
            try:
                hits.extend(_scan_cassette(scanner, path, shown))
                continue
            except CassetteError:
                kind = "file"  # not a cassette (a half-written one, another JSON file): its lines as text
        hits.extend(_scan_lines(scanner, path, shown, kind))
    return ScanResult(files, size, hits)
