"""The command palette's provider: every action of the current screen (and the app), by its description."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

__all__ = ["ScreenActions", "screen_actions"]


def screen_actions(screen: Screen[object]) -> Iterator[tuple[str, str, str, object]]:
    """(description, key, action, node) for each distinct action bound on the screen's focus chain."""
    seen: set[tuple[int, str]] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not active.enabled or not binding.description:
            continue
        if binding.action in ("command_palette",):
            continue
        marker = (id(active.node), binding.action)
        if marker in seen:
            continue
        seen.add(marker)
        yield binding.description, binding.key_display or key, binding.action, active.node


class ScreenActions(Provider):
    """Lists what the keys of the current screen do, so every action is one search away."""

    def _hits(self) -> Iterator[tuple[str, str, partial[object]]]:
        for description, key, action, node in screen_actions(self.screen):
            yield description, key, partial(self.app.run_action, action, node)

    async def discover(self) -> Hits:
        for description, key, command in self._hits():
            yield DiscoveryHit(description, command, help=f"key: {key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for description, key, command in self._hits():
            score = matcher.match(description)
            if score > 0:
                yield Hit(score, matcher.highlight(description), command, help=f"key: {key}")
