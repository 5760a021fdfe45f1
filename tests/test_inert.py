"""The shared inert-text function: escape sequences are shown, never obeyed."""

from hypothesis import given
from hypothesis import strategies as st

from blackbox.format.inert import inert, inert_lines


def test_escape_sequences_are_visible() -> None:
    assert inert("\x1b[32mgreen\x1b[0m") == "␛[32mgreen␛[0m"
    assert inert("\x1b]0;pwned\x07") == "␛]0;pwned␇"
    assert inert("a\x9b31mb") == "a\\x9b31mb"
    assert inert("\x7f") == "␡"


def test_newlines_kept_only_when_asked() -> None:
    assert inert("a\nb\tc") == "a␊b␉c"
    assert inert_lines("a\nb\tc\r") == "a\nb\tc␍"


def test_bidi_and_lone_surrogates() -> None:
    assert inert("abc\u202edef") == "abc\\u202edef"
    assert inert("x\ud800y") == "x\\ud800y"
    assert inert("é 日本 🙂") == "é 日本 🙂"


@given(st.text())
def test_no_control_character_survives(text: str) -> None:
    shown = inert(text)
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or 0xD800 <= ord(ch) < 0xE000 for ch in shown)
    shown.encode("utf-8")
