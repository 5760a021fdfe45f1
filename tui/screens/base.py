"""What every Blackbox screen carries: its help text (`HELP`), its binding prefix (`BINDING_PREFIX`, see
`..keys`) and typed access to the app, so no screen reaches the app's routing through `Any` or by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, TypeVar, cast

from textual.screen import ModalScreen, Screen

from ..keys import Keyed

if TYPE_CHECKING:
    from ..app import BlackboxApp

__all__ = ["BlackboxModal", "BlackboxScreen"]

ResultT = TypeVar("ResultT")


class BlackboxScreen(Keyed, Screen[ResultT]):
    """A full screen of the UI; `HELP` opens its `?` help, its bindings' ids start with `BINDING_PREFIX`."""

    HELP: ClassVar[str | None] = ""

    @property
    def blackbox(self) -> BlackboxApp:
        """The app (its routing: open_diff, open_fork, read_in_background)."""
        return cast("BlackboxApp", self.app)


class BlackboxModal(Keyed, ModalScreen[ResultT]):
    """A dialog over a screen; the same two facts as `BlackboxScreen`."""

    HELP: ClassVar[str | None] = ""

    @property
    def blackbox(self) -> BlackboxApp:
        return cast("BlackboxApp", self.app)
