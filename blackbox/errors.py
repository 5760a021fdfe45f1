"""The exceptions Blackbox raises; every one is a `BlackboxError`."""

from __future__ import annotations

__all__ = [
    "BlackboxError",
    "BlackboxUnsupportedError",
    "CassetteError",
    "ReplayDivergenceError",
    "SessionError",
    "UsageError",
    "WriteError",
    "is_blackbox_error",
]


class BlackboxError(Exception):
    """Base of every error Blackbox raises on purpose."""


class CassetteError(BlackboxError):
    """A cassette file cannot be read: not JSON, wrong version, bad structure or a broken chain."""


class WriteError(BlackboxError, OSError):
    """A file could not be written (full disk, read-only folder, a device or a folder at the path).

    Nothing was written and whatever was at the path is unchanged.  An `OSError` too, so callers that
    handle a failed write keep handling this one; `str()` is the whole one-line message."""

    def __init__(self, message: str, errno_: int | None = None, strerror: str | None = None) -> None:
        if errno_ is not None:
            OSError.__init__(self, errno_, strerror)
        else:
            OSError.__init__(self, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(BlackboxError):
    """The caller asked for something impossible (bad flag value, bad environment variable)."""


class BlackboxUnsupportedError(BlackboxError):
    """A request uses a feature Blackbox cannot record or replay faithfully."""


class ReplayDivergenceError(BlackboxError):
    """The agent did something other than what the cassette recorded."""

    def __init__(self, message: str, *, step: int | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.step = step
        self.path = path


class SessionError(BlackboxError):
    """The session was used wrongly (finished, overlapping calls, secrets in the output)."""


def _says_blackbox(exc: BaseException) -> bool:
    """The SDKs turn Blackbox's HTTP 400 into their own error; its body carries the `[blackbox]` message
    (anthropic keeps the whole body, openai the `error` object)."""
    if str(exc).startswith("[blackbox]"):
        return True
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return isinstance(message, str) and message.startswith("[blackbox]")


def is_blackbox_error(exc: BaseException) -> bool:
    """True when `exc` is, or wraps, an error raised by Blackbox (SDKs may wrap transport errors, and answer
    Blackbox's HTTP 400 with their own error class)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, BlackboxError) or _says_blackbox(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
