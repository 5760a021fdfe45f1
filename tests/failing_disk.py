"""A full disk and a read-only folder for the write-failure tests, on every machine (a pytest plugin module).

Where the machine lets a test mount a tmpfs (root with CAP_SYS_ADMIN), the failure is real: a 64 KiB tmpfs
filled to the last byte, or one remounted read-only.  Elsewhere (most CI runners, and as root a `chmod`
stops nothing) the same failure is raised by the lowest calls the write makes, for paths in that folder
only: ENOSPC when a file there is synced (a write to a full disk fails at the latest there), EROFS when a
file there is created or opened for writing, a folder made, a name replaced or removed, or write access
asked.  Either way the test runs: it never skips.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

OLD = b'{"an": "old cassette the user cares about"}'
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _mount(target: Path, options: str) -> bool:
    if os.geteuid() != 0:
        return False
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
                              capture_output=True, check=False)
    except OSError:
        return False
    return done.returncode == 0


def _umount(target: Path) -> None:
    subprocess.run(["umount", str(target)], capture_output=True, check=False)


def _inside(folder: Path) -> Callable[[Any], bool]:
    root = os.path.realpath(folder)

    def inside(path: Any) -> bool:
        if isinstance(path, int):
            return False
        try:
            where = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return where == root or where.startswith(root + os.sep)
    return inside


def _error(code: int, path: Any = None) -> OSError:
    return OSError(code, os.strerror(code), None if path is None else os.fsdecode(path))


def simulate_full_disk(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Every fsync of a file in `folder` fails with ENOSPC (the data never reaches the disk)."""
    inside = _inside(folder)
    real_fsync = os.fsync

    def fsync(fd: Any) -> None:
        number = fd if isinstance(fd, int) else fd.fileno()
        try:
            where = os.readlink(f"/proc/self/fd/{number}")
        except OSError:
            where = ""
        if where and inside(where):
            raise _error(errno.ENOSPC)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def simulate_read_only(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Nothing in `folder` can be created, written, renamed or removed: EROFS, as a read-only mount says."""
    inside = _inside(folder)
    real = {name: getattr(os, name) for name in ("open", "mkdir", "replace", "rename", "unlink", "access")}
    real_open = builtins.open

    def os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & _WRITING and inside(path):
            raise _error(errno.EROFS, path)
        return int(real["open"](path, flags, *args, **kwargs))

    def refuse_first(name: str) -> Callable[..., Any]:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            if inside(path) or (args and name in ("replace", "rename") and inside(args[0])):
                raise _error(errno.EROFS, path)
            return real[name](path, *args, **kwargs)
        return call

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if mode & os.W_OK and inside(path):
            return False
        return bool(real["access"](path, mode, *args, **kwargs))

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(c in mode for c in "wax+") and inside(file):
            raise _error(errno.EROFS, file)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    for name in ("mkdir", "replace", "rename", "unlink"):
        monkeypatch.setattr(os, name, refuse_first(name))
    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(io, "open", open_)


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder holding the old file `out.json` on a disk with no space left."""
    mnt = tmp_path / f"full-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if not _mount(mnt, "size=64k"):
        (mnt / "out.json").write_bytes(OLD)
        simulate_full_disk(monkeypatch, mnt)
        yield mnt
        return
    try:
        (mnt / "out.json").write_bytes(OLD)
        with open(mnt / "filler", "wb", buffering=0) as fh:
            try:
                while True:
                    fh.write(b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        yield mnt
    finally:
        _umount(mnt)


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder holding the old file `out.json`, read-only."""
    mnt = tmp_path / f"ro-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    mounted = _mount(mnt, "size=256k")
    if mounted:
        (mnt / "out.json").write_bytes(OLD)
        mounted = subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True,
                                 check=False).returncode == 0
        if not mounted:
            _umount(mnt)
    if not mounted:
        (mnt / "out.json").write_bytes(OLD)
        simulate_read_only(monkeypatch, mnt)
        yield mnt
        return
    try:
        yield mnt
    finally:
        _umount(mnt)
