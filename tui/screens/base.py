"""What every Blackbox screen carries: its help text (`HELP`), its binding prefix (`BINDING_PREFIX`, see
`..keys`) and typed access to the app, so no screen reaches the app's routing through `Any` or by name; its door
(`DOOR`, `open_from`: how it opens from other screens, `..doors`) and, once mounted, the keys of the doors that
open other screens from it (the app holds them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from textual.screen import ModalScreen, Screen

from ..keys import Keyed

if TYPE_CHECKING:
    from ..app import BlackboxApp
    from ..doors import Door, Here

__all__ = ["BlackboxModal", "BlackboxScreen"]

ResultT = TypeVar("ResultT")


class _Blackbox(Keyed):
    """The facts and routing both kinds of screen share (a mixin: Textual calls its `on_mount` too)."""

    HELP: ClassVar[str | None] = ""
    #: The key that opens this screen from others (an entry of `app.SCREENS` has one), or None.
    DOOR: ClassVar[Door | None] = None

    @property
    def blackbox(self) -> BlackboxApp:
        """The app (its routing: open, open_diff, read_in_background)."""
        return cast("BlackboxApp", cast(Screen[Any], self).app)

    @classmethod
    def open_from(cls, app: BlackboxApp, here: Here) -> None:
        """Open this screen over the one `here` describes (or say, in one toast, why it cannot open there)."""
        raise NotImplementedError(f"{cls.__name__} has a DOOR: it says how it opens (open_from)")

    def here(self) -> Here | None:
        """What a door opening from this screen starts from (None: no door opens from it)."""
        return None

    def on_mount(self) -> None:
        """(After the screen's own `on_mount`: Textual calls each class's handler.)"""
        from ..app import BlackboxApp  # (here: the app imports every screen)

        app = cast(Screen[Any], self).app
        if isinstance(app, BlackboxApp):  # a screen shown by another app (a test's) has no doors
            app.add_doors(cast("BlackboxScreen[Any] | BlackboxModal[Any]", self))


class BlackboxScreen(_Blackbox, Screen[ResultT]):
    """A full screen of the UI; `HELP` opens its `?` help, its bindings' ids start with `BINDING_PREFIX`."""


class BlackboxModal(_Blackbox, ModalScreen[ResultT]):
    """A dialog over a screen; the same facts as `BlackboxScreen`."""
