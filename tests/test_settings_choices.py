"""`--match` / `--pace` and the session's `match=` / `pace=` / BLACKBOX_MATCH / BLACKBOX_PACE are checked by one
function (`settings.choose`): the same words from the command line and from a session, any case accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from blackbox.cli import app
from blackbox.errors import UsageError
from blackbox.live.settings import match_mode, pace_mode, resolve_settings

MATCHES = "is not valid; use one of strict, sequence"
PACES = "is not valid; use one of fast, recorded"


@pytest.mark.parametrize(("flag", "value", "words"), [("--match", "fuzzy", MATCHES), ("--pace", "slow", PACES)])
def test_the_command_line_and_a_session_refuse_in_the_same_words(tmp_path: Path, flag: str, value: str,
                                                                  words: str) -> None:
    run = tmp_path / "run.json"
    result = CliRunner().invoke(app, ["replay", str(run), flag, value, "--", "python"])
    assert result.exit_code == 2
    assert f"error: {flag}={value!r} {words}" in result.stderr
    name = flag.removeprefix("--")
    with pytest.raises(UsageError, match=f"^{name}={value!r} {words}$"):
        resolve_settings("replay", cassette="x.json", **{name: value})
    with pytest.raises(UsageError, match=f"^BLACKBOX_{name.upper()}={value!r} {words}$"):
        resolve_settings(env={"BLACKBOX_MODE": "replay", "BLACKBOX_CASSETTE": "x.json",
                              f"BLACKBOX_{name.upper()}": value})


def test_any_case_is_the_same_choice_everywhere() -> None:
    assert (match_mode("SEQUENCE"), pace_mode("Recorded")) == ("sequence", "recorded")
    env = {"BLACKBOX_MODE": "replay", "BLACKBOX_CASSETTE": "x.json", "BLACKBOX_MATCH": "Sequence",
           "BLACKBOX_PACE": "RECORDED"}
    settings = resolve_settings(env=env)
    assert (settings.match, settings.pace) == ("sequence", "recorded")
    with pytest.raises(UsageError, match=r"^pace=3 is not valid"):
        pace_mode(3)
