"""The `blackbox` command line.  Command modules are imported here so that they register on the app."""

from __future__ import annotations

from blackbox.cli import demo, imports, run  # noqa: F401
from blackbox.cli import cassettes  # noqa: F401
from blackbox.cli import tui  # noqa: F401
from blackbox.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    app()
