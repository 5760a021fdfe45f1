"""Every name the README shows resolves where it says: the package's functions and types (`blackbox.load`,
`blackbox.verify`, …), the module paths it names (`blackbox.plugin.network.guard_from_environment`), and the
methods its pytest examples call on the `blackbox` fixture (`BlackboxFixture`, the default cassette's session API)."""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.plugin.plugin import BlackboxFixture

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
SHOWN = sorted(set(re.findall(r"(?<![\w.])blackbox\.([A-Za-z_][\w.]*[A-Za-z_\d])", README)))


def _resolve(dotted: str) -> Any:
    """`dotted` below the package: an attribute, or a submodule imported as a user's `import` would."""
    value: Any = blackbox
    for part in dotted.split("."):
        if isinstance(value, types.ModuleType) and not hasattr(value, part):
            value = importlib.import_module(f"{value.__name__}.{part}")
        else:
            value = getattr(value, part)
    return value


def test_the_readme_shows_the_names_this_test_checks() -> None:
    assert {"load", "verify", "diff", "outcome", "session", "plugin.network.guard_from_environment",
            "http_client", "assert_outcome"} <= set(SHOWN)


@pytest.mark.parametrize("dotted", SHOWN)
def test_every_name_the_readme_shows_resolves(dotted: str) -> None:
    try:
        value = _resolve(dotted)
    except (AttributeError, ModuleNotFoundError):
        value = getattr(BlackboxFixture, dotted)  # the pytest examples' `blackbox` is the plugin's fixture
    assert value is not None


@pytest.mark.parametrize("name", blackbox.__all__)
def test_every_public_name_loads_and_the_functions_stay_functions(name: str) -> None:
    value = getattr(blackbox, name)
    assert not isinstance(value, types.ModuleType), f"blackbox.{name} is a module, not the public {name}"
    if name in ("verify", "diff", "outcome", "session", "load", "save"):
        module = importlib.import_module(value.__module__)  # importing its module leaves the function bound
        assert callable(getattr(blackbox, name)) and module is not blackbox


def test_the_version_is_written_once() -> None:
    """pyproject reads it from the package; nothing else in the code spells it."""
    import importlib.metadata
    import tomllib

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "blackbox.__version__"}
    assert importlib.metadata.version("blackbox-agent") == blackbox.__version__
    spelled = [str(p.relative_to(root)) for folder in ("blackbox", "tui") for p in (root / folder).rglob("*.py")
               if f'"{blackbox.__version__}"' in p.read_text(encoding="utf-8")]
    assert spelled == ["blackbox/__init__.py"], spelled


def test_the_wheel_holds_every_module_and_data_file(tmp_path: Path) -> None:
    """`pip install .` gives every module of blackbox/ and tui/ (a package missing from pyproject's list once
    made the installed `blackbox check` fail with ModuleNotFoundError), and the data files they read."""
    import shutil
    import subprocess
    import sys
    import zipfile

    root = Path(__file__).resolve().parent.parent
    source = tmp_path / "source"  # a copy without build/ (a stale build folder would fill in what is missing)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("blackbox", "tui"):
        shutil.copytree(root / name, source / name, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                            str(source)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("blackbox_agent-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {str(p.relative_to(root)).replace("tui/", "blackbox_tui/", 1)
              for folder in ("blackbox", "tui") for p in (root / folder).rglob("*")
              if p.suffix in (".py", ".json", ".tcss") and "__pycache__" not in p.parts}
    assert sorted(wanted - names) == []
