"""The app around the screens: the command palette, themes, and the `blackbox tui` command's checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from textual.command import CommandPalette

from blackbox_tui.app import BlackboxApp, load_runs
from blackbox_tui.commands import screen_actions
from blackbox_tui.screens.browse import BrowseScreen
from tests.tui.conftest import CHILD, PARENT, SIZE, make_app, settle
from tests.tui.synthetic import write_synthetic
from tests.waiting import HANG_GUARD, pilot_until

pytestmark = pytest.mark.anyio


def blackbox(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blackbox", *args], capture_output=True, text=True, timeout=HANG_GUARD,
                          stdin=subprocess.DEVNULL)


async def test_palette_lists_every_action_of_the_current_screen() -> None:
    app = make_app(PARENT, CHILD)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        descriptions = {d for d, *_ in screen_actions(app.screen)}
        assert {"Search", "Next match", "Filter", "Next error", "Next result", "Diff", "Fork", "Copy",
                "Write payload to a file", "Open in $EDITOR", "Open in $PAGER", "Quit", "Help"} <= descriptions
        await pilot.press("d")
        await settle(pilot)
        diff_actions = {d for d, *_ in screen_actions(app.screen)}
        assert {"Next diff", "Prev diff", "Hash/semantic", "Both values", "Browse", "Fork", "Find"} <= diff_actions
        actions = list(screen_actions(app.screen))
        assert len({action for _, _, action, _, _ in actions}) == len(actions)  # each action once
        assert all(tooltip for description, _, _, _, tooltip in actions if description in ("Fork", "Browse"))


async def test_help_lists_blackbox_keys_once_without_textual_generic_ones() -> None:
    from textual.widgets import Static

    app = make_app(PARENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        text = str(app.screen.query_one("#help-text", Static).render())
        assert "Search — Find steps whose summary or payload holds a text" in text
        for generic in ("Scroll Up", "Page Up", "Cursor line start", "Delete"):
            assert generic not in text, generic
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        assert len(lines) == len(set(lines))


def palette_highlights(app, description: str) -> bool:
    """The open command palette lists its hits and the one highlighted (what enter runs) is `description`."""
    from textual.command import CommandList

    if not CommandPalette.is_open(app):
        return False
    hits = app.screen.query_one(CommandList)
    found = hits.highlighted
    return found is not None and hits.option_count > 0 and \
        str(hits.get_option_at_index(found).prompt).startswith(description)


async def test_palette_runs_an_action_on_the_screen(large_cassette: Path) -> None:
    app = make_app(large_cassette)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert CommandPalette.is_open(app)
        await pilot.press(*"next error")
        await pilot_until(pilot, lambda: palette_highlights(app, "Next error"),
                          "the palette to list and highlight Next error")  # the search runs in the background
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        assert "error" in screen.run.steps[screen.table.step_index].payload


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_themes(theme: str) -> None:
    app = make_app(PARENT, theme=theme)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == theme
        assert app.current_theme.dark == (theme == "textual-dark")


def test_an_unreadable_file_is_one_line_and_exit_2_before_the_app_starts(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.json"
    truncated.write_text(PARENT.read_text(encoding="utf-8")[:500], encoding="utf-8")
    result = blackbox("tui", str(truncated))
    assert result.returncode == 2  # nothing to show: the question cannot be asked (README, "Exit codes")
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "truncated" in lines[0] and "Traceback" not in result.stderr
    missing = blackbox("tui", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert blackbox("tui").returncode == 2
    assert blackbox("tui", str(PARENT), str(CHILD), str(PARENT)).returncode == 2
    assert blackbox("tui", "--demo", str(PARENT)).returncode == 2
    bad_theme = blackbox("tui", str(PARENT), "--theme", "no-such-theme")
    assert bad_theme.returncode == 2 and "textual-light" in bad_theme.stderr


def test_blackbox_help_does_not_import_textual() -> None:
    code = ("import sys; from blackbox.cli import app; from typer.main import get_command; "
            "get_command(app); assert 'textual' not in sys.modules and 'blackbox_tui' not in sys.modules")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert result.returncode == 0, result.stderr
    assert "blackbox tui --demo" in blackbox("tui", "--help").stdout


def test_synthetic_cassettes_verify(tmp_path: Path) -> None:
    from blackbox.format.cassette import chain_break, load

    assert chain_break(load(write_synthetic(tmp_path / "s.json", 300))) is None


def test_a_run_keeps_payloads_undecoded_and_derives_what_a_full_load_does(tmp_path: Path) -> None:
    import msgspec

    from blackbox.format.cassette import chain_break, load
    from blackbox.format.outcome import outcome
    from blackbox_tui.run import Run, is_error_result, tool_name

    path = write_synthetic(tmp_path / "s.json", 300)
    run, full = Run.open(path), load(path)
    assert all(isinstance(step.payload, msgspec.Raw) for step in run.cassette.steps)
    assert run.decoded() == full and list(run.steps) == full.steps
    assert run.outcome == outcome(full) and run.chain is None is chain_break(full)
    assert run.indices("errors") == [i for i, s in enumerate(full.steps) if is_error_result(s)] != []
    assert run.indices("tool", "lookup") == [i for i, s in enumerate(full.steps) if tool_name(s) == "lookup"]
    assert run.tool_names() == ["search", "lookup", "fetch_page"]


async def test_the_theme_chosen_is_remembered_for_the_next_start() -> None:
    from blackbox_tui.app import BlackboxApp, load_runs
    from blackbox_tui.state import recall_theme

    app = BlackboxApp(load_runs([PARENT]), remember_theme=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "textual-light"
        await pilot.pause()
    assert recall_theme() == "textual-light"
    again = BlackboxApp(load_runs([PARENT]), remember_theme=True)
    assert again.theme == "textual-light"
    assert BlackboxApp(load_runs([PARENT])).theme != "textual-light"  # tests and snapshots ignore it


def test_tui_on_a_directory_fails_like_verify(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from blackbox.cli import app as cli

    result = CliRunner().invoke(cli, ["tui", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {tmp_path}: is a directory, not a cassette file nor a sweep's "
                                     f"folder (no sweep.json); `blackbox list {tmp_path}` shows the cassettes in it")


class ExitWhileMounting(BlackboxApp):
    """Asks for the exit where the signal handler's call lands when a kill comes as the UI starts: in the middle
    of the mounting (the browse screen, and the diff's, are pushed but not mounted yet)."""

    def on_mount(self) -> None:
        super().on_mount()
        self.exit_when_ready(143)


@pytest.mark.parametrize("diff", [False, True], ids=["browse", "diff"])
async def test_an_exit_asked_while_the_screens_mount_waits_for_the_first_frame(diff: bool) -> None:
    """A SIGTERM to the demo UI as it starts asked for an exit while its screens mounted: taken at once, it removed
    their widgets under their own mount handlers (NoMatches, a traceback, exit status 1, about 1 kill in 8)."""
    app = ExitWhileMounting(load_runs([PARENT, CHILD] if diff else [PARENT]), diff=diff)
    async with app.run_test(size=SIZE) as pilot:  # the app ends by itself, once its first frame is up
        await pilot_until(pilot, lambda: app.return_code is not None, "the exit asked while the app mounted")
    assert app.return_code == 143 and app._exception is None
