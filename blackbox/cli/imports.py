"""`blackbox import`: turn a Claude Code session or a chat-JSON transcript into a cassette (docs/format.md, "Import").

A cassette is written only when it passes verify and holds no API key from the environment; any failure is
one line naming the line or position (never the transcript's content) and "Nothing was written."
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from blackbox.cli.app import app
from blackbox.cli.jsonout import print_json
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, console, err_console, fail
from blackbox.cli.term import JSON_OUTPUT
from blackbox.errors import WriteError
from blackbox.fork import same_file
from blackbox.inert import inert

if TYPE_CHECKING:
    from blackbox.cassette import Cassette

SOURCES = ("claude-code", "chat-json")
_PANEL = "Cassettes"
_HELP = """Import a transcript written by another tool as a cassette.

[bold]claude-code[/]: a Claude Code session file ([cyan]~/.claude/projects/<project>/<session>.jsonl[/]), or a
whole project folder (every session becomes [cyan]<out-dir>/<session>.json[/]).
[bold]chat-json[/]: [cyan]{tools?, messages}[/] with one OpenAI-style tool call per assistant message.

The cassette is written only if it passes verify and holds no API key from the environment.

[bold]Examples[/]

  blackbox import --from claude-code --in ~/.claude/projects/shop/3f2a.jsonl --out traces/session.json

  blackbox import --from claude-code --in ~/.claude/projects/shop --out traces/shop

  blackbox import --from chat-json --in transcript.json --out traces/chat.json --id chat-run-1

  blackbox import --from chat-json --in transcript.json --out traces/chat.json --json
