"""What a printer lets out of a cassette: the redaction policy in force applied to the text and payloads that
`inspect`, `verify`, `diff` and `assert` print (docs/format.md, "Redaction"), so a cassette recorded before the
policy existed does not show what the policy masks.

Finding no policy costs one look at the nearest pyproject.toml: the redaction modules are imported only when
BLACKBOX_POLICY is set or that file mentions `blackbox.redact`.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["printed_payload", "printed_text", "text_printer"]

_NAMES_POLICY = re.compile(rb"blackbox\.redact(?![A-Za-z0-9_])")


def _may_have_policy(named: str | None, cwd: str) -> bool:
    if named:
        return True
    folder = Path(cwd)
    for candidate in (folder, *folder.parents):  # as the policy's own search: the first pyproject.toml, or .git
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:  # `[tool.blackbox.redact]` or its `.rules`, not the `blackbox.redaction` package's name
                return _NAMES_POLICY.search(pyproject.read_bytes()) is not None
            except OSError:
                return False
        if (candidate / ".git").exists():
            return False
    return False


def _redactor() -> Any:
    return _redactor_in(os.environ.get("BLACKBOX_POLICY"), os.getcwd())


@functools.lru_cache(maxsize=4)  # per policy source: a process that runs the CLI again (tests) looks again
def _redactor_in(named: str | None, cwd: str) -> Any:
    if not _may_have_policy(named, cwd):
        return None
    from blackbox.cli.render import EXIT_USAGE, fail
    from blackbox.live.redaction import active_redactor
    from blackbox.redaction.policy import PolicyError

    try:
        return active_redactor()
    except PolicyError as exc:
        fail(str(exc), EXIT_USAGE)


def _text_policy() -> Callable[[Any], Any] | None:
    redactor = _redactor()
    if redactor is None:
        return None
    from blackbox.live.redaction import content_policy

    return content_policy(redactor)


def printed_text(text: str) -> str:
    """`text` from a cassette (a summary, a value in a report) as the policy lets it out."""
    return text_printer()(text)


def text_printer() -> Callable[[str], str]:
    """`printed_text` with the policy looked up once: for a printer that prints a line per step."""
    policy = _text_policy()
    if policy is None:
        return _as_is

    def printed(text: str) -> str:
        out = policy(text)
        return out if isinstance(out, str) else text

    return printed


def _as_is(text: str) -> str:
    return text


def printed_payload(step_type: str, payload: Any) -> Any:
    """A step's payload as the policy lets it out (its path and tool rules included)."""
    redactor = _redactor()
    return payload if redactor is None else redactor(step_type, payload)
