"""Whether this call asked for JSON, and whether its one document was printed: the state `term` (the error
document) and `jsonout` (the writer) share, apart from both so neither imports the other."""

from __future__ import annotations

import itertools

__all__ = ["JSON_OUTPUT"]


class _JsonOutput:
    """Whether this call asked for JSON (`--json`, `--format json`) and whether its document was printed:
    every such call prints exactly one document, an error document when it fails before its own."""

    def __init__(self) -> None:
        self.wanted = False
        self.printed = False

    def expect(self, args: list[str]) -> None:
        """Note from the command line (up to `--`) whether the call asked for JSON."""
        own = args[: args.index("--")] if "--" in args else args
        self.wanted = "--json" in own or "--format=json" in own or any(
            a == "--format" and b.lower() == "json" for a, b in itertools.pairwise(own))
        self.printed = False

    def begin(self, wanted: bool) -> None:
        """A command that knows its own options says whether it prints JSON (the typer app may run without
        `main`, as tests run it)."""
        self.wanted, self.printed = wanted, False


JSON_OUTPUT = _JsonOutput()