"""

def _complete_source(incomplete: str) -> list[str]:
    return [s for s in SOURCES if s.startswith(incomplete)]


class _Bar:
    """Progress by bytes read; then the phase after reading, so a full bar is never mistaken for done."""

    def __init__(self, bar: Any, task: Any) -> None:
        self.bar, self.task = bar, task

    def advance(self, n: int) -> None:
        self.bar.advance(self.task, n)

    def phase(self, description: str) -> None:
        self.bar.update(self.task, description=description, refresh=True)


@contextmanager
def _progress(total: int) -> Iterator[_Bar | None]:
    """A bar on a terminal; nothing otherwise (pipes and CI logs stay clean)."""
    if not sys.stderr.isatty() or total == 0:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    with Progress(
        "[progress.description]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
        TimeRemainingColumn(), console=err_console(), transient=True,
    ) as bar:
        yield _Bar(bar, bar.add_task("reading", total=total))


def _convert(source: str, path: Path, trace_id: str, progress: Callable[[int], None] | None) -> Cassette:
    if source == "claude-code":
        from blackbox.importers.claude_code import import_claude_code

        return import_claude_code(path, trace_id, progress)
    from blackbox.importers.chat_json import import_chat_json

    return import_chat_json(path, trace_id)


def _import_one(source: str, path: Path, out: Path, trace_id: str, bar: _Bar | None) -> Cassette:
    """Convert, check and write; TranscriptError or OSError when nothing was written."""
    from blackbox.importers.common import check_writable
    from blackbox.writing import atomic_write

    if bar is not None:
        bar.phase(f"reading {path.name}")
    cassette = _convert(source, path, trace_id, bar.advance if bar is not None else None)
    if bar is not None:
        bar.phase(f"verifying and writing {out.name}")
    atomic_write(out, check_writable(cassette))
    return cassette


def _tools_path(cassette: Cassette, shown: int = 12) -> str:
    """The tool path; a long one shows its start and end (a long session calls hundreds of tools)."""
    from blackbox.outcome import outcome

    tools = outcome(cassette).tools
    if not tools:
        return "(none)"
    if len(tools) <= shown:
        return " → ".join(tools)
    head, tail = tools[: shown - 3], tools[-3:]
    return " → ".join(head) + f" → … {len(tools) - len(head) - len(tail)} more … → " + " → ".join(tail)


def _failure(exc: Exception) -> str:
    from blackbox.importers.common import NOTHING_WRITTEN, TranscriptError

    if isinstance(exc, TranscriptError):
        message = str(exc)
        return f"{message}{'' if message.endswith(('.', '?')) else '.'} {NOTHING_WRITTEN}"
    if isinstance(exc, WriteError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"no such file; check the path. {NOTHING_WRITTEN}"
    return f"cannot read or write: {getattr(exc, 'strerror', None) or type(exc).__name__}. {NOTHING_WRITTEN}"


def _result(cassette: Cassette) -> dict[str, Any]:
    """What `--json` says of a written cassette."""
    from blackbox.outcome import outcome

    o = outcome(cassette)
    return {"id": cassette.id, "steps": len(cassette.steps), "status": o.status, "tools": list(o.tools)}


def _import_file(source: str, path: Path, out: Path, trace_id: str, json_out: bool) -> None:
    from blackbox.importers.common import TranscriptError
    from blackbox.outcome import outcome

    try:
        with _progress(0 if json_out else path.stat().st_size) as bar:
            cassette = _import_one(source, path, out, trace_id, bar)
    except (TranscriptError, OSError) as exc:
        if json_out:
            print_json({"ok": False, "source": source, "in": str(path), "out": str(out), "written": False,
                        "error": f"{path}: {_failure(exc)}"})
        fail(f"{inert(str(path))}: {inert(_failure(exc))}")
    if json_out:
        print_json({"ok": True, "source": source, "in": str(path), "out": str(out), "written": True,
                    **_result(cassette)})
        return
    out_console = console()
    out_console.print(f"Imported {inert(str(path))} → {inert(str(out))}", markup=False)
    for label, value in (
        ("source", f"{source} ({inert(str(path))})"),
        ("steps", str(len(cassette.steps))),
        ("status", outcome(cassette).status),
        ("tools", _tools_path(cassette)),
    ):
        out_console.print(f"  [bold]{label:<7}[/] {escape(inert(value))}", highlight=False)


def _import_folder(folder: Path, out_dir: Path, json_out: bool) -> None:
    """Every `*.jsonl` session of a Claude Code project folder, one cassette each, past broken ones."""
    from blackbox.importers.common import TranscriptError
    from blackbox.outcome import outcome

    sessions = sorted(folder.glob("*.jsonl"))
    if not sessions:
        fail(f"{folder}: no *.jsonl session files in this folder; point --in at a Claude Code project folder")
    if out_dir.exists() and not out_dir.is_dir():
        fail(f"--out {out_dir} is a file; with a folder of sessions --out must be a folder", EXIT_USAGE)
    out_console = console()
    failed = 0
    results: list[dict[str, Any]] = []
    with _progress(0 if json_out else sum(p.stat().st_size for p in sessions)) as bar:
        for path in sessions:
            target = out_dir / f"{path.stem}.json"
            try:
                cassette = _import_one("claude-code", path, target, path.stem, bar)
            except (TranscriptError, OSError) as exc:
                failed += 1
                results.append({"file": path.name, "ok": False, "error": _failure(exc)})
                if not json_out:
                    out_console.print(f"  [red]FAIL[/] {escape(inert(path.name))}: {escape(inert(_failure(exc)))}",
                                      highlight=False)
                continue
            results.append({"file": path.name, "ok": True, "out": str(target), **_result(cassette)})
            if not json_out:
                out_console.print(
                    f"  [green]ok[/]   {escape(inert(path.name))} → {escape(inert(target.name))}  "
                    f"{len(cassette.steps)} steps, {outcome(cassette).status}, tools "
                    f"{escape(inert(_tools_path(cassette)))}", highlight=False)
    imported = len(sessions) - failed
    if json_out:
        print_json({"ok": not failed, "source": "claude-code", "in": str(folder), "out": str(out_dir),
                    "imported": imported, "failed": failed, "sessions": results})
        if failed:
            raise typer.Exit(EXIT_FAILURE)
        return
    out_console.print(f"Imported {imported} of {len(sessions)} session(s) from {folder} into {out_dir}"
                      + (f"; {failed} failed" if failed else ""), markup=False)
    if failed:
        raise typer.Exit(EXIT_FAILURE)


@app.command("import", rich_help_panel=_PANEL, help=_HELP)
def import_command(
    source: Annotated[
        str,
        typer.Option("--from", help="The transcript format: claude-code or chat-json.", metavar="FORMAT",
                     autocompletion=_complete_source, show_default=False),
    ],
    in_path: Annotated[
        Path, typer.Option("--in", help="The transcript file (claude-code: or a project folder).", show_default=False)
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="The cassette to write (a folder when --in is a folder).",
                           show_default=False)
    ],
    trace_id: Annotated[
        str | None, typer.Option("--id", help="Trace id (default: imported; a folder uses each session's name).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as one JSON document for machines.")]
    = False,
) -> None:
    JSON_OUTPUT.begin(json_out)
    if source not in SOURCES:
        fail(f"--from must be one of {', '.join(SOURCES)}, not {source!r}", EXIT_USAGE)
    if trace_id is not None and not trace_id:
        fail("--id must not be empty", EXIT_USAGE)
    if in_path.is_dir():
        if source != "claude-code":
            fail(f"--in {in_path} is a folder; only --from claude-code imports a folder of sessions", EXIT_USAGE)
        if trace_id is not None:
            fail("--id names one cassette; a folder of sessions takes each session's name", EXIT_USAGE)
        _import_folder(in_path, out, json_out)
        return
    if not in_path.exists():
        fail(f"--in {inert(str(in_path))}: no such file; check the path", EXIT_USAGE)
    if same_file(out, in_path):
        fail("--out must differ from --in (the same file, through a link or not); the transcript is never "
             "overwritten", EXIT_USAGE)
    from blackbox.importers.common import DEFAULT_TRACE_ID

    _import_file(source, in_path, out, trace_id or DEFAULT_TRACE_ID, json_out)
