"""One toast at a time: a new message replaces the one shown, so pressing a key twelve times shows one."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.notifications import SeverityLevel

from blackbox.format.inert import inert

__all__ = ["say"]


def say(app: App[Any], message: str, *, severity: SeverityLevel = "information", timeout: float = 4) -> None:
    """Show `message` (inert, never markup: it may quote a file or a cassette) in place of any toast shown."""
    app.clear_notifications()
    app.notify(inert(message, keep_newlines=True), severity=severity, timeout=timeout, markup=False)
