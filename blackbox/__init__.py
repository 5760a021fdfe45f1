"""Blackbox: make one run of an LLM agent reproducible.

A small public API.  Importing it is cheap: no SDK, HTTP stack or terminal UI is imported until a
session actually records or replays.  (Submodules are imported here, before the names that shadow them,
so `blackbox.verify` is always the function.)
"""

from __future__ import annotations

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
from blackbox.outcome import Outcome, outcome
from blackbox.secrets import mask_secrets
from blackbox.session import Session, session
from blackbox.verify import VerifyReport, verify

__version__ = "0.1.0"

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
    "is_blackbox_error",
    "load",
    "mask_secrets",
    "outcome",
    "save",
    "session",
    "verify",
]
