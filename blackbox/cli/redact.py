"""`blackbox scan` (the leak check) and `blackbox redact` (a policy applied to an existing cassette).

Both take the policy from `--policy`, else BLACKBOX_POLICY, else the project's pyproject.toml
(`blackbox.redaction.active_redactor`); `redact` without one applies what `scan` reports (the built-in
detectors and the known keys).  Neither ever prints a value it found: a hit shows its mark.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from blackbox.cli._app import app
from blackbox.cli.jsonout import print_json
from blackbox.cli.policy import PolicyOption, redactor_for
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, fail
from blackbox.cli.term import JSON_OUTPUT
from blackbox.errors import CassetteError, UsageError
from blackbox.format.inert import inert

if TYPE_CHECKING:
    from blackbox.redaction.apply import Redactor

_PANEL = "Cassettes"


class ScanFormat(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"


@app.command("scan", rich_help_panel=_PANEL)
def scan_command(
    paths: Annotated[list[Path], typer.Argument(help="Cassettes, journals, temporary files, or folders of them.",
                                                show_default=False)],
    policy: PolicyOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON document for machines.")] = False,
    fmt: Annotated[ScanFormat | None, typer.Option("--format", help="text, markdown or json.",
                                                   case_sensitive=False, show_default=False)] = None,
) -> None:
    """Check cassettes, crash journals and leftover temporary files for values in the clear.

    A hit is a known key or any 20-character piece of one (an API key in the environment, the redaction key
    and the policy's key-file), a value a built-in detector finds (e-mail, phone, card, JWT, credentials,
    cloud keys, private keys, URL passwords, IP addresses) or one the policy's rules name. Exit 0 when clean,
    1 listing each hit's file, step and path (the value masked), 2 when a path is missing or the policy is
    wrong.

    [bold]Examples[/]
      blackbox scan tests/cassettes
      blackbox scan run.json --json | jq '.hits[].rule'
      blackbox scan traces --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    from blackbox.live.scan import scan_paths, scanner_for

    JSON_OUTPUT.begin(json_out or fmt == ScanFormat.json)
    if json_out and fmt not in (None, ScanFormat.json):
        fail(f"--json and --format {fmt.value if fmt else ''} disagree; pass one of them", EXIT_USAGE)
    chosen = ScanFormat.json if json_out else (fmt or ScanFormat.text)
    for p in paths:
        if not p.exists():
            fail(f"{inert(str(p))}: no such file or folder", EXIT_USAGE)
    result = scan_paths(paths, scanner_for(redactor_for(policy)))
    hits = result.hits
    if chosen == ScanFormat.json:
        print_json({"ok": not hits, "files": result.files, "bytes": result.bytes,
                    "hits": [h.to_dict() for h in hits]})
    elif chosen == ScanFormat.markdown:
        out = [f"### blackbox scan: {'clean' if not hits else f'{len(hits)} value(s) in the clear'}", "",
               f"{result.files} file(s) scanned."]
        if hits:
            out += ["", "| file | step | line | path | rule | masked |", "|---|---|---|---|---|---|"]
            for h in hits:
                cells = [f"`{inert(h.file)}`", "" if h.step is None else str(h.step),
                         "" if h.line is None else str(h.line), f"`{inert(h.path)}`", h.rule, f"`{inert(h.masked)}`"]
                out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        sys.stdout.write("\n".join(out) + "\n")
    else:
        for h in hits:
            where = f"step {h.step}" if h.step is not None else f"line {h.line}"
            sys.stdout.write(f"{inert(h.file)}: {h.kind} {where}, {inert(h.path)}: {h.rule}: {inert(h.masked)}\n")
        sys.stdout.write(f"{result.files} file(s) scanned: "
                         + ("clean\n" if not hits else f"{len(hits)} value(s) in the clear; redact them "
                            "(blackbox redact F --out G) or re-record under the policy\n"))
    raise typer.Exit(EXIT_FAILURE if hits else 0)


