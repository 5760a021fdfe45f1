"""`blackbox import` of a folder of sessions (`--in DIR`, or the agent's own folder): list them, or import each one
past broken ones, with a bar of files done on a terminal."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from blackbox.cli.importing import failure, import_one, result_of, tools_path
from blackbox.cli.jsonout import print_json
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, console, fail
from blackbox.cli.term import colour
from blackbox.errors import UsageError
from blackbox.format.inert import inert
from blackbox.importers.common import TranscriptError, default_trace_id
from blackbox.importers.registry import IMPORTERS
from blackbox.importers.sessions import SessionFile, find_sessions, parse_since
from blackbox.live.redaction import ACTIVE

__all__ = ["import_folder"]


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")


def _size(n: int) -> str:
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def import_folder(source: str, folder: Path, out_dir: Path | None, since: str | None, json_out: bool, *,
                  default: bool, redactor: Any = ACTIVE) -> None:
    """List (no `--out`) or import every session of `source` below `folder`, newest first."""
    importer = IMPORTERS[source]
    if not folder.is_dir():
        where = f"; it is where {source} keeps its sessions: pass --in FOLDER if yours are elsewhere" if default else ""
        fail(f"{folder}: no such folder{where}", EXIT_USAGE)
    try:
        since_at = parse_since(since) if since is not None else None
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)
    sessions = find_sessions(importer, folder, since_at)
    if not sessions:
        recent = f" modified since {since}" if since is not None else ""
        fail(f"{folder}: no {' or '.join(importer.patterns)} session files{recent} in this folder or below it; "
             "point --in at the folder that holds the sessions")
    if out_dir is None:
        _list(source, folder, sessions, json_out)
        return
    if out_dir.exists() and not out_dir.is_dir():
        fail(f"--out {out_dir} is a file; with a folder of sessions --out must be a folder", EXIT_USAGE)
    if _inside(out_dir, folder):
        fail(f"--out {out_dir} is inside --in {folder}; write the cassettes outside the session folder (the "
             "transcripts are never overwritten)", EXIT_USAGE)
    _import_all(source, folder, out_dir, sessions, json_out, redactor)


def _list(source: str, folder: Path, sessions: list[SessionFile], json_out: bool) -> None:
    if json_out:
        print_json({"ok": True, "source": source, "in": str(folder), "listed": len(sessions), "sessions": [
            {"file": str(s.relative), "modified": datetime.fromtimestamp(s.modified, UTC).isoformat(),
             "bytes": s.size} for s in sessions]})
        return
    out = console()
    out.print(f"{len(sessions)} {source} session(s) in {inert(str(folder))}, newest first:", markup=False)
    for s in sessions:
        out.print(f"  {_when(s.modified)}  {_size(s.size):>9}  {escape(inert(str(s.relative)))}", highlight=False)
    out.print(f"Import them with: blackbox import --from {source} --in {inert(str(folder))} --out <folder>",
              markup=False)


def _import_all(source: str, folder: Path, out_dir: Path, sessions: list[SessionFile], json_out: bool,
                redactor: Any = ACTIVE) -> None:
    """One cassette per session, past broken ones; a bar of files done when there are several, on a terminal."""
    out_console = console()
    failed = 0
    results: list[dict[str, Any]] = []

    def one(session: SessionFile) -> None:
        nonlocal failed
        target = session.target(out_dir)
        name = str(session.relative)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            cassette, progress = import_one(source, session.path, target, default_trace_id(session.path),
                                            redactor=redactor)
        except (TranscriptError, OSError) as exc:
            failed += 1
            results.append({"file": name, "ok": False, "error": failure(exc)})
            if not json_out:
                out_console.print(f"  [red]FAIL[/] {escape(inert(name))}: {escape(inert(failure(exc)))}",
                                  highlight=False)
            return
        written = result_of(cassette, progress)
        results.append({"file": name, "ok": True, "out": str(target), **written})
        if not json_out:
            skipped = sum(progress.skipped.values())
            note = f", {skipped} unknown record(s) skipped" if skipped else ""
            out_console.print(
                f"  [green]ok[/]   {escape(inert(name))} → {escape(inert(str(target.relative_to(out_dir))))}  "
                f"{written['steps']} steps, {written['status']}{note}, tools "
                f"{escape(inert(tools_path(cassette)))}", highlight=False)

    if len(sessions) > 1 and not json_out and colour(sys.stderr):
        from blackbox.cli.progress import progress as bar

        with bar(f"importing {len(sessions)} {source} sessions") as update:
            for n, session in enumerate(sessions):
                update(n, len(sessions))
                one(session)
            update(len(sessions), len(sessions))
    else:
        for session in sessions:
            one(session)
    imported = len(sessions) - failed
    if json_out:
        print_json({"ok": not failed, "source": source, "in": str(folder), "out": str(out_dir),
                    "imported": imported, "failed": failed, "sessions": results})
        if failed:
            raise typer.Exit(EXIT_FAILURE)
        return
    out_console.print(f"Imported {imported} of {len(sessions)} session(s) from {folder} into {out_dir}"
                      + (f"; {failed} failed" if failed else ""), markup=False)
    if failed:
        raise typer.Exit(EXIT_FAILURE)
