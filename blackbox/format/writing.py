"""Writing JSON and files: the cassette's layout (`dumps`), payloads as people read them (`pretty_json`), and
`atomic_write`, the one way Blackbox writes a file (all at once or not at all, only to a regular file or a new
path).

Numbers are printed as JavaScript prints them; lone surrogates, which a cassette may hold, are written as their
JSON escapes, never as raw bytes that are not UTF-8.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from blackbox.errors import CassetteError, WriteError
from blackbox.format.canonical import TOO_DEEP, TOO_DEEP_PAYLOAD, CanonicalError, JSFloat, js_number
from blackbox.format.inert import inert
from blackbox.format.nesting import walk_with_room

if TYPE_CHECKING:
    from blackbox.format.cassette import Cassette

__all__ = ["LONE_SURROGATE", "atomic_write", "dumps", "escape_surrogates", "json_body", "pretty_json", "readable"]


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, JSFloat | float):
        return msgspec.Raw(js_number(obj).encode())
    raise TypeError(f"a {type(obj).__name__} is not a JSON value")


_WRITER = msgspec.json.Encoder(enc_hook=_enc_hook)


def _display_hook(obj: Any) -> Any:
    if isinstance(obj, float):
        try:
            return msgspec.Raw(js_number(obj).encode())
        except CanonicalError:  # a file may hold 1e400: show it as a number that overflows, as the file
            # does (it cannot be hashed anyway); NaN never comes from a file
            return msgspec.Raw(b"null" if obj != obj else b"1e999" if obj > 0 else b"-1e999")
    raise TypeError(f"a {type(obj).__name__} is not a JSON value")


_DISPLAY = msgspec.json.Encoder(enc_hook=_display_hook)

# Lone surrogates: JavaScript's JSON.parse accepts a lone surrogate escape, so a cassette may hold one (in a
# payload, a key, an id).  They are loaded as they are, hashed as JavaScript hashes them (see canonical.py),
# and written and printed as the JSON escape (backslash-u-dxxx): never as raw bytes, which are not UTF-8.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """JSON text with each lone surrogate as its JSON escape (surrogates only occur inside strings)."""
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _quoted(s: str) -> bytes:
    return escape_surrogates(json.dumps(s, ensure_ascii=False)).encode()


def _encode(encoder: msgspec.json.Encoder, value: Any, layout: Callable[[bytes], bytes]) -> bytes:
    """`_encoded`, with room for a value as deep as the readers accept (asked for only when it needs it)."""
    return walk_with_room(lambda: _encoded(encoder, value, layout))


def _encoded(encoder: msgspec.json.Encoder, value: Any, layout: Callable[[bytes], bytes]) -> bytes:
    """`encoder.encode` (then formatted), also for values holding lone surrogates, which msgspec refuses:
    those strings are swapped for unique markers, encoded, and put back as escaped JSON strings."""
    try:
        data = encoder.encode(value)
    except UnicodeEncodeError:
        pass
    else:
        return layout(data)
    nonce = secrets.token_hex(8)
    swapped: list[str] = []

    def swap(s: str) -> str:
        if LONE_SURROGATE.search(s) is None:
            return s
        swapped.append(s)
        return f"\x00{nonce}:{len(swapped) - 1}\x00"

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return swap(v)
        if isinstance(v, dict):
            return {swap(k) if isinstance(k, str) else k: walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        if isinstance(v, msgspec.Struct):
            omit = v.__struct_config__.omit_defaults
            return {f.encode_name: walk(getattr(v, f.name)) for f in msgspec.structs.fields(v)
                    if not (omit and getattr(v, f.name) == f.default)}
        return v

    data = encoder.encode(walk(value))
    data = layout(data)
    marker = re.compile(b'"\\\\u0000' + nonce.encode() + rb':(\d+)\\u0000"')
    return marker.sub(lambda m: _quoted(swapped[int(m.group(1))]), data)


def json_body(value: Any) -> bytes:
    """`value` as compact JSON bytes, keys in their order, numbers as JavaScript writes them: a body sent to an
    SDK (which reads any key order).  Raises `UnicodeEncodeError` for a lone surrogate, `TypeError` for a value
    JSON has no form for: a caller falls back to canonical JSON, which escapes the surrogate."""
    return _WRITER.encode(value)


#: A readable document is at most this many times its compact size (and past `_SMALL` bytes) before it is
#: printed on one line instead: indentation grows with the square of the nesting depth, so a payload nested
#: thousands deep would print 100 MB of spaces (and take seconds to mask and write) for a few KB of values.
_MAX_GROWTH = 16
_SMALL = 1 << 20


def readable(data: bytes, indent: int = 2) -> bytes:
    """Compact JSON `data` indented for people, or on one (spaced) line when indenting would multiply it
    (`_MAX_GROWTH`): the same JSON value either way.  Not for the cassette file, whose layout is fixed."""
    if not indent:
        return data
    indented = walk_with_room(lambda: msgspec.json.format(data, indent=indent))
    if len(indented) > _SMALL and len(indented) > _MAX_GROWTH * len(data):
        return walk_with_room(lambda: msgspec.json.format(data, indent=0))
    return indented


def pretty_json(value: Any, *, indent: int = 2) -> str:
    """A payload as people read it, with JavaScript's numbers as the cassette file shows them; `indent=0` is
    one line, and so is a payload nested so deep that its indentation would dwarf it (`readable`).  Lone
    surrogates show as their JSON escapes."""
    return _encode(_DISPLAY, value, lambda data: readable(data, indent)).decode("utf-8")


def _cassette_layout(data: bytes) -> bytes:
    return msgspec.json.format(data, indent=2)


def dumps(cassette: Cassette) -> bytes:
    """The TypeScript Blackbox's layout: two-space indent, raw UTF-8, no trailing newline (lone surrogates escaped).

    A step loaded with a payload nested too deep to read (`TOO_DEEP_PAYLOAD`) is refused: its payload is
    not here to write."""
    for step in cassette.steps:
        if step.payload is TOO_DEEP_PAYLOAD:
            raise CassetteError(f"step {step.index} payload is {TOO_DEEP}, so it was not read and cannot be "
                                "written; re-record the run")
    return _encode(_WRITER, cassette, _cassette_layout)


def _file_mode(target: Path) -> int:
    """Keep an existing file's mode; a new file gets what open() would give it (0o666 less the umask)."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return _new_file_mode()


