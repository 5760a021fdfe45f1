"""How a screen is reached: its door (the key, the screens it opens from, what the key is called) and what the
screen it opens from has under its cursor (`Here`).

Every screen with a door is listed once, in `app.SCREENS`; the app gives each screen the keys of the doors that
open from it (bindings with ids, so they reach the footer, the help and the palette like the screen's own) and
opens the screen behind a key (`BlackboxApp.action_open`, which asks the screen class to `open_from` the
origin's `Here`; `screens.base` declares both, `DOOR` and `open_from`, on every screen).  So no screen imports
another to open it, and a new screen is its module and one line in `SCREENS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .run import Run

__all__ = ["Door", "Here"]


@dataclass(frozen=True)
class Door:
    """The key that opens a screen: `on` maps the `BINDING_PREFIX` of each screen it opens from to whether the
    key is shown in that screen's footer (every one lists it in the help and the palette)."""

    key: str
    description: str
    tooltip: str
    on: Mapping[str, bool]
    key_display: str | None = None


@dataclass(frozen=True)
class Here:
    """What the screen a door opens from shows: the run, the step under the cursor, the run it is compared with.

    `side` names the run where two are shown ("A"); `moves` says how to reach another step there; `go_to` shows a
    step a screen hands back (the timeline's call); `keep_other` is told of a run chosen to compare with."""

    run: Run
    step: int | None
    other: Run | None = None
    side: str = ""
    moves: str = ""
    go_to: Callable[[int], None] | None = None
    keep_other: Callable[[Run], None] | None = None

    def run_with_step(self) -> Run:
        """The run that has the step under the cursor: `run`, or `other` on a row only it has."""
        if self.other is not None and self.step is not None and self.step >= len(self.run):
            return self.other
        return self.run
