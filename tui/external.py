"""The payload outside the app: copied to the clipboard, written to a file, or handed to the user's $EDITOR or
$PAGER as a read-only temporary file."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import tempfile
from pathlib import Path

from textual.app import App, SuspendNotSupported

from blackbox.format.cassette import Step
from blackbox.format.writing import atomic_write, pretty_json

from .notice import say
from .screens.prompts import PathPrompt

__all__ = ["copy_payload", "open_payload", "open_readonly", "viewer_command", "write_payload"]


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


def _payload_text(app: App[object], step: Step | None) -> str | None:
    if step is None:
        say(app, "No step selected.", severity="warning")
        return None
    return pretty_json(step.payload)


def copy_payload(app: App[object], step: Step | None) -> None:
    text = _payload_text(app, step)
    if step is None or text is None:
        return
    app.copy_to_clipboard(text)
    say(app, f"Copied the payload of step {step.index} ({len(text):,} characters) to the clipboard "
             "(OSC 52; w writes it to a file instead).")


def write_payload(app: App[object], run_id: str, step: Step | None) -> None:
    """Ask for a path (`<run id>.step-<N>.json` here by default) and write the payload there, atomically."""
    text = _payload_text(app, step)
    if step is None or text is None:
        return
    safe_id = re.sub(r"[^A-Za-z0-9._-]+", "-", run_id) or "run"
    default = str(Path.cwd() / f"{safe_id}.step-{step.index}.json")

    def write(path: str | None) -> None:
        if path is None:
            return
        try:
            atomic_write(Path(path).expanduser(), text.encode("utf-8", "surrogatepass"))
        except OSError as exc:
            say(app, f"Cannot write {path}: {exc.strerror or exc}", severity="error")
            return
        say(app, f"Wrote the payload of step {step.index} to {path}.")

    app.push_screen(PathPrompt(f"Write the payload of step {step.index} to:", default), write)


def open_payload(app: App[object], step: Step | None, kind: str) -> None:
    """The whole step, read-only, in the `editor` or the `pager`."""
    if step is None:
        return
    command = viewer_command(kind)
    status = open_readonly(app, pretty_json(step), command, f"step-{step.index}")
    if status == 127:
        say(app, f"Cannot start {command[0]}; set ${'EDITOR' if kind == 'editor' else 'PAGER'}.", severity="error")
