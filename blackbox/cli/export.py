"""`blackbox export`: a cassette, or a folder of them, as OpenTelemetry GenAI traces (docs/format.md, "Export").

Every file is loaded, checked and turned into spans before anything is sent or written, so a bad file stops
the export with one line and nothing out; a backend that refuses or is down is one line and exit 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from blackbox.cli._app import app
from blackbox.cli.jsonout import print_json
from blackbox.cli.render import EXIT_USAGE, console, fail
from blackbox.cli.term import JSON_OUTPUT
from blackbox.errors import UsageError
from blackbox.exporters.base import Exporter, Target
from blackbox.exporters.registry import EXPORTERS
from blackbox.exporters.spans import GENAI_SEMCONV
from blackbox.format.inert import inert

if TYPE_CHECKING:
    from blackbox.exporters.spans import SpanData

_PANEL = "Cassettes"


def _help() -> str:
    lines = ["Export a cassette or a folder of them as OpenTelemetry GenAI traces (OTLP, or its JSON file).", "",
             f"The spans follow the GenAI semantic conventions {GENAI_SEMCONV}.", ""]
    for name, exporter in EXPORTERS.items():
        needs = (f" Needs the {exporter.extra} extra: pip install 'blackbox-agent\\[{exporter.extra}]'."
                 if exporter.extra else "")
        lines += [f"[bold]{name}[/]: {escape(exporter.description)}.{needs}", ""]
    lines += ["One trace per cassette: an invoke_agent root, a chat span per model call, an execute_tool span "
              "per tool call; ids derived from the cassette's hashes, so exporting twice gives the same trace. "
              "A fork is its own trace, linked to its parent's span at the fork point (the parent is looked for "
              "beside the fork, in the folder, or given with --parent). Message content only with --content, keys "
              "masked.", "",
              "[bold]Examples[/]", "",
              "  blackbox export traces/run.json --endpoint http://localhost:6006/v1/traces", "",
              "  blackbox export traces/ --to otlp --header x-mlflow-experiment-id=0", "",
              "  blackbox export traces/run.json --to otlp-json --out run.otlp.json --content"]
    return "\n".join(lines) + "\n"


def _names(fact: str) -> str:
    """The `--to` names of the exporters with `fact` (`needs_out`, `network`), for a message."""
    return ", ".join(name for name, exporter in EXPORTERS.items() if getattr(exporter, fact)) or "none"


def _headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for n, value in enumerate(values, start=1):
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            fail(f"--header #{n} must be K=V (a header name, '=', its value)", EXIT_USAGE)
        headers[key.strip()] = val.strip()
    return headers


@app.command("export", rich_help_panel=_PANEL, help=_help())
def export_command(
    path: Annotated[Path, typer.Argument(help="A cassette, or a folder of cassettes (*.json at any depth).",
                                         show_default=False)],
    to: Annotated[str, typer.Option("--to", help=f"The target: {', '.join(EXPORTERS)}.", metavar="TARGET")]
    = "otlp",
    out: Annotated[Path | None, typer.Option("--out", "-o", help=f"The file to write ({_names('needs_out')}).",
                                             show_default=False)] = None,
    endpoint: Annotated[str | None, typer.Option("--endpoint", help="The OTLP/HTTP traces URL (a base URL gets "
                                                 "/v1/traces); default OTEL_EXPORTER_OTLP_*, else "
                                                 "http://localhost:4318/v1/traces.", show_default=False)] = None,
    header: Annotated[list[str] | None, typer.Option("--header", help="A request header K=V (repeatable), added "
                                                     "to OTEL_EXPORTER_OTLP_HEADERS.", show_default=False)] = None,
    content: Annotated[bool, typer.Option("--content", help="Include message content, tool arguments and "
                                          "results (keys masked).")] = False,
    parent: Annotated[Path | None, typer.Option("--parent", help="A fork's parent cassette, to link the fork to "
                                                "it (default: looked for beside the fork).",
                                                show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as one JSON document for machines.")]
    = False,
) -> None:
    JSON_OUTPUT.begin(json_out)
    exporter = EXPORTERS.get(to)
    if exporter is None:
        fail(f"--to must be one of {', '.join(EXPORTERS)}, not {inert(to)!r}", EXIT_USAGE)
    if exporter.needs_out and out is None:
        fail(f"--to {to} writes a file: --out FILE is needed", EXIT_USAGE)
    if not exporter.needs_out and out is not None:
        fail(f"--out is for a file target ({_names('needs_out')}); --to {to} writes no file", EXIT_USAGE)
    if not exporter.network and (endpoint is not None or header):
        fail(f"--endpoint and --header are for a network target ({_names('network')}); --to {to} sends nothing",
             EXIT_USAGE)
    if not path.exists():
        fail(f"{inert(str(path))}: no such file or folder; check the path", EXIT_USAGE)
    if out is not None and out.is_dir():
        fail(f"--out {inert(str(out))} is a folder; name the file to write", EXIT_USAGE)
    target = Target(out, endpoint, _headers(header or []))
    from blackbox.errors import BlackboxError, CassetteError, WriteError

    try:
        exporter.check(target)
    except BlackboxError as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        exporter.require()  # what this target needs, asked before a file is read
        files, batches, linked = _run(path, exporter, target, content, parent)
    except CassetteError as exc:  # a file that is not a cassette that verifies: nothing to export (exit 2)
        fail(str(exc), EXIT_USAGE)
    except (BlackboxError, WriteError) as exc:  # the extra missing, the backend or the write failed
        fail(str(exc))
    spans = sum(len(b) for b in batches)
    where = exporter.where(target)
    if json_out:
        print_json({"ok": True, "to": to, "cassettes": len(files), "traces": len(batches), "spans": spans,
                    "linkedForks": linked, "content": content, "out": str(out) if out is not None else None})
        return
    console().print(f"Exported {len(files)} cassette(s) → {inert(where)} ({to}): {len(batches)} trace(s), "
                    f"{spans} spans{f', {linked} fork(s) linked to their parent' if linked else ''}"
                    f"{', with content' if content else ''}", markup=False, highlight=False)


def _run(path: Path, exporter: Exporter, target: Target, content: bool,
         parent: Path | None) -> tuple[list[Path], list[list[SpanData]], int]:
    """Load and convert every file, then export, with a progress bar on a terminal."""
    from blackbox.exporters.batch import span_batches
    from blackbox.live.redaction import active_redactor

    try:  # a run leaves only as the redaction policy in force lets it: the whole cassette, before its spans
        redactor = active_redactor()  # (docs/format.md, "Redaction")
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)

    if not sys.stderr.isatty():
        files, batches, linked = span_batches(path, with_content=content, parent=parent, redactor=redactor)
        exporter.export(batches, target)
        return files, batches, linked
    from blackbox.cli.progress import progress

    with progress(f"reading {path.name}") as update:
        files, batches, linked = span_batches(path, with_content=content, parent=parent, loaded=update,
                                              redactor=redactor)
    where = f" to {exporter.where(target)}" if exporter.network else ""
    with progress(f"exporting {len(files)} cassette(s){where}") as bar:
        exporter.export(batches, target, lambda n: bar(n, len(batches)), bar.say)
    return files, batches, linked
