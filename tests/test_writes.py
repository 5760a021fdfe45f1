"""Every write goes through one mechanism (`blackbox.format.writing.atomic_write`); these tests break it.

A full disk and a read-only folder (`tests.failing_disk`: real mounts where the machine allows them, else the
same failure raised by the lowest calls the write makes — never skipped), a device, a FIFO and a folder at
the output path: after each failure the old file is byte for byte what it was, no temporary file is
left, and the command says so in one line.  An in-place truncating write would fail these tests.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from blackbox.errors import WriteError
from blackbox.format.cassette import load
from blackbox.format.writing import atomic_write
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES
from tests.failing_disk import OLD

TRACE = FIXTURES / "traces/success-tool-use.v2.json"
CHAT = FIXTURES / "external/chat-tool-use.foreign.json"


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    return lines[0]


# ---------------------------------------------------------------------------------------------------------
# The mechanism


def test_a_write_replaces_the_whole_file(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(OLD * 100)
    atomic_write(out, b"new")
    assert out.read_bytes() == b"new"
    assert _leftovers(tmp_path) == []


def test_enospc_at_fsync_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(OLD)

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(WriteError) as info:
        atomic_write(out, b"x" * 10_000)
    assert out.read_bytes() == OLD
    assert _leftovers(tmp_path) == []
    assert "No space left on device" in str(info.value)
    assert "None" not in str(info.value)
    assert "\n" not in str(info.value)


def test_erofs_at_the_temp_file_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(OLD)

    def read_only_fs(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, "open", read_only_fs)  # mkstemp opens its file with os.open
    with pytest.raises(WriteError, match="Read-only file system"):
        atomic_write(out, b"new")
    monkeypatch.undo()
    assert out.read_bytes() == OLD
    assert _leftovers(tmp_path) == []


def test_a_full_disk_keeps_the_old_file(full_disk: Path) -> None:
    out = full_disk / "out.json"
    with pytest.raises(WriteError, match="No space left on device"):
        atomic_write(out, b"y" * 200_000)
    assert out.read_bytes() == OLD
    assert _leftovers(full_disk) == []


def test_a_read_only_folder_keeps_the_old_file(read_only: Path) -> None:
    out = read_only / "out.json"
    with pytest.raises(WriteError, match="Read-only file system"):
        atomic_write(out, b"new")
    assert out.read_bytes() == OLD
    assert _leftovers(read_only) == []


@pytest.mark.parametrize("kind", ["fifo", "folder", "char device"])
def test_anything_but_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        target = tmp_path / "pipe.json"
        os.mkfifo(target)
        check = stat.S_ISFIFO
    elif kind == "folder":
        target = tmp_path / "dir.json"
        target.mkdir()
        check = stat.S_ISDIR
    else:
        target = Path("/dev/null")
        check = stat.S_ISCHR
    with pytest.raises(WriteError, match="not a regular file"):
        atomic_write(target, b"cassette")
    assert check(os.stat(target).st_mode)
    assert _leftovers(tmp_path) == []


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_bytes(OLD)
    link = tmp_path / "latest.json"
    link.symlink_to(real.name)
    atomic_write(link, b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"new"


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "null.json"
    link.symlink_to("/dev/null")
    with pytest.raises(WriteError, match="character device"):
        atomic_write(link, b"new")
    assert link.is_symlink()
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "new.json"
    link.symlink_to("target.json")
    atomic_write(link, b"new")
    assert (tmp_path / "target.json").read_bytes() == b"new"
    assert link.is_symlink()


def test_the_mode_of_an_existing_file_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(OLD)
    out.chmod(0o600)
    atomic_write(out, b"new")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


# ---------------------------------------------------------------------------------------------------------
# Every writer uses it: import, demo fork, demo, check, recover


def _journal(tmp_path: Path) -> Path:
    """A journal as a killed recording leaves it: a header line and the steps of the demo run."""
    import msgspec

    steps = load(TRACE).steps[:5]
    journal = tmp_path / "run.json.blackbox-journal"
    lines = [b'{"blackboxJournal":1,"id":"run","createdAt":0}']
    lines += [msgspec.json.encode(s) for s in steps]
    journal.write_bytes(b"\n".join(lines) + b"\n")
    return journal


WRITERS = ["import", "demo fork", "recover", "export"]


def _writers(tmp_path: Path) -> dict[str, list[str]]:
    return {
        "import": ["import", "--from", "chat-json", "--in", str(CHAT), "--out", "{out}"],
        "demo fork": ["fork", "--trace", str(TRACE), "--out", "{out}"],
        "recover": ["recover", str(_journal(tmp_path)), "--out", "{out}"],
        "export": ["export", str(TRACE), "--to", "otlp-json", "--out", "{out}"],
    }


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_refuses_a_fifo(tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: str) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    args = [a.replace("{out}", str(fifo)) for a in _writers(tmp_path)[writer]]
    code, _, err = run_cli(capsys, *args)
    assert code == 1
    assert "not a regular file" in one_line(err)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_refuses_dev_null(tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: str) -> None:
    args = [a.replace("{out}", "/dev/null") for a in _writers(tmp_path)[writer]]
    code, _, err = run_cli(capsys, *args)
    assert code == 1
    assert "character device" in one_line(err)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_on_a_full_disk(full_disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     writer: str) -> None:
    out = full_disk / "out.json"
    args = [a.replace("{out}", str(out)) for a in _writers(tmp_path)[writer]]
    code, _, err = run_cli(capsys, *args)
    assert code == 1
    line = one_line(err)
    assert "No space left on device" in line
    assert "(None)" not in line
    assert out.read_bytes() == OLD
    assert _leftovers(full_disk) == []
    if writer == "recover":
        assert (tmp_path / "run.json.blackbox-journal").exists(), "the journal goes only once the cassette is written"


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_in_a_read_only_folder(read_only: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            writer: str) -> None:
    out = read_only / "out.json"
    args = [a.replace("{out}", str(out)) for a in _writers(tmp_path)[writer]]
    code, _, err = run_cli(capsys, *args)
    assert code == 1
    assert "Read-only file system" in one_line(err)
    assert out.read_bytes() == OLD


def test_demo_on_a_full_disk(full_disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "demo", "--out-dir", str(full_disk))
    assert code == 1
    line = one_line(err)
    assert "No space left on device" in line and "(None)" not in line
    assert _leftovers(full_disk) == []


def test_check_in_a_read_only_folder_claims_no_file(read_only: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", "--out-dir", str(read_only))
    assert code == 1
    assert "Read-only file system" in out
    assert "cassettes kept" not in out
    assert not (read_only / "check-parent.json").exists()


def test_check_on_a_full_disk_names_the_reason_plainly(full_disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", "--out-dir", str(full_disk))
    assert code == 1
    assert "No space left on device" in out
    assert "(None)" not in out
    assert "cassettes kept" not in out


def test_check_keeps_what_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", "--out-dir", str(tmp_path / "kept"))
    assert code == 0
    assert "cassettes kept" in out
    assert (tmp_path / "kept/check-parent.json").exists() and (tmp_path / "kept/check-child.json").exists()


# ---------------------------------------------------------------------------------------------------------
# import never overwrites its own source


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "dotdot"])
def test_import_refuses_to_overwrite_its_source(tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    src = tmp_path / "chat.json"
    shutil.copy(CHAT, src)
    before = src.read_bytes()
    if how == "same":
        out = src
    elif how == "symlink":
        out = tmp_path / "link.json"
        out.symlink_to(src.name)
    elif how == "hardlink":
        out = tmp_path / "hard.json"
        os.link(src, out)
    else:
        (tmp_path / "sub").mkdir()
        out = tmp_path / "sub/../chat.json"
    code, _, err = run_cli(capsys, "import", "--from", "chat-json", "--in", str(src), "--out", str(out))
    assert code == 2
    assert "--out must differ from --in" in one_line(err)
    assert src.read_bytes() == before


def test_newlines_in_out_are_printed_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a\nb.json"
    code, stdout, _ = run_cli(capsys, "import", "--from", "chat-json", "--in", str(CHAT), "--out", str(out))
    assert code == 0
    assert out.exists()
    assert "a\nb.json" not in stdout
    assert "a␊b.json" in stdout


@pytest.mark.parametrize("command", ["demo", "check"])
def test_newlines_and_markup_in_out_dir_are_printed_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          command: str) -> None:
    folder = tmp_path / "a\nb [red]x[/]"
    code, stdout, _ = run_cli(capsys, command, "--out-dir", str(folder))
    assert code == 0
    assert "a\nb" not in stdout
    assert "a␊b [red]x[/]" in stdout