_UMASK_LOCK = threading.Lock()


def _new_file_mode() -> int:
    """0o666 less the umask (what open() gives a new file).  The umask can only be read by setting it, so the
    two calls hold a lock: two threads reading it at once could leave it 0 for the process."""
    with _UMASK_LOCK:
        umask = os.umask(0)
        os.umask(umask)
    return 0o666 & ~umask


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def _write_target(path: Path) -> Path:
    """The file a write to `path` replaces: `path`, or the file a symlink there points to.

    A symlink is written through (the link stays, its target gets the new content), as `open(path, "w")`
    would.  Anything there that is not a regular file is refused: replacing `/dev/null`, a FIFO or a folder
    with a cassette would damage something that is not a cassette."""
    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise WriteError(f"cannot write {inert(str(path))}: {exc.strerror or type(exc).__name__}; nothing was written",
                         exc.errno, exc.strerror) from None
    if stat.S_ISREG(mode):
        return target
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise WriteError(f"refusing to write {inert(str(path))}: it is {kind}, not a regular file; Blackbox writes "
                     "only to a regular file or a new path, so choose another output path", errno.EEXIST,
                     f"{kind}, not a regular file")


def _is_new(path: str | os.PathLike[str]) -> bool:
    """Whether nothing is at `path`, not even a dangling symlink (any other failure to look, such as a component
    that is not a folder, is left to `_write_target` to word)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def atomic_write(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Write `data` to `path` all at once or not at all: a temporary file in the same folder, fsync, rename.

    `durable=False` skips the two fsyncs: still all or nothing for any process that reads it or is killed, but
    an OS crash may lose it; for many files that can be made again (a sweep's branches, each an fsync pair
    that cost more than its model call).

    On any failure (full disk, read-only folder, something other than a regular file at the path) a
    `WriteError` says so in one line, no temporary file is left and the old file is unchanged, byte for
    byte.  A symlink is written through to its target (see `_write_target`)."""
    # A new path (most writes: a sweep's branches, a fork, an import) costs one lstat before the write; only
    # an existing one is resolved (a symlink written through) and checked.  Each system call counts when 32
    # threads share the interpreter lock (a sweep): every one is a chance to wait for the lock again.
    if _is_new(path):
        target, existed, mode = Path(path), False, _new_file_mode()
    else:
        target = _write_target(Path(path))
        existed, mode = target.exists(), _file_mode(target)
    tmp: str | None = None
    try:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        except FileNotFoundError:  # the folder is new too
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        unchanged = ", and the existing file is unchanged" if existed else ""
        raise WriteError(f"cannot write {inert(str(path))}: {exc.strerror or type(exc).__name__}; nothing was "
                         f"written{unchanged}", exc.errno, exc.strerror) from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    if not durable:
        return
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
