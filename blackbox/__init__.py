"""Blackbox: make one run of an LLM agent reproducible.

A small public API, loaded on first use: `import blackbox` imports nothing else, so the command line starts
fast and no SDK, HTTP stack or terminal UI is imported until a session records or replays.  The modules live in
the wings' folders (`blackbox.format.verify` holds `verify`), so no submodule shares a public function's name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blackbox.errors import (
        BlackboxError,
        BlackboxUnsupportedError,
        CassetteError,
        ReplayDivergenceError,
        SessionError,
        is_blackbox_error,
    )
    from blackbox.format.cassette import Cassette, Step, load, save
    from blackbox.format.diff import DiffReport, diff
    from blackbox.format.outcome import Outcome, outcome
    from blackbox.format.secrets import mask_secrets
    from blackbox.format.verify import VerifyReport, verify
    from blackbox.importers.chat_json import import_chat_json
    from blackbox.importers.claude_code import import_claude_code
    from blackbox.importers.codex import import_codex
    from blackbox.importers.gemini import import_gemini
    from blackbox.live.session import Session, session

__version__ = "0.1.0"

_WHERE: dict[str, str] = {
    "Cassette": "blackbox.format.cassette", "Step": "blackbox.format.cassette", "load": "blackbox.format.cassette",
    "save": "blackbox.format.cassette", "DiffReport": "blackbox.format.diff", "diff": "blackbox.format.diff",
    "BlackboxError": "blackbox.errors", "BlackboxUnsupportedError": "blackbox.errors",
    "CassetteError": "blackbox.errors", "ReplayDivergenceError": "blackbox.errors",
    "SessionError": "blackbox.errors", "is_blackbox_error": "blackbox.errors",
    "import_chat_json": "blackbox.importers.chat_json", "import_claude_code": "blackbox.importers.claude_code",
    "import_codex": "blackbox.importers.codex", "import_gemini": "blackbox.importers.gemini",
    "Outcome": "blackbox.format.outcome", "outcome": "blackbox.format.outcome",
    "mask_secrets": "blackbox.format.secrets",
    "Session": "blackbox.live.session", "session": "blackbox.live.session",
    "VerifyReport": "blackbox.format.verify", "verify": "blackbox.format.verify",
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

