"""The UI on coding agents' imported sessions: a Codex and a Gemini CLI import browsed (the step list, the
conversation), and a Claude Code and a Codex import of one task side by side, compared across agents."""

from __future__ import annotations

import pytest

from blackbox_tui.screens.diff import DiffScreen
from tests.conftest import FIXTURES
from tests.tui.conftest import SIZE, make_app, settle
from tests.tui.test_diff import text_of
from tests.tui.test_snapshots import REPO, steady

IMPORT = FIXTURES / "import"
CLAUDE = IMPORT / "claude-code-tax.expected.json"
CODEX = IMPORT / "codex-tax.expected.json"
LONG = IMPORT / "codex-long-compacted.expected.json"
GEMINI = IMPORT / "gemini-tax-rewind.expected.json"


@pytest.fixture(autouse=True)
def repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.mark.anyio
async def test_two_agents_imports_open_compared_across_agents() -> None:
    app = make_app(CLAUDE, CODEX, diff=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        assert screen.comparison is not None and screen.comparison.agents
        assert screen.comparison.first_divergence == 5
        assert screen.table.cursor == 5  # opens at the first divergence: Read vs `cat` in the shell
        assert "compared by what each step did, across agents" in text_of(screen, "#verdict")
        assert screen.comparison.rows[8:] == ("same",) * 11  # both edit tax.py, test again, pass, answer
        await pilot.press("s")  # agents → hash → semantic → agents
        await settle(pilot)
        assert not screen.comparison.agents and not screen.comparison.semantic
        assert screen.comparison.first_divergence == 0
        await pilot.press("s", "s")
        await settle(pilot)
        assert screen.comparison.agents


@pytest.mark.anyio
async def test_two_recordings_keep_hash_and_semantic_only() -> None:
    app = make_app(CODEX, LONG, diff=True)  # the same agent: no cross-agent mode to cycle into
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen) and not screen.comparison.agents
        await pilot.press("s", "s")
        await settle(pilot)
        assert not screen.comparison.agents and not screen.comparison.semantic


def test_browse_a_long_codex_import(snap_compare) -> None:
    app = make_app(LONG)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("G", "k", "k"))


def test_browse_a_gemini_import_conversation(snap_compare) -> None:
    app = make_app(GEMINI)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady("G", "k", "k", "2"))


def test_diff_across_agents(snap_compare) -> None:
    app = make_app(CLAUDE, CODEX, diff=True)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady())
