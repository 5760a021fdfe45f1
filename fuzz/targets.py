"""One fuzz target per reader of untrusted input: bytes in, and either a result or the one error that reader
refuses input with (caught in the target, right where it is expected).  Anything else escaping a target (a
`KeyError`, a `UnicodeEncodeError`, a second reader refusing what the first accepted, a traceback printed by
the CLI) is a crash: the input is a bug.

The same functions serve the coverage-guided fuzzer (atheris, `scripts/fuzz.py`), the short pass in CI
(`tests/test_fuzz.py`) and the property-based tests.  The seed corpus is built from `tests/fixtures`.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

from blackbox.cli import main
from blackbox.errors import CassetteError
from blackbox.format.canonical import CanonicalError, canonical_bytes, decode_json
from blackbox.format.cassette import Cassette, chain_break, loads
from blackbox.format.diff import diff
from blackbox.format.indexing import Indexer, Unusual
from blackbox.format.lazy import loads_lazy
from blackbox.format.outcome import outcome, step_label, summarize_step
from blackbox.format.verify import verify
from blackbox.format.writing import dumps, pretty_json
from blackbox.importers.common import Importer, TranscriptError, check_writable
from blackbox.importers.registry import IMPORTERS
from blackbox.live.recorder import recover
from fuzz.planted import PLANTED_ENV, SENTENCES, expanded, holds_key_piece, planted_seeds

__all__ = ["FIXTURES", "TARGETS", "Crash", "seeds"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
_BASE = FIXTURES / "traces" / "fork-parent.v2.json"


class Crash(AssertionError):
    """The target did something other than succeed or raise one of Blackbox's errors (e.g. printed a
    traceback)."""


_scratch: list[Path] = []  # the folder of the target running now (`_with_scratch`)


def _with_scratch(target: Callable[[bytes], None]) -> Callable[[bytes], None]:
    """Run `target` with a scratch folder of its own, removed when it returns: importing this module, or a
    process that ends without atexit (an xdist worker, libFuzzer), leaves nothing in the temp dir."""
    @functools.wraps(target)
    def run(data: bytes) -> None:
        with tempfile.TemporaryDirectory(prefix="blackbox-fuzz-") as folder:
            _scratch.append(Path(folder))
            try:
                target(data)
            finally:
                _scratch.pop()
    return run


def _file(data: bytes, name: str) -> Path:
    path = _scratch[-1] / name
    path.write_bytes(data)
    return path


def _exercise(cassette: Cassette) -> None:
    """What every printer does with a loaded cassette: summaries, labels, the outcome, its JSON forms."""
    o = outcome(cassette)
    o.describe()
    for step in cassette.steps:
        summarize_step(step)
        step_label(step)
        pretty_json(step.payload)
    with contextlib.suppress(CanonicalError):  # 1e400 overflowed: such a cassette fails verify, none writes it
        dumps(cassette).decode("utf-8")


# ---------------------------------------------------------------------------------------------------------
# targets


def loader_eager(data: bytes) -> None:
    try:
        cassette = loads(data)
    except CassetteError:
        return
    chain_break(cassette)
    _exercise(cassette)


def loader_lazy(data: bytes) -> None:
    try:
        lazy = loads_lazy(data)
    except CassetteError:
        return
    chain_break(lazy)
    cassette = lazy.decoded()
    assert msgspec.structs.asdict(cassette) == msgspec.structs.asdict(loads(data)), "lazy and eager disagree"


@_with_scratch
def indexer_target(data: bytes) -> None:
    """The progressive index (the UI's reader of large files), at a small chunk and window so every edge
    is crossed: it reads a file exactly as `loads_lazy` does, or leaves it to it."""
    path = _file(data, "indexed.json")
    indexer = Indexer(path, chunk=61)
    indexer.window = 7
    try:
        indexer.start()
        steps = [step for batch in indexer.batches() for step in batch.steps]
    except Unusual:
        return
    finally:
        indexer.file.close()
    lazy = loads_lazy(data)  # a CassetteError here: the index read a file the loader refuses
    header = indexer.header
    assert header is not None
    assert (header.id, header.createdAt, header.parentId, header.forkedFromStepId) == (
        lazy.id, lazy.createdAt, lazy.parentId, lazy.forkedFromStepId), "index and loader disagree"
    assert [(s.id, s.index, s.type, s.prevHash, s.hash) for s in steps] == [
        (s.id, s.index, s.type, s.prevHash, s.hash) for s in lazy.steps], "index and loader disagree"


def verify_target(data: bytes) -> None:
    try:
        cassette = loads(data, js_floats=False)
    except CassetteError:
        return
    report = verify(cassette, env={"ANTHROPIC_API_KEY": "sk-ant-fuzz-0123456789abcdefghij"})
    json.dumps(report.to_dict(), ensure_ascii=False)
    if report.ok:
        _exercise(loads(data))


_PARENT: Cassette | None = None


def _parent() -> Cassette:
    global _PARENT
    if _PARENT is None:
        _PARENT = loads(_BASE.read_bytes())
    return _PARENT


def diff_target(data: bytes) -> None:
    try:
        other = loads(data)
    except CassetteError:
        return
    for semantic in (False, True):
        for a, b in ((_parent(), other), (other, _parent())):
            report = diff(a, b, semantic=semantic)
            report.verdict.text.encode("utf-8", "surrogatepass")
            for change in report.changed_fields:
                change.path.encode("utf-8", "surrogatepass")


def canonical_target(data: bytes) -> None:
    try:
        value = decode_json(data)
    except (msgspec.DecodeError, ValueError):
        return
    try:
        text = canonical_bytes(value)
    except CanonicalError:
        return
    again = canonical_bytes(decode_json(text))
    assert again == text, "canonical JSON is not a fixed point"


def _transcript_name(importer: Importer, data: bytes) -> str:
    """The file name an input is imported under: the importer's first pattern, or for Gemini CLI the older
    single-document form (`session-*.json`) when the input is not one JSON object a line (a line starts
    indented, or the file is an array)."""
    patterns = importer.patterns
    if len(patterns) > 1 and (data.lstrip()[:1] == b"[" or any(
            line[:1] in (b" ", b"\t") for line in data.splitlines() if line.strip())):
        return patterns[1].replace("*", "fuzz")
    return patterns[0].replace("*", "fuzz")


def _import_target(importer: Importer) -> Callable[[bytes], None]:
    """An importer over a transcript file, with an API key in its environment (`planted.PLANTED_ENV`): a
    cassette that can be written and holds no piece of the key, or its one-line refusal.  Deep markers in the
    input are expanded first (`planted.expanded`)."""

    @_with_scratch
    def target(data: bytes) -> None:
        path = _file(expanded(data), _transcript_name(importer, data))
        try:
            written = check_writable(importer.import_file(path, "fuzz"), env=PLANTED_ENV)
        except TranscriptError as exc:
            message = str(exc)
            assert "\n" not in message, "a refusal is one line"
            assert not holds_key_piece(json.dumps(message).encode()), "a refusal shows a piece of the key"
            return
        assert not holds_key_piece(written), "a cassette holding a piece of the planted key was written"
    return target


#: One target per importer of the registry, named as `--from` names it (`claude-code` → `claude_code`).
IMPORT_TARGETS = {name.replace("-", "_"): _import_target(importer) for name, importer in IMPORTERS.items()}


@_with_scratch
def recover_target(data: bytes) -> None:
    path = _file(data, "run.json.blackbox-journal")
    try:
        cassette = recover(path)
    except CassetteError:
        return
    verify(cassette, env={})
    _exercise(cassette)


_READERS = ("verify", "inspect", "diff", "list", "assert", "replay")


@contextlib.contextmanager
def _captured() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


@_with_scratch
def cli_target(data: bytes) -> None:
    """The CLI's argument handling: a read-only command (the first byte), fuzzed arguments (NUL-separated,
    up to a double NUL), and the rest as the cassette file that an argument `@` names."""
    if not data:
        return
    command = _READERS[data[0] % len(_READERS)]
    head, _, body = data[1:].partition(b"\0\0")
    cassette = _file(body, "arg.json")
    args = [a.decode("utf-8", "surrogateescape") for a in head.split(b"\0")[:8]]
    # Never a command to run ("--" starts one in replay), never the terminal UI.
    argv = [command, *(str(cassette) if a == "@" else a for a in args if a != "--")]
    with _captured() as (out, err), contextlib.suppress(SystemExit):
        main(argv)
    text = out.getvalue() + err.getvalue()
    if "Traceback" in text:
        raise Crash(text[-2000:])


TARGETS: dict[str, Callable[[bytes], None]] = {
    "loader_eager": loader_eager,
    "loader_lazy": loader_lazy,
    "indexer": indexer_target,
    "verify": verify_target,
    "diff": diff_target,
    "canonical": canonical_target,
    **IMPORT_TARGETS,
    "recover": recover_target,
    "cli": cli_target,
}


# ---------------------------------------------------------------------------------------------------------
# seeds


def _journal_of(path: Path) -> bytes:
    cassette = loads(path.read_bytes(), js_floats=False)
    lines = [json.dumps({"blackboxJournal": 1, "id": cassette.id, "createdAt": cassette.createdAt}).encode()]
    lines += [msgspec.json.encode(step) for step in cassette.steps]
    return b"\n".join(lines) + b"\n"


def _with_token_counts(path: Path) -> bytes:
    """A fixture with token counts on its model outputs (the unhashed step field, docs/format.md "Token usage")."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for n, step in enumerate(document["steps"]):
        if step.get("type") == "model_output":
            step["tokens"] = {"input": 100 + n, "output": n, "cacheRead": 40, "reasoning": 2}
    return json.dumps(document, indent=2, ensure_ascii=False).encode()


