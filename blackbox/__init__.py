"""Blackbox: make one run of an LLM agent reproducible.

A small public API, loaded on first use: `import blackbox` imports nothing else, so the command line starts
fast and no SDK, HTTP stack or terminal UI is imported until a session records or replays.  Four names are
also submodules (`blackbox.verify`, `diff`, `outcome`, `session`); the package keeps them bound to the
functions even after the submodule is imported (importing a submodule would otherwise rebind the name).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blackbox.cassette import Cassette, Step, load, save
    from blackbox.diff import DiffReport, diff
    from blackbox.errors import (
        BlackboxError,
        BlackboxUnsupportedError,
        CassetteError,
        ReplayDivergenceError,
        SessionError,
        is_blackbox_error,
    )
    from blackbox.importers.chat_json import import_chat_json
    from blackbox.importers.claude_code import import_claude_code
    from blackbox.importers.codex import import_codex
    from blackbox.importers.gemini import import_gemini
    from blackbox.outcome import Outcome, outcome
    from blackbox.secrets import mask_secrets
    from blackbox.session import Session, session
    from blackbox.verify import VerifyReport, verify

__version__ = "0.1.0"

_WHERE: dict[str, str] = {
    "Cassette": "blackbox.cassette", "Step": "blackbox.cassette", "load": "blackbox.cassette",
    "save": "blackbox.cassette", "DiffReport": "blackbox.diff", "diff": "blackbox.diff",
    "BlackboxError": "blackbox.errors", "BlackboxUnsupportedError": "blackbox.errors",
    "CassetteError": "blackbox.errors", "ReplayDivergenceError": "blackbox.errors",
    "SessionError": "blackbox.errors", "is_blackbox_error": "blackbox.errors",
    "import_chat_json": "blackbox.importers.chat_json", "import_claude_code": "blackbox.importers.claude_code",
    "import_codex": "blackbox.importers.codex", "import_gemini": "blackbox.importers.gemini",
    "Outcome": "blackbox.outcome", "outcome": "blackbox.outcome", "mask_secrets": "blackbox.secrets",
    "Session": "blackbox.session", "session": "blackbox.session",
    "VerifyReport": "blackbox.verify", "verify": "blackbox.verify",
}

__all__ = [
    "BlackboxError",
    "BlackboxUnsupportedError",
    "Cassette",
    "CassetteError",
    "DiffReport",
    "Outcome",
    "ReplayDivergenceError",
    "Session",
    "SessionError",
    "Step",
    "VerifyReport",
    "__version__",
    "diff",
    "import_chat_json",
    "import_claude_code",
    "import_codex",
    "import_gemini",
    "is_blackbox_error",
    "load",
    "mask_secrets",
    "outcome",
    "save",
    "session",
    "verify",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Keeps `blackbox.verify` (and the other three) the function when the submodule of that name is imported."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _WHERE.get(name) == f"{__name__}.{name}":
            return  # the submodule stays in sys.modules; the attribute is the function, loaded on first use
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
