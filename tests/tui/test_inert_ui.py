"""A cassette full of escape sequences is shown, never obeyed: no control character reaches the terminal from
any screen (browse, each tab, diff, both values, fork), and what they were is visible as ␛, \\x9b, \\u202e."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox.format.cassette import save
from tests.tui.conftest import SIZE, make_app, settle
from tests.tui.synthetic import escape_cassette

pytestmark = pytest.mark.anyio

RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u202c", "\r")


@pytest.fixture
def escapes(tmp_path: Path) -> Path:
    path = tmp_path / "escapes.json"
    save(escape_cassette(), path)
    return path


def screen_text(app) -> str:
    """Every character the screen would send to the terminal, as the SVG export holds them."""
    import html
    import re

    svg = app.export_screenshot()
    body = svg[svg.index("<g class"):] if "<g class" in svg else svg  # past the style sheet
    return html.unescape(re.sub(r"<[^>]+>", "", body)).replace("\xa0", " ")


def assert_inert(app) -> str:
    shown = screen_text(app)
    for raw in RAW:
        assert raw not in shown, f"{raw!r} reached the terminal"
    return shown


async def test_every_screen_shows_escapes_as_text(escapes: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_bytes(escapes.read_bytes().replace(b"RED", b"BLUE"))
    app = make_app(escapes, other)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = assert_inert(app)
        assert "esc␛]0;id-title␇" in shown  # the header's id
        assert "Tool called: grep␛[2J" in shown  # the step list
        for keys in (("j", "j", "j"), ("2",), ("g", "2"), ("3",), ("1", "G")):
            await pilot.press(*keys)
            await settle(pilot)
            shown = assert_inert(app)
        await pilot.press("g", "2")
        await settle(pilot)
        shown = assert_inert(app)
        assert "␛[31mRED␛[0m ␛]0;pwned title␇ \\u202eevil\\u202c" in shown  # the conversation tab
        assert "\\x9b2J end␍back" in shown
        await pilot.press("slash", *"pwned", "enter")
        await settle(pilot)
        assert_inert(app)
        await pilot.press("escape", "d")
        await settle(pilot)
        assert_inert(app)
        await pilot.press("v")
        await settle(pilot)
        assert_inert(app)
        await pilot.press("escape", "escape")
        await settle(pilot)
        await pilot.press("g", "j", "j", "j", "f")
        await settle(pilot)
        shown = assert_inert(app)
        assert "Fork esc␛]0;id-title␇ at step 3" in shown