@app.command("redact", rich_help_panel=_PANEL)
def redact_command(
    cassette: Annotated[Path, typer.Argument(help="The cassette to redact.", show_default=False)],
    out: Annotated[Path, typer.Option("--out", help="The redacted cassette to write (a new file).",
                                      show_default=False)],
    policy: PolicyOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON document for machines.")] = False,
) -> None:
    """Apply the redaction policy to an existing cassette and re-chain it into a new one.

    Without a policy, the built-in detectors and the known keys (what scan reports) are applied, and a line
    on stderr says so. The new cassette links to what it was rewritten from (`redaction.rewrittenFrom`: id,
    final hash, steps), so verify shows it. Exit 0 when written, 1 when it would not verify, 2 on a usage error.

    [bold]Examples[/]
      blackbox redact run.json --out run.shared.json
      blackbox redact run.json --out run.shared.json --policy redact.toml
    """
    from blackbox.fork.plan import same_file
    from blackbox.format.cassette import chain_break, load
    from blackbox.format.marks import count_marks
    from blackbox.format.secrets import KeySearch
    from blackbox.format.verify import verify
    from blackbox.format.writing import atomic_write, dumps
    from blackbox.redaction import redact_cassette

    JSON_OUTPUT.begin(json_out)
    redactor = redactor_for(policy)
    if not cassette.is_file():
        fail(f"{inert(str(cassette))}: no such file", EXIT_USAGE)
    if redactor is None:
        redactor = _builtin()
    if out.exists() and same_file(out, cassette):
        fail("--out must differ from the cassette: the original is kept, the link points to it", EXIT_USAGE)
    try:
        original = load(cassette)
    except CassetteError as exc:
        fail(f"{exc}; nothing was written", EXIT_USAGE)
    broken = chain_break(original)
    if broken is not None:  # re-chaining would make a changed file verify again, under a link to a false hash
        fail(f"{inert(str(cassette))}: its hash chain does not hold at step {broken.index} ({broken.reason}): it "
             "changed after it was recorded; redact the original recording (or re-record it); nothing was written",
             EXIT_USAGE)
    rewritten = redact_cassette(original, redactor, link=True)
    report = verify(rewritten)
    if not report.ok:
        failure = report.failure
        fail(f"the redacted cassette does not verify ({failure.name if failure else '?'}); nothing was written")
    data = dumps(rewritten)
    where = KeySearch.of_environment().step_holding(rewritten, data)  # the key check every writer makes
    if where is not None:
        fail(f"{where} of the redacted cassette still holds an API key from the environment (or a piece of it); "
             "add a rule that masks it to the policy; nothing was written")
    atomic_write(out, data)
    counts = count_marks(s.payload for s in rewritten.steps)
    changed = next((i for i, (a, b) in enumerate(zip(original.steps, rewritten.steps, strict=True))
                    if a.hash != b.hash), None)
    if json_out:
        print_json({"ok": True, "out": str(out), "steps": len(rewritten.steps), "redacted": counts,
                    "firstChangedStep": changed, "finalHash": report.final_hash})
    else:
        summary = ", ".join(f"{rule} {n}" for rule, n in counts.items()) or "nothing"
        first = "unchanged" if changed is None else f"re-chained from step {changed}"
        sys.stdout.write(f"wrote {inert(str(out))}: {len(rewritten.steps)} step(s), {first}; redacted: {summary}\n")


def _builtin() -> Redactor:
    """No policy in force: the built-in detectors and the known keys, said in one line on stderr."""
    from blackbox.live.redaction import builtin_redactor
    from blackbox.redaction.detectors import DETECTORS

    try:
        redactor = builtin_redactor()
    except UsageError as exc:  # BLACKBOX_REDACT_KEY too short
        fail(str(exc), EXIT_USAGE)
    keys = [r.name for r in redactor.policy.rules if r.name not in DETECTORS]
    applied = f"the built-in detectors ({', '.join(DETECTORS)})" + (f" and the known keys ({', '.join(keys)})"
                                                                     if keys else "")
    sys.stderr.write(f"no redaction policy (--policy, BLACKBOX_POLICY or [tool.blackbox.redact] in pyproject.toml): "
                     f"applied {applied}\n")
    return redactor
