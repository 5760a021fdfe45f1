"""The short fuzz pass CI runs: every target of fuzz/targets.py over its seed corpus (the fixtures and every
input a fuzzer once crashed on, kept in fuzz/regressions/) and a few hundred deterministic mutants of it;
then, where atheris is installed, a short coverage-guided run of each (a fixed seed and a fixed number of
runs, so the pass is reproducible).  The long runs are `python scripts/fuzz.py --minutes N`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fuzz.mutate import TOKENS, run
from fuzz.planted import DEEP_MARKERS, PLANTED_KEY, expanded, holds_key_piece, key_forms, near_misses
from fuzz.targets import IMPORT_TARGETS, TARGETS, seeds
from tests.waiting import HANG_GUARD

ROOT = Path(__file__).resolve().parent.parent

# Inputs per target in the short pass; the CLI target starts a whole command per input.
MUTANTS = {"cli": 60, "claude_code": 250, "chat_json": 250, "codex": 250, "gemini": 250, "recover": 250}
ATHERIS_RUNS = {"cli": 100, "claude_code": 1500, "chat_json": 1500, "codex": 1500, "gemini": 1500, "recover": 1500}

pytestmark = pytest.mark.fuzz


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_seed_corpus_and_mutants(name: str) -> None:
    corpus = seeds(name)
    assert corpus, f"{name} has no seeds"
    tried = run(TARGETS[name], corpus, MUTANTS.get(name, 600), seed=12)
    assert tried >= len(corpus)


@pytest.mark.parametrize("name", sorted(IMPORT_TARGETS))
def test_every_importers_seeds_plant_the_key_and_deep_nesting(name: str) -> None:
    """Issue 30's dimension: each importer's corpus holds every form of the planted key and every depth (its
    target imports with that key in the environment and fails on a cassette holding a piece of it)."""
    corpus = seeds(name)
    for _, form in key_forms():
        escaped = json.dumps(form, ensure_ascii=False)[1:-1].encode()
        assert any(escaped in data or json.dumps(escaped.decode())[1:-1].encode() in data for data in corpus), form
    for marker, nesting in DEEP_MARKERS.items():
        assert any(marker in data for data in corpus) and nesting in expanded(b"x" + marker)
    assert set(DEEP_MARKERS) <= set(TOKENS)


def test_the_oracle_judging_written_cassettes_sees_every_form_and_no_near_miss() -> None:
    for _, form in key_forms():
        assert holds_key_piece(json.dumps({"steps": [{"payload": {"text": form}}]}).encode()), form
    for miss in near_misses():
        assert not holds_key_piece(json.dumps({"steps": [{"payload": {"text": miss}}]}).encode()), miss
    assert holds_key_piece(json.dumps({"k": json.dumps({"inner": PLANTED_KEY[5:30]})}).encode())


REGRESSIONS = ROOT / "fuzz" / "regressions"


def _regressions() -> list[Any]:
    """One case per saved input (a target with none has no case, rather than a case that checks nothing)."""
    return [pytest.param(folder.name, path, id=f"{folder.name}/{path.name}")
            for folder in sorted(REGRESSIONS.iterdir()) if folder.is_dir()
            for path in sorted(folder.iterdir()) if path.is_file()]


def test_every_regression_folder_is_a_target() -> None:
    """A folder named for no target (a typo, a renamed target) would keep its inputs from ever being replayed."""
    folders = sorted(p.name for p in REGRESSIONS.iterdir() if p.is_dir())
    assert folders and set(folders) <= set(TARGETS), sorted(set(folders) - set(TARGETS))
    assert _regressions(), "no saved regression input"


@pytest.mark.parametrize(("name", "path"), _regressions())
def test_regressions_replay(name: str, path: Path) -> None:
    TARGETS[name](path.read_bytes())


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris is not installed here")
@pytest.mark.parametrize("name", sorted(TARGETS))
def test_coverage_guided_short_run(name: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, data in enumerate(seeds(name)):
        (corpus / f"seed-{i}").write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-m", "fuzz.atheris_main", name, str(corpus), "-seed=7",
         f"-runs={ATHERIS_RUNS.get(name, 4000)}", f"-artifact_prefix={tmp_path}/", "-max_len=8192",
         "-timeout=30", "-close_fd_mask=3"],
        cwd=ROOT, capture_output=True, text=True, errors="replace", timeout=HANG_GUARD,
        env={**os.environ, "TMPDIR": str(tmp_path)})  # libFuzzer exits without atexit: scratch stays in tmp_path
    crashes = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-")))
    assert done.returncode == 0 and not crashes, f"{name}: {crashes}\n{(done.stdout + done.stderr)[-4000:]}"
