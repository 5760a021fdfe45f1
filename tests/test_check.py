"""`blackbox check`: the whole loop offline, one row per stage, a verdict, exit 1 on failure."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blackbox import diff, load, verify
from blackbox.cli import app
from blackbox.demo.check import CHILD_FILE, PARENT_FILE, run_check

STAGES = ["record", "verify_parent", "fork", "verify_child", "diff"]


def test_run_check_passes_and_its_cassettes_verify(tmp_path: Path) -> None:
    report = run_check(tmp_path)
    assert [s.name for s in report.stages] == STAGES
    assert report.ok, report.verdict
    assert report.verdict.startswith("PASS")
    parent, child = tmp_path / PARENT_FILE, tmp_path / CHILD_FILE
    assert verify(parent).ok and verify(child).ok
    assert diff(load(parent), load(child)).first_divergence == 3


def test_cli_check_keeps_the_files_with_out_dir(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["check", "--out-dir", str(tmp_path / "kept")])
    assert result.exit_code == 0, result.output
    for stage in STAGES:
        assert stage in result.stdout
    assert result.stdout.count("pass") >= len(STAGES)
    assert "PASS" in result.stdout
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == sorted([PARENT_FILE, CHILD_FILE])


def test_cli_check_without_out_dir_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 0, result.output
    assert list(tmp_path.iterdir()) == []


def test_a_failing_stage_fails_the_check_and_skips_the_rest(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the output folder should be")
    report = run_check(blocker)
    assert [s.status for s in report.stages] == ["FAIL", "skip", "skip", "skip", "skip"]
    assert report.verdict.startswith("FAIL at record")

    result = CliRunner().invoke(app, ["check", "--out-dir", str(blocker / "sub")])
    assert result.exit_code == 1
    assert "FAIL at record" in result.stdout
    assert CliRunner().invoke(app, ["check", "--out-dir", str(blocker)]).exit_code == 2  # a file: wrong usage
