"""What every importer shares: its error, ISO time → ms, "JSON when it is JSON", and the check before writing.

An import writes only a cassette that passes verify and holds no API key from the environment (docs/format.md,
"Import"):
a transcript is someone else's file, so it is checked like any recording before it becomes a cassette.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from blackbox.errors import BlackboxError
from blackbox.format.canonical import CanonicalError, decode_json
from blackbox.format.cassette import Cassette
from blackbox.format.nesting import MAX_NESTING, TOO_DEEP
from blackbox.format.writing import dumps

__all__ = [
    "DEFAULT_TRACE_ID",
    "INFINITE",
    "NOTHING_WRITTEN",
    "Importer",
    "NestedTooDeep",
    "Progress",
    "Reading",
    "TranscriptError",
    "as_progress",
    "block_text",
    "check_writable",
    "default_trace_id",
    "iso_ms",
    "json_numbers",
    "json_or_text",
    "jsonl_lines",
]

DEFAULT_TRACE_ID = "imported"  # the trace id of an import with no file to name it (`import_spans` of spans in memory)


def default_trace_id(path: str | os.PathLike[str]) -> str:
    """An import's trace id when none is given: the transcript file's name without its extension, as a folder
    import names each cassette, so two sessions never share one (a Claude Code session file is named by its
    session id, a Codex rollout and a Gemini CLI log by their start time and id); `imported` for no name.
    Not hashed: a cassette stays interchangeable whatever its id."""
    return Path(path).stem or DEFAULT_TRACE_ID
NOTHING_WRITTEN = "Nothing was written."

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


class TranscriptError(BlackboxError):
    """A transcript cannot become a cassette; the message names a line or position, never content."""

    #: The exit status of `blackbox import` refusing it: 1, a transcript that cannot make a cassette.
    exit_code = 1


class NestedTooDeep(TranscriptError):
    """JSON nested deeper than any reader of Blackbox goes (`nesting.MAX_NESTING`): refused as input no
    command can read (exit 2), as `diff` refuses a cassette it cannot load."""

    exit_code = 2


SKIPPED_NAME = 40  # a skipped record's type is counted under at most this many characters of its name


class Progress:
    """What an import tells its caller while it reads: bytes read (for a bar) and the records it skipped.

    Record types an importer does not know are skipped, never an error (the agents add new ones each release),
    and counted here by type so the summary can say what was left out."""

    def __init__(self, advance: Callable[[int], None] | None = None) -> None:
        self.advance = advance
        self.skipped: dict[str, int] = {}

    def read(self, n: int) -> None:
        if self.advance is not None:
            self.advance(n)

    def skip(self, kind: Any) -> None:
        name = kind[:SKIPPED_NAME] if isinstance(kind, str) else f"({type(kind).__name__})"
        self.skipped[name] = self.skipped.get(name, 0) + 1


Reading = Progress | Callable[[int], None] | None  # what importers take: a Progress, or a bytes-read callback


def as_progress(progress: Reading) -> Progress | None:
    return progress if isinstance(progress, Progress) or progress is None else Progress(progress)


class Importer:
    """One transcript format: its facts as class data (the registry, the CLI's `--from` and help, the JSON
    schema, the fuzz targets and the docs read them) and `import_file`, a file of it as a cassette.

    (`import` itself is a Python keyword, so the method is `import_file`.)"""

    name: ClassVar[str]  # the `--from` value
    description: ClassVar[str]  # one line for `--help`
    folder: ClassVar[str | None] = None  # where the agent keeps its sessions (`~` expanded), None: no folder
    folder_variable: ClassVar[tuple[str, str] | None] = None  # (VARIABLE, sub): $VARIABLE/sub overrides it
    patterns: ClassVar[tuple[str, ...]] = ("*.jsonl",)  # session files under a folder, at any depth
    provider: ClassVar[str | None] = None  # the API the agent's model answers through: what a what-if continues

    def import_file(self, path: str | os.PathLike[str], trace_id: str | None = None,
                    progress: Progress | None = None) -> Cassette:
        """The cassette of the transcript at `path`, with `trace_id` (default: `default_trace_id(path)`)."""
        raise NotImplementedError

    @classmethod
    def default_folder(cls, env: Mapping[str, str] | None = None) -> Path | None:
        """The agent's session folder on this machine (whether or not it exists); None without one."""
        environ = os.environ if env is None else env
        if cls.folder_variable is not None and environ.get(cls.folder_variable[0], "").strip():
            return Path(environ[cls.folder_variable[0]].strip()).expanduser() / cls.folder_variable[1]
        return Path(cls.folder).expanduser() if cls.folder is not None else None


