"""`blackbox <command> --help` is printed without typer (`cli.helpview` from `cli.helptext`): the same bytes as
typer's own help, at any width, with colour or without, and the data is what the typer application gives now."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blackbox.cli import helptext, helpview
from blackbox.cli.fast import COMMANDS

NAMES = [name for _, rows in COMMANDS for name, _ in rows]
TYPER = "import sys\nfrom blackbox.cli import _typer_main\n_typer_main(sys.argv[1:])\n"


def _env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("NO_COLOR", "CI", "FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS", "COLUMNS", "TERMINAL_WIDTH")}
    return {**env, **extra}


def _both(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    light = subprocess.run([sys.executable, "-m", "blackbox", *args], capture_output=True, env=env, timeout=600)
    typed = subprocess.run([sys.executable, "-c", TYPER, *args], capture_output=True, env=env, timeout=600)
    return light, typed


def test_the_help_data_is_what_the_typer_application_gives_now() -> None:
    """Change a command's help or options and this fails until `python -m blackbox.cli.helpview >
    blackbox/cli/helptext.py` is run again."""
    assert Path(helptext.__file__).read_text(encoding="utf-8") == helpview.generate()
    assert list(helptext.HELP) == NAMES


ENVS = [{"NO_COLOR": "1", "TERMINAL_WIDTH": "60"}, {"NO_COLOR": "1", "COLUMNS": "120"},
        {"FORCE_COLOR": "1", "TERMINAL_WIDTH": "100"}]


@pytest.mark.parametrize("command", NAMES)
@pytest.mark.parametrize("env", ENVS, ids=["plain-60", "plain-120", "colour"])
def test_a_commands_help_is_typers_byte_for_byte(command: str, env: dict[str, str]) -> None:
    light, typed = _both([command, "--help" if command != "tui" else "-h"], _env(**env))
    assert light.returncode == typed.returncode == 0
    assert light.stdout == typed.stdout and light.stderr == typed.stderr == b""
    assert b"Usage: " in light.stdout and (b"\x1b[" in light.stdout) == ("FORCE_COLOR" in env)


def test_a_commands_help_imports_neither_typer_nor_click_nor_the_command() -> None:
    code = ("import sys\nfrom blackbox.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(repr(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, "record", "--help"], capture_output=True, text=True,
                          timeout=600, env=_env(NO_COLOR="1"))
    modules = eval(done.stderr.strip().splitlines()[-1])
    assert "Usage: blackbox record" in done.stdout
    loaded = [m for m in modules if m.split(".")[0] in ("typer", "click", "pydantic", "markdown_it")
              or m in ("blackbox.cli.run", "blackbox.cli._app", "blackbox.live.session")]
    assert loaded == [], loaded


def test_help_with_other_arguments_still_goes_to_typer() -> None:
    """Only `blackbox CMD --help` (or `-h`) is answered from the data; `CMD ARG --help` and an unknown command
    are typer's, as before."""
    for args in (["verify", "x.json", "--help"], ["nosuch", "--help"]):
        light, typed = _both(args, _env(NO_COLOR="1"))
        assert (light.returncode, light.stdout, light.stderr) == (typed.returncode, typed.stdout, typed.stderr)
