"""`blackbox import`: a transcript of any importer in the registry (a coding agent's session, a chat-JSON file) as
a cassette (docs/format.md, "Import"); a folder of sessions is `blackbox.cli.import_folders`.

A cassette is written only when it passes verify and holds no API key from the environment; any failure is
one line naming the line or position (never the transcript's content) and "Nothing was written."
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from blackbox.cli._app import app
from blackbox.cli.importing import failure, import_one, progress_bar, result_of, skipped_text, tools_path
from blackbox.cli.jsonout import print_json
from blackbox.cli.policy import PolicyOption, redactor_for
from blackbox.cli.render import EXIT_USAGE, console, fail
from blackbox.cli.term import JSON_OUTPUT
from blackbox.fork.plan import same_file
from blackbox.format.inert import inert
from blackbox.importers.registry import IMPORTERS, with_folder
from blackbox.live.redaction import ACTIVE

_PANEL = "Cassettes"


def _help() -> str:
    """The command's help, from the registry: each format, what it reads, where its agent keeps sessions."""
    lines = ["Import a transcript written by another tool (a coding agent's session) as a cassette.", ""]
    for name, importer in IMPORTERS.items():
        where = ""
        if importer.folder_variable is not None:
            variable, sub = importer.folder_variable
            where = f" Sessions: [cyan]${variable}/{sub}[/], else [cyan]{escape(importer.folder or '')}[/]."
        elif importer.folder is not None:
            where = f" Sessions: [cyan]{escape(importer.folder)}[/]."
        lines.append(f"[bold]{name}[/]: {escape(importer.description)}.{where}")
        lines.append("")
    folders = ", ".join(with_folder())
    lines += [
        f"--in may be a folder ({folders}): every session in it, at any depth, newest first, becomes "
        "[cyan]<out-dir>/<same relative path>.json[/]. Without --in, the agent's own session folder is used; "
        "without --out, the sessions found are listed. --since keeps the recent ones.",
        "",
        "The cassette is written only if it passes verify and holds no API key from the environment.",
        "",
        "[bold]Examples[/]",
        "",
        "  blackbox import --from claude-code --in ~/.claude/projects/shop/3f2a.jsonl --out traces/session.json",
        "",
        "  blackbox import --from codex --since 2d",
        "",
        "  blackbox import --from codex --since 2d --out traces/codex",
        "",
        "  blackbox import --from gemini --in ~/.gemini/tmp --out traces/gemini",
        "",
        "  blackbox import --from chat-json --in transcript.json --out traces/chat.json --id chat-run-1 --json",
    ]
    return "\n".join(lines) + "\n"


def _complete_source(incomplete: str) -> list[str]:
    return [s for s in IMPORTERS if s.startswith(incomplete)]


def _import_file(source: str, path: Path, out: Path, trace_id: str, json_out: bool, redactor: Any = ACTIVE) -> None:
    from blackbox.format.outcome import outcome
    from blackbox.importers.common import TranscriptError

    try:
        with progress_bar(0 if json_out else path.stat().st_size) as bar:
            cassette, progress = import_one(source, path, out, trace_id, bar, redactor)
    except (TranscriptError, OSError) as exc:
        if json_out:
            print_json({"ok": False, "source": source, "in": str(path), "out": str(out), "written": False,
                        "error": f"{path}: {failure(exc)}"})
        fail(f"{inert(str(path))}: {inert(failure(exc))}", exc.exit_code if isinstance(exc, TranscriptError) else 1)
    if json_out:
        print_json({"ok": True, "source": source, "in": str(path), "out": str(out), "written": True,
                    **result_of(cassette, progress)})
        return
    out_console = console()
    out_console.print(f"Imported {inert(str(path))} → {inert(str(out))}", markup=False)
    rows = [("source", f"{source} ({inert(str(path))})"), ("steps", str(len(cassette.steps))),
            ("status", outcome(cassette).status), ("tools", tools_path(cassette))]
    skipped = skipped_text(progress)
    if skipped is not None:
        rows.append(("skipped", skipped))
    for label, value in rows:
        out_console.print(f"  [bold]{label:<7}[/] {escape(inert(value))}", highlight=False)


@app.command("import", rich_help_panel=_PANEL, help=_help())
def import_command(
    source: Annotated[
        str,
        typer.Option("--from", help=f"The transcript format: {', '.join(IMPORTERS)}.", metavar="FORMAT",
                     autocompletion=_complete_source, show_default=False),
    ],
    in_path: Annotated[
        Path | None, typer.Option("--in", help="The transcript file, or a folder of sessions (default: the agent's "
                                               "own session folder).", show_default=False)
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="The cassette to write (a folder for a folder of sessions; "
                                                      "without it a folder's sessions are listed).",
                                  show_default=False)
    ] = None,
    trace_id: Annotated[
        str | None, typer.Option("--id", help="Trace id (default: the transcript file's name without its extension; "
                                              "a folder names each cassette so).")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only sessions modified since a date, a time or an age (3d, 12h).",
                                 metavar="WHEN", show_default=False)
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as one JSON document for machines.")]
    = False,
    policy: PolicyOption = None,
) -> None:
    JSON_OUTPUT.begin(json_out)
    importer = IMPORTERS.get(source)
    if importer is None:
        fail(f"--from must be one of {', '.join(IMPORTERS)}, not {source!r}", EXIT_USAGE)
    if trace_id is not None and not trace_id:
        fail("--id must not be empty", EXIT_USAGE)
    folder = in_path if in_path is not None else importer.default_folder()
    if folder is None:
        fail(f"--from {source} has no session folder; pass the transcript with --in FILE", EXIT_USAGE)
    if in_path is None or in_path.is_dir():
        from blackbox.cli.import_folders import import_folder

        if importer.folder is None:
            fail(f"--in {folder} is a folder; a folder of sessions is for {', '.join(with_folder())}", EXIT_USAGE)
        if trace_id is not None:
            fail("--id names one cassette; a folder of sessions takes each session's name", EXIT_USAGE)
        import_folder(source, folder, out, since, json_out, default=in_path is None, redactor=redactor_for(policy))
        return
    if since is not None:
        fail("--since picks sessions from a folder; --in names one file", EXIT_USAGE)
    if out is None:
        fail("--out is needed: the cassette to write", EXIT_USAGE)
    if not in_path.exists():
        fail(f"--in {inert(str(in_path))}: no such file; check the path", EXIT_USAGE)
    if same_file(out, in_path):
        fail("--out must differ from --in (the same file, through a link or not); the transcript is never "
             "overwritten", EXIT_USAGE)
    from blackbox.importers.common import default_trace_id

    _import_file(source, in_path, out, trace_id or default_trace_id(in_path), json_out, redactor_for(policy))
