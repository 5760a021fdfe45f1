"""`blackbox list`: the cassettes in a folder, one row each; invalid files with a reason.

Light (no typer, no rich but the progress bar of a long listing on a terminal), so the light dispatcher runs
it: a folder of small cassettes costs a bare interpreter's start-up.  Each file is read lazily and its chain
checked one payload at a time; a file the lazy reading does not take plainly is read whole, whose verdict is
the reference.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec

from blackbox.cli.inspecting import created
from blackbox.cli.jsonout import print_json
from blackbox.cli.reports import shown, table
from blackbox.cli.term import EXIT_USAGE, colour, error_line, paint
from blackbox.errors import CassetteError
from blackbox.format.cassette import Cassette, chain_break, load
from blackbox.format.diff import lazy_outcome
from blackbox.format.lazy import LazyCassette, load_lazy
from blackbox.format.outcome import outcome
from blackbox.format.provenance import answering_models, made_dict, models_dicts
from blackbox.format.secrets import mask_secrets

__all__ = ["DEFAULT_FOLDER", "run_list"]

DEFAULT_FOLDER = Path("traces")  # what `blackbox list` lists without a folder (where `blackbox demo` writes)


def _invalid(path: Path, reason: str) -> dict[str, Any]:
    return {"file": path.name, "valid": False, "reason": reason}


def _provenance(c: Cassette | LazyCassette) -> dict[str, Any]:
    """The row's `made` (the file's field) and its model pairs (docs/format.md, "Origin")."""
    return {"made": made_dict(c.made), "models": models_dicts(answering_models(c.steps))}


def _made_cell(entry: dict[str, Any]) -> str:
    """When and with which Blackbox the file was made, `-` when it does not say."""
    made = entry["made"]
    if made is None:
        return "-"
    return f"{created(made['at'])[:16]}{' · blackbox ' + made['blackbox'] if made.get('blackbox') else ''}"


def _answered_cell(entry: dict[str, Any]) -> str:
    """The models that answered in place of the requested one (`requested→answered`), blank when none did."""
    return ", ".join(f"{p['requested'] or '?'}→{p['answered']}" for p in entry["models"] if p["differs"])


def _eager_entry(path: Path) -> dict[str, Any]:
    try:
        c = load(path)
        broken = chain_break(c)
    except CassetteError as exc:
        return _invalid(path, mask_secrets(str(exc).removeprefix(f"{path}: ")))
    if broken is not None:
        return _invalid(path, f"hash chain broken: {broken.reason}")
    return {"file": path.name, "valid": True, "id": c.id, "steps": len(c.steps), "status": outcome(c).status,
            "createdAt": c.createdAt, "parentId": c.parentId, **_provenance(c)}


def _entry(path: Path) -> dict[str, Any]:
    """The row of one file: read lazily; anything odd (a payload too deep, a broken chain) read whole."""
    try:
        c = load_lazy(path)
        broken = chain_break(c)
    except (CassetteError, msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return _eager_entry(path)
    if broken is not None:
        return _eager_entry(path)
    return {"file": path.name, "valid": True, "id": c.id, "steps": len(c.steps), "status": lazy_outcome(c).status,
            "createdAt": c.createdAt, "parentId": c.parentId, **_provenance(c)}


def _folders_below(directory: Path) -> list[Path]:
    """The folders just below `directory` that hold a `*.json` file (one level: a hint, not a walk)."""
    return sorted(sub for sub in directory.iterdir() if sub.is_dir() and next(sub.glob("*.json"), None) is not None)


def run_list(directory: Path, json_out: bool) -> int:
    """`blackbox list`: exit 0; 2 when `directory` is not a folder."""
    try:
        if not directory.is_dir():
            what = "is a file, not a folder" if directory.exists() else "no such folder"
            demo = " (`blackbox demo` writes traces/)" if directory == DEFAULT_FOLDER and not directory.exists() else ""
            error_line(f"{shown(str(directory))}: {what}; pass the folder that holds your cassettes{demo}",
                       EXIT_USAGE)
            return EXIT_USAGE
        files = sorted(directory.glob("*.json"))
        below = _folders_below(directory) if not files else []
    except OSError as exc:  # a name too long, a loop of links: the system's own words
        error_line(f"{shown(str(directory))}: {exc.strerror or type(exc).__name__}; check the path", EXIT_USAGE)
        return EXIT_USAGE
    if len(files) > 20 and not json_out and colour(sys.stderr):
        from blackbox.cli.progress import progress

        entries = []
        with progress(f"reading {directory}") as update:
            for n, path in enumerate(files, 1):
                entries.append(_entry(path))
                update(n, len(files))
    else:
        entries = [_entry(path) for path in files]
    valid = sum(1 for e in entries if e["valid"])
    if json_out:
        print_json({"folder": str(directory), "cassettes": entries, "valid": valid,
                    "invalid": len(entries) - valid})
        return 0
    on = colour()
    rows = [(shown(e["file"]), shown(e["id"]), str(e["steps"]), e["status"], created(e["createdAt"]),
             shown(e["parentId"] or ""), shown(_made_cell(e)), shown(_answered_cell(e)))
            for e in entries if e["valid"]]
    answered = any(row[-1] for row in rows)
    lines = []
    if rows:
        header = ("file", "id", "steps", "status", "created", "parent", "made", "answered by")
        lines.append(table(header if answered else header[:-1], rows if answered else [r[:-1] for r in rows], on))
    for e in entries:
        if not e["valid"]:
            lines.append(f"{shown(e['file'])}: {paint('invalid', 'red', on)}: {shown(e['reason'])}")
    lines.append(f"{len(entries)} file(s): {valid} valid, {len(entries) - valid} invalid")
    if below:  # list reads one folder; say where the cassettes are rather than leave "0 file(s)" unexplained
        more = f" and {len(below) - 3} more" if len(below) > 3 else ""
        lines.append(f"no *.json here; these subfolders hold some: {', '.join(shown(str(b)) for b in below[:3])}"
                     f"{more} (blackbox list {shown(str(below[0]))})")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
