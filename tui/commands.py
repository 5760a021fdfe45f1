"""The command palette's provider: every action of the current screen (and the app), by its description."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen

from .keys import is_ours

__all__ = ["ScreenActions", "screen_actions"]


def screen_actions(screen: Screen[Any]) -> Iterator[tuple[str, str, str, DOMNode, str]]:
    """(description, key, action, node, longer description) for each of Blackbox's actions on the screen's
    focus chain (`keys.is_ours`: the bindings of a `Keyed` node with its prefix), each once."""
    seen: set[str] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not active.enabled or not binding.description or not is_ours(active.node, binding.id):
            continue
        if binding.action in seen:
            continue
        seen.add(binding.action)
        yield binding.description, binding.key_display or key, binding.action, active.node, binding.tooltip


class ScreenActions(Provider):
    """Lists what the keys of the current screen do, so every action is one search away."""

    def _hits(self) -> Iterator[tuple[str, str, partial[Any]]]:
        for description, key, action, node, tooltip in screen_actions(self.screen):
            help_text = f"{tooltip} · key: {key}" if tooltip else f"key: {key}"
            yield description, help_text, partial(self.app.run_action, action, node)

    async def discover(self) -> Hits:
        for description, help_text, command in self._hits():
            yield DiscoveryHit(description, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for description, help_text, command in self._hits():
            score = matcher.match(description)
            if score > 0:
                yield Hit(score, matcher.highlight(description), command, help=help_text)
