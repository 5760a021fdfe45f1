"""Hand a step's JSON to the user's $EDITOR or $PAGER as a read-only temporary file."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import tempfile
from pathlib import Path

from textual.app import App, SuspendNotSupported

__all__ = ["open_readonly", "viewer_command"]


def viewer_command(kind: str) -> list[str]:
    """The command for `editor` ($VISUAL, $EDITOR, vi) or `pager` ($PAGER, less)."""
    if kind == "editor":
        names: tuple[str, ...] = ("VISUAL", "EDITOR")
        fallback = "vi"
    else:
        names, fallback = ("PAGER",), "less"
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return shlex.split(value)
    return [fallback]


def open_readonly(app: App[object], text: str, command: list[str], name: str) -> int:
    """Write `text` to a read-only temp file, run `command file` with the terminal, then delete the file.

    Returns the command's exit status (127 when it cannot be started).
    """
    fd, tmp = tempfile.mkstemp(prefix=f"blackbox-{name}-", suffix=".json")
    path = Path(tmp)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(text)
        path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        try:
            with app.suspend():
                return _run([*command, str(path)], interactive=True)
        except SuspendNotSupported:  # no real terminal (tests, pipes): run it without one
            return _run([*command, str(path)], interactive=False)
    finally:
        path.unlink(missing_ok=True)


def _run(argv: list[str], *, interactive: bool) -> int:
    try:
        if interactive:
            return subprocess.run(argv, check=False).returncode
        return subprocess.run(argv, check=False, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode
    except OSError:
        return 127
