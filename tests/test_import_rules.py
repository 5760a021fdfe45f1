"""Issue 34: each coding agent's fixture must import to the cassette the format rules give, not to what an
importer once wrote.  scripts/agent_fixtures.py tells each session as a plain story while it writes the agent's
records; `tests/import_rules.expected_cassette` builds the expected cassette from the story by docs/format.md's
import rules.  So the committed `<fixture>.expected.json` must be exactly that (it cannot be refreshed from an
importer's output), and each importer must produce it byte for byte."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from blackbox.format.cassette import chain_break, loads
from blackbox.format.verify import verify
from blackbox.importers.common import check_writable
from blackbox.importers.registry import IMPORTERS
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"claude-code-tax.jsonl": "claude-code", "codex-tax.jsonl": "codex", "codex-long-compacted.jsonl": "codex",
           "gemini-tax-rewind.jsonl": "gemini"}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_fixtures", ROOT / "scripts" / "agent_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIXTURE_SET = {fixture.name: fixture for fixture in _generator().fixtures()}


def test_every_agent_fixture_has_a_story() -> None:
    assert sorted(FIXTURE_SET) == sorted(SOURCES)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_committed_files_are_what_the_story_and_the_rules_give(name: str) -> None:
    fixture = FIXTURE_SET[name]
    assert (FIXTURES / "import" / name).read_bytes() == fixture.transcript(), "run scripts/agent_fixtures.py"
    expected = FIXTURES / "import" / name.replace(".jsonl", ".expected.json")
    assert expected.read_bytes() == fixture.expected(), "run scripts/agent_fixtures.py"


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_importer_gives_the_rules_cassette(name: str) -> None:
    fixture = FIXTURE_SET[name]
    cassette = IMPORTERS[SOURCES[name]].import_file(FIXTURES / "import" / name, fixture.trace_id)
    written = check_writable(cassette, env={})
    expected = fixture.expected()
    if written != expected:  # say where first: the step, its type and what differs
        want, got = loads(expected).steps, cassette.steps
        first = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if
                      (a.type, a.timestamp, a.payload) != (b.type, b.timestamp, b.payload)), min(len(want), len(got)))
        shown = (want[first].type, want[first].timestamp) if first < len(want) else "(none)"
        seen = (got[first].type, got[first].timestamp) if first < len(got) else "(none)"
        pytest.fail(f"{name}: step {first} differs from the rules' cassette: expected {shown}, got {seen}")
    assert verify(cassette, env={}).ok and chain_break(cassette) is None