def iso_ms(value: Any) -> int | None:
    """Milliseconds since the epoch of an ISO-8601 time (as `Date.parse`), or None when it is not one.

    A time without an offset is taken as UTC, so an import never depends on the machine's time zone.
    """
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MS


_NOT_JSON = object()


def json_or_text(text: str) -> Any:
    """The JSON value `text` holds when it parses as JSON (JSON.parse rules), else `text` itself."""
    stripped = text.strip(" \t\r\n")
    if not stripped:
        return text
    try:
        return decode_json(stripped)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return text


def block_text(block: Any) -> str:
    """A content block as text (docs/format.md, "Import"): a text block's text; any other block `[<type> omitted]`."""
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    return f"[{kind if isinstance(kind, str) else 'block'} omitted]"


def jsonl_lines(path: Path, progress: Progress | None) -> Iterator[tuple[int, bytes]]:
    """Each non-blank line of a JSON-lines file with its number (from 1), the bytes read reported as it goes."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if progress is not None:
                progress.read(len(raw))
            if raw.strip():
                yield number, raw


INFINITE = "a number JSON cannot write (one too large such as 1e400, read as Infinity); make it a finite number"


@contextmanager
def json_numbers(where: str = "the transcript") -> Iterator[None]:
    """A number beyond a double (`1e400`) reads as Infinity, which JSON cannot hold: hashing or writing it fails,
    and that is the transcript's fault, said in one line (`where`: the line that holds it, when known)."""
    try:
        yield
    except CanonicalError:
        raise TranscriptError(f"{where}: {INFINITE}") from None


#: A line of `writing.dumps`' layout (two spaces a level) nested as deep as a payload may go: a cassette with
#: none holds no payload deeper than MAX_NESTING, found with one search of its bytes.
_DEEP_LINE = b"\n" + b" " * (2 * (MAX_NESTING + 2))


def _nesting(value: Any) -> int:
    """How deeply lists and objects nest in `value`, without recursion (`[]` is one level)."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, list | dict):
            deepest = max(deepest, depth)
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def check_writable(cassette: Cassette, env: Mapping[str, str] | None = None) -> bytes:
    """The cassette's bytes when it can be written: every payload within the levels every reader reads, no API
    key of the environment (nor a piece of one: the check every writer of a cassette makes, `KeySearch`), and
    verify passes; else TranscriptError."""
    from blackbox.format.secrets import KEY_PIECE, KeySearch
    from blackbox.format.verify import verify

    environ = os.environ if env is None else env
    with json_numbers():
        data = dumps(cassette)
    if _DEEP_LINE in data:  # a value the transcript nests within the limit, nested a few levels more in a step
        for step in cassette.steps:
            if _nesting(step.payload) > MAX_NESTING:
                raise NestedTooDeep(f"the transcript holds a value nested so deep that step {step.index} of the "
                                    f"cassette would be {TOO_DEEP}, deeper than any reader reads; remove it")
    where = KeySearch.of_environment(environ).step_holding(cassette, data)
    if where is not None:
        raise TranscriptError(f"the transcript holds an API key from the environment, or a piece of one ({KEY_PIECE} "
                              "characters or more, also split by spaces, line ends or escapes), which would be in "
                              f"{where} of the cassette; remove it from the transcript first")
    report = verify(cassette, env=environ)
    if not report.ok:
        failure = report.failure
        name = failure.name if failure is not None else "verify"
        where = f" at step {failure.step}" if failure is not None and failure.step is not None else ""
        detail = f": {failure.detail}" if failure is not None and failure.detail else ""
        raise TranscriptError(f"the imported cassette fails verify ({name}{where}{detail}); remove that data "
                              "from the transcript, or report a bug if the transcript is sound")
    return data
