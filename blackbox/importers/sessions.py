"""The session files an importer finds in a folder (its agent's default one, or `--in`): newest first, `--since`.

A folder is searched at any depth for the importer's file patterns (Codex keeps `YYYY/MM/DD/rollout-*.jsonl`,
Gemini CLI `<project_hash>/chats/session-*.jsonl`), links to folders are not followed, and each file's cassette
goes to the same relative place under the output folder, so sessions with the same name never collide.
"""

from __future__ import annotations

import os
import re
import stat
import time
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from blackbox.errors import UsageError
from blackbox.importers.common import Importer

__all__ = ["SessionFile", "find_sessions", "parse_since"]

_AGO = re.compile(r"^(\d+)\s*([mhdw])$")
_UNIT = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class SessionFile(msgspec.Struct, frozen=True):
    path: Path
    relative: Path  # below the folder searched
    modified: float  # seconds since the epoch
    size: int

    def target(self, out_dir: Path) -> Path:
        """Where this session's cassette goes under `out_dir`: the same relative path, `.json`."""
        return out_dir / self.relative.with_suffix(".json")


def parse_since(text: str, now: float | None = None) -> float:
    """`--since`: a date (`2026-11-30`), a time (`2026-11-30T14:00`, UTC unless it says otherwise) or an age
    (`90m`, `12h`, `3d`, `2w`), as seconds since the epoch."""
    match = _AGO.match(text.strip())
    if match is not None:
        return (time.time() if now is None else now) - int(match.group(1)) * _UNIT[match.group(2)]
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--since {text!r} is not a date, a time or an age; e.g. 2026-11-30, "
                         "2026-11-30T14:00 or 3d") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def find_sessions(importer: Importer, folder: Path, since: float | None = None) -> list[SessionFile]:
    """The importer's session files below `folder`, newest first (then by path), modified at or after `since`."""
    found: dict[Path, SessionFile] = {}
    for root, dirs, files in os.walk(folder):  # os.walk never follows links to folders
        dirs.sort()
        base = Path(root)
        for name in files:
            path = base / name
            if path in found or not any(path.match(pattern) for pattern in importer.patterns):
                continue
            try:
                info = path.stat()
            except OSError:
                continue  # gone since the listing, or a dangling link
            if not stat.S_ISREG(info.st_mode):
                continue  # a pipe or a device named like a session would never end
            if since is not None and info.st_mtime < since:
                continue
            found[path] = SessionFile(path, path.relative_to(folder), info.st_mtime, info.st_size)
    return sorted(found.values(), key=lambda s: (-s.modified, str(s.relative)))
