"""Which bindings are Blackbox's own: those of a `Keyed` node whose id starts with the node's prefix.

Each screen, widget and the app declares its prefix (and, a screen, its help text) on itself, so a new screen's
keys reach the help and the command palette without a list elsewhere to remember; Textual's own widgets (the
scrolling and text-editing keys) are not `Keyed` and stay out, where they only repeated themselves."""

from __future__ import annotations

from typing import ClassVar

__all__ = ["Keyed", "is_ours"]


class Keyed:
    """A mixin: `BINDING_PREFIX` is the first part of the id of every binding the class declares
    (`browse.search`); tests/tui/test_keys.py holds each declared binding to it."""

    BINDING_PREFIX: ClassVar[str] = ""


def is_ours(node: object, binding_id: str | None) -> bool:
    """Whether a binding (by id) of `node` is one of Blackbox's, to be listed in the help and the palette."""
    prefix = node.BINDING_PREFIX if isinstance(node, Keyed) else ""
    return bool(prefix) and (binding_id or "").startswith(prefix + ".")