#: The fixtures each importer's target starts from (each holds a sentence `planted.SENTENCES` names).
_TRANSCRIPTS = {
    "claude_code": ("import/claude-code-session.jsonl", "import/claude-code-tax.jsonl"),
    "chat_json": ("external/chat-tool-use.foreign.json",),
    "codex": ("import/codex-tax.jsonl", "import/codex-long-compacted.jsonl"),
    "gemini": ("import/gemini-tax-rewind.jsonl", "import/gemini-checkpoint.foreign.json"),
    "otel": ("import/otel-weather.foreign.json",),
}


def seeds(target: str) -> list[bytes]:
    """The seed corpus of a target, from the fixtures (and the regressions found so far)."""
    traces = [*sorted((FIXTURES / "traces").glob("*.json")), FIXTURES / "external/chat-tool-use.converted.v2.json",
              FIXTURES / "import/claude-code-session.expected.json"]
    out: list[bytes]
    if target in ("loader_eager", "loader_lazy", "indexer", "verify", "diff"):
        out = [p.read_bytes() for p in traces] + [_with_token_counts(traces[-1])]
    elif target == "canonical":
        lines = (FIXTURES / "canonical/vectors.jsonl").read_text().splitlines()
        out = [json.loads(line)["input"].encode("utf-8", "surrogatepass") for line in lines[::16]]
        out += [p.read_bytes() for p in traces[:2]]
    elif target in _TRANSCRIPTS:
        out = []
        for name in _TRANSCRIPTS[target]:  # each transcript, then it with the planted key and deep markers
            data = (FIXTURES / name).read_bytes()
            out += [data, *planted_seeds(data, *SENTENCES[name])]
    elif target == "recover":
        out = [_journal_of(p) for p in traces]
    elif target == "cli":
        small = (FIXTURES / "traces/success-final-answer.v2.json").read_bytes()
        out = [bytes([i]) + b"@\0\0" + small for i in range(len(_READERS))]
        out += [bytes([i]) + b"@\0--json\0\0" + small for i in range(len(_READERS))]
        out += [b"\x01@\0--step\x003\0\0" + small, b"\x02@\0@\0--semantic\0\0" + small,
                b"\x04@\0--expect-tools\0a,b\0--expect-status\0x\0\0" + small, b"\x03" + str(FIXTURES).encode()]
    else:
        raise KeyError(target)
    regressions = ROOT / "fuzz" / "regressions" / target
    if regressions.is_dir():
        out += [p.read_bytes() for p in sorted(regressions.iterdir()) if p.is_file()]
    return out


