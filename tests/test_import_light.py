"""Importing blackbox (and its CLI) must not import the terminal UI, the SDKs or an HTTP stack."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import blackbox

HEAVY = ("textual", "anthropic", "openai", "httpx", "httpx2")


def _modules() -> list[str]:
    names = ["blackbox", "blackbox.cli"]
    for info in pkgutil.walk_packages(blackbox.__path__, "blackbox."):
        if not info.name.endswith("__main__"):  # running it would start the command line
            names.append(info.name)
    return names


def test_imports_stay_light() -> None:
    modules = _modules()
    code = (
        "import importlib, sys\n"
        f"names = {modules!r}\n"
        "failed = []\n"
        "for n in names:\n"
        "    try:\n"
        "        importlib.import_module(n)\n"
        "    except ImportError as exc:\n"
        "        failed.append(f'{n}: {exc}')\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
        "print(repr((heavy, failed)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    heavy, failed = eval(out.stdout.strip())
    # A module that cannot be imported would otherwise drop out of the check (and may be the one that is heavy).
    assert failed == [], f"modules that fail to import: {failed}"
    assert heavy == [], f"imported at import time: {heavy}"
    assert "blackbox.format.verify" in modules and "blackbox.cli.cassettes" in modules
