"""Start-up: `blackbox --help`, `--version` and simple verify/assert calls run without typer or rich (the light
dispatcher), print what the typer application prints, and the root help lists exactly the app's commands."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

import blackbox
from blackbox.cli import app
from blackbox.cli.fast import COMMANDS, VERSION, root_help
from tests.conftest import FIXTURES
from tests.waiting import HANG_GUARD

TRACES = FIXTURES / "traces"
FRAMEWORK = ("typer", "click", "rich", "msgspec", "blackbox.format.cassette", "blackbox.live.session", "textual")


def _imported_by(args: list[str]) -> tuple[list[str], str]:
    code = ("import sys\nfrom blackbox.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(repr(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=HANG_GUARD,
                          env={"PATH": "", "NO_COLOR": "1"})
    return eval(done.stderr.strip().splitlines()[-1]), done.stdout


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--version"]])
def test_help_and_version_import_no_framework_and_no_core(args: list[str]) -> None:
    modules, out = _imported_by(args)
    loaded = [m for m in modules if m.split(".")[0] in ("typer", "click", "rich", "msgspec", "textual")
              or m in ("blackbox.format.cassette", "blackbox.format.lazy", "blackbox.format.writing",
                       "blackbox.live.session", "blackbox.format.verify")]
    assert loaded == [], loaded
    assert out.startswith("blackbox 0.1.0") if args == ["--version"] else "Cassettes" in out


def test_verify_and_assert_of_a_small_cassette_import_neither_typer_nor_rich() -> None:
    for args in (["verify", str(TRACES / "success-tool-use.v2.json")],
                 ["assert", str(TRACES / "success-tool-use.v2.json"), "--expect-status", "success", "--json"],
                 ["list", str(TRACES)]):
        modules, out = _imported_by(args)
        assert not [m for m in modules if m.split(".")[0] in ("typer", "click", "rich", "textual")], args
        assert "blackbox.live.session" not in modules and ("verified" in out or '"ok": true' in out
                                                      or "valid, 0 invalid" in out)


def test_the_root_help_lists_the_typer_applications_commands_in_order() -> None:
    group = get_command(app)
    ours = [(panel, name, text) for panel, rows in COMMANDS for name, text in rows]
    theirs = []
    for name in group.commands:  # registration order, which the typer help keeps within a panel
        command = group.commands[name]
        first = (command.help or "").strip().splitlines()[0]
        theirs.append((command.rich_help_panel, name, first))  # type: ignore[attr-defined]
    by_panel = sorted(theirs, key=lambda row: [p for p, _ in COMMANDS].index(row[0]))
    assert ours == by_panel
    assert blackbox.__version__ == VERSION
    text = root_help()
    assert all(name in text for _, name, _ in ours) and "Usage: blackbox" in text


CASES = [
    ["verify", TRACES / "fork-child.v2.json"],
    ["verify", TRACES / "fork-child.v2.json", "--json"],
    ["verify", TRACES / "fork-child.v2.json", "--format", "markdown"],
    ["verify", TRACES / "fork-child.v2.json", "--format=json"],
    ["verify", "MISSING"],
    ["verify", "MISSING", "--json"],
    ["verify", "BROKEN", "--json"],
    ["verify", TRACES / "fork-child.v2.json", "--json", "--format", "text"],
    ["verify", TRACES / "fork-child.v2.json", "--format=markdown", "--json"],
    ["assert", TRACES / "success-tool-use.v2.json", "--json", "--format", "TEXT"],
    ["assert", TRACES / "success-tool-use.v2.json", "--expect-status", "success", "--expect-tools", ""],
    ["assert", TRACES / "success-tool-use.v2.json", "--expect-tools=search", "--json"],
    ["assert", TRACES / "error-unknown-tool.v2.json", "--expect-status", "error", "--expect-failure-reason",
     "unknown_tool", "--format", "markdown"],
    ["assert", TRACES / "success-tool-use.v2.json", "--expect-status", "bogus"],
    ["assert", "BROKEN", "--expect-final-answer", "x"],
    ["diff", TRACES / "fork-parent.v2.json", TRACES / "fork-child.v2.json"],
    ["diff", TRACES / "fork-parent.v2.json", TRACES / "fork-child.v2.json", "--json"],
    ["diff", TRACES / "fork-parent.v2.json", TRACES / "success-tool-use.v2.json", "--semantic", "--format",
     "markdown"],
    ["diff", TRACES / "fork-parent.v2.json", "BROKEN"],
    ["diff", TRACES / "fork-parent.v2.json", TRACES / "fork-child.v2.json", "--exit-code"],
    ["diff", TRACES / "fork-parent.v2.json", TRACES / "fork-parent.v2.json", "--exit-code", "--json"],
    ["diff", TRACES / "fork-parent.v2.json", "MISSING", "--json"],
    ["diff", "NOT-UTF8", TRACES / "fork-child.v2.json", "--json"],
    ["inspect", TRACES / "fork-child.v2.json"],
    ["inspect", TRACES / "fork-child.v2.json", "--json"],
    ["inspect", TRACES / "fork-child.v2.json", "--step", "3"],
    ["inspect", TRACES / "fork-child.v2.json", "--step=5", "--json"],
    ["inspect", TRACES / "fork-child.v2.json", "--step", "7"],
    ["inspect", "BROKEN"],
    ["inspect", "MISSING", "--json"],
    ["list", TRACES],
    ["list", FIXTURES / "fleet-triage" / "cassettes", "--json"],
    ["list", "MISSING", "--json"],
    ["list", "BROKEN"],
    ["list", "NESTED"],
    ["list", "ESCAPES"],
    ["list", "ESCAPES", "--json"],
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: " ".join(str(a) for a in c[:1] + c[2:]))
def test_the_light_path_prints_exactly_what_the_typer_path_prints(case: list[str | Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 1}')
    not_utf8 = tmp_path / "not-utf8.json"  # a payload string that is not UTF-8: the loader's precise error
    not_utf8.write_bytes((TRACES / "fork-child.v2.json").read_bytes().replace(b"search", b"se\xffrch", 1))
    (tmp_path / "nested" / "runs").mkdir(parents=True)  # the cassettes one folder down: list says where
    shutil.copy(TRACES / "fork-child.v2.json", tmp_path / "nested" / "runs" / "child.json")
    (tmp_path / "escapes").mkdir()  # a file name that would drive the terminal: shown inert on both paths
    shutil.copy(TRACES / "fork-child.v2.json", tmp_path / "escapes" / "x\x1b[31mred\x1b]0;t\x07.json")
    names = {"BROKEN": broken, "MISSING": tmp_path / "missing.json", "NOT-UTF8": not_utf8,
             "NESTED": tmp_path / "nested", "ESCAPES": tmp_path / "escapes"}
    args = [str(names.get(str(a), a)) for a in case]
    env = {"NO_COLOR": "1", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "PATH": ""}
    light = subprocess.run([sys.executable, "-m", "blackbox", *args], capture_output=True, text=True,
                           timeout=HANG_GUARD, env=env)
    typed = CliRunner().invoke(app, args, env=env)
    assert (light.returncode, light.stdout, light.stderr) == (typed.exit_code, typed.stdout, typed.stderr)
    if "NESTED" in case:
        assert light.stdout.endswith(f"these subfolders hold some: {tmp_path / 'nested' / 'runs'} (blackbox list "
                                     f"{tmp_path / 'nested' / 'runs'})\n"), light.stdout
    if "ESCAPES" in case:
        assert "\x1b" not in light.stdout and "\x07" not in light.stdout and "fixture-fork-parent-fork" in light.stdout
    if ("--json" in args or "--format=json" in args) and light.returncode == 0:
        json.loads(light.stdout)
    if "NOT-UTF8" in case:
        assert light.returncode == 2 and "not UTF-8 text at line" in light.stderr
    if "--json" in args or "--format=json" in args:  # every JSON call prints one document, errors included
        doc = json.loads(light.stdout)
        assert light.returncode != 2 or (doc["ok"], doc["exitCode"]) == (False, 2), doc


def test_the_package_loads_its_names_on_first_use_and_keeps_them_the_functions() -> None:
    code = ("import sys, blackbox\nassert 'blackbox.format.cassette' not in sys.modules\n"
            "import blackbox.format.verify, blackbox.format.diff, blackbox.format.outcome, blackbox.live.session\n"
            "from blackbox.format.verify import VerifyReport\n"
            "assert all(callable(f) and not isinstance(f, type(sys)) for f in "
            "(blackbox.verify, blackbox.diff, blackbox.outcome, blackbox.session))\n"
            "from blackbox import load, verify\nassert verify(load(sys.argv[1])).ok\n"
            "import blackbox.cli, blackbox.cli._app\nassert type(blackbox.cli.app).__name__ == 'Typer'\n"
            "print(sorted(set(blackbox.__all__) - set(dir(blackbox))))\n")
    done = subprocess.run([sys.executable, "-c", code, str(TRACES / "fork-child.v2.json")], capture_output=True,
                          text=True, timeout=HANG_GUARD)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


def test_a_commands_help_builds_only_that_command() -> None:
    """`blackbox verify --help` goes to typer, but imports no other command's module (the recording session,
    the launcher, the demo, the importers: a large part of a subcommand's help time)."""
    modules, out = _imported_by(["verify", "--help"])
    assert "Usage: blackbox verify" in out and "--expect-hash" in out
    others = {"blackbox.cli.run", "blackbox.cli.demo", "blackbox.cli.imports", "blackbox.cli.tui",
              "blackbox.live.session", "blackbox.live.launcher", "blackbox.fork.engine"}
    assert others.isdisjoint(modules), sorted(others & set(modules))


@pytest.mark.parametrize("command", [name for _, rows in COMMANDS for name, _ in rows])
def test_every_commands_help_is_the_full_applications(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli_helpers import run_cli

    code, out, _ = run_cli(capsys, command, "--help")
    full = CliRunner().invoke(app, [command, "--help"], env={"NO_COLOR": "1"}, terminal_width=100)
    assert code == 0 and full.exit_code == 0
    assert out.split() == full.stdout.split()  # the same words (the two may wrap to different widths)
