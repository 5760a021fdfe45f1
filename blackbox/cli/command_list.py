"""The commands as the root help lists them, by panel: the light root help (`cli/fast`) prints them and the help
capture (`cli/helpview`) walks them; a test keeps them equal to the typer application's."""

from __future__ import annotations

__all__ = ["COMMANDS"]

# (panel, ((command, first line of its help), ...)) in the order the help lists them.
COMMANDS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Try it offline", (  # `demo` is a group (`demo fork`): typer lists groups after commands
        ("check", "Run the whole loop offline in about a second: record → verify → fork → verify → diff."),
        ("demo", "Record the built-in demo agent (a scripted model and three fixture tools) — no API key, no "
                 "network."),
    )),
    ("Run an agent", (
        ("record", "Record an agent run into a cassette."),
        ("replay", "Replay an agent offline against a cassette, or show what it recorded when no command is "
                   "given."),
        ("fork", "Fork a run at a tool result with a different value, and continue live or from scripted "
                 "replies."),
        ("recover", "Turn the journal of a recording that was killed (even with kill -9) into a verified, "
                    "incomplete cassette."),
        ("what-if", "Fork a run at a tool result without the agent: Blackbox continues the conversation itself."),
        ("sweep", "Fork a run many times at one tool result: pass rates per variant, against the run's own flap "
                  "rate."),
        ("migrate", "Ask every recorded run of a folder again with another model, and say what changed."),
    )),
    ("Cassettes", (
        ("verify", "Check a cassette: schema version, hash chain, provider neutrality, replayability; print its "
                   "final hash."),
        ("assert", "Verify a cassette, then check what the run did. For CI: exit 1 on any failure."),
        ("diff", "Show where two runs diverge, what changed there, and what it did to the outcome."),
        ("inspect", "Show a cassette: id, parent, created, outcome and one row per step; or one step in full."),
        ("list", "List the cassettes in a folder: id, steps, status, created, parent; invalid files with a "
                 "reason."),
        ("export", "Export a cassette or a folder of them as OpenTelemetry GenAI traces (OTLP, or its JSON file)."),
        ("import", "Import a transcript written by another tool (a coding agent's session) as a cassette."),
        ("scan", "Check cassettes, crash journals and leftover temporary files for values in the clear."),
        ("redact", "Apply the redaction policy to an existing cassette and re-chain it into a new one."),
        ("drift", "Re-run a sample of recorded runs' model calls live and show what drifted."),
    )),
    ("Explore", (
        ("tui", "Browse a cassette, diff two, and fork a run at a tool result — in the terminal."),
    )),
)
