"""`--policy FILE`, declared once for every command that makes or checks a cassette, and the redactor it names.

The choice itself is `blackbox.live.redaction.active_redactor`'s (the flag, else BLACKBOX_POLICY, else
`[tool.blackbox.redact]` in the project's pyproject.toml), the one path every command and the session share.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from blackbox.cli.render import EXIT_USAGE, fail
from blackbox.errors import UsageError

if TYPE_CHECKING:
    from blackbox.redaction.apply import Redactor

__all__ = ["PolicyOption", "redactor_for"]

PolicyOption = Annotated[Path | None, typer.Option(
    "--policy", metavar="FILE", help="The redaction policy (a TOML file, or a pyproject.toml; "
    "docs/format.md#redaction); default BLACKBOX_POLICY, else \\[tool.blackbox.redact] in the project's "
    "pyproject.toml.", show_default=False)]


def redactor_for(policy: Path | None) -> Redactor | None:
    """The redactor in force with `--policy` (None: no policy anywhere); a wrong policy or key fails in one
    line (exit 2)."""
    from blackbox.live.redaction import active_redactor

    try:
        found = active_redactor(policy)
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)
    return found
