"""What the UI remembers between runs: the fork settings last used for each parent cassette.

One small JSON file in the user's state folder ($XDG_STATE_HOME/blackbox/tui.json, by default
~/.local/state/blackbox/tui.json), written atomically; a missing or unreadable file is an empty memory.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from blackbox.format.writing import atomic_write

__all__ = ["ForkSettings", "recall_fork", "recall_theme", "remember_fork", "remember_theme", "state_file"]


class ForkSettings(msgspec.Struct, omit_defaults=True):
    """Who continued the fork (Blackbox itself, the agent command, the demo agent), the agent command and the
    continuation last used to fork one cassette."""

    runner: str = ""  # whatif | agent | demo; empty: the agent when a command is remembered, else whatif
    command: str = ""
    continuation: str = "script"  # script | inline | live
    script: str = ""
    replies: str = ""


class _State(msgspec.Struct, omit_defaults=True):
    forks: dict[str, ForkSettings] = msgspec.field(default_factory=dict)
    theme: str = ""


def state_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME", "").strip()
    root = Path(base) if base else Path.home() / ".local" / "state"
    return root / "blackbox" / "tui.json"


def _read() -> _State:
    try:
        return msgspec.json.decode(state_file().read_bytes(), type=_State)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return _State()


def _key(parent: Path) -> str:
    return str(parent.resolve())


def recall_fork(parent: Path) -> ForkSettings | None:
    return _read().forks.get(_key(parent))


def recall_theme() -> str:
    """The theme last chosen in the UI, or "" (Textual's default)."""
    return _read().theme


def remember_theme(theme: str) -> None:
    state = _read()
    if state.theme != theme:
        state.theme = theme
        _write(state)


def remember_fork(parent: Path, settings: ForkSettings) -> None:
    """Store the settings for this parent; a state folder that cannot be written is not an error."""
    state = _read()
    state.forks[_key(parent)] = settings
    _write(state)


def _write(state: _State) -> None:
    try:
        atomic_write(state_file(), msgspec.json.format(msgspec.json.encode(state), indent=2))
    except OSError:
        return
