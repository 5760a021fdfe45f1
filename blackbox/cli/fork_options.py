"""The options the agent's fork (`blackbox fork`) and the what-if (`blackbox what-if`) share, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["At", "Live", "Out", "Parent", "Script", "SetValue"]

Parent = Annotated[Path | None, typer.Argument(help="The parent cassette.", dir_okay=False)]
At = Annotated[int | None, typer.Option("--at", help="The tool_result step to fork at.")]
SetValue = Annotated[str | None, typer.Option("--set", help="The new tool result: JSON (quote strings) or @file.")]
Out = Annotated[Path | None, typer.Option("--out", "-o", help="Where to write the fork.", dir_okay=False)]
Live = Annotated[bool, typer.Option("--live", help="Continue against the real API after the fork point.")]
Script = Annotated[
    Path | None, typer.Option("--script", help="Continue from a JSON array of model replies.", dir_okay=False)
]
