"""Regenerate screenshots/*.svg (browse, diff, fork) from the fixtures, as the README shows them.

Run: `python scripts/screenshots.py [--out screenshots]`.  Uses App.run_test and save_screenshot at 120×36.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from blackbox_tui.app import BlackboxApp, load_runs  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
INCIDENT = FIXTURES / "fleet-triage" / "cassettes" / "triage-incident.json"
HYPOTHESIS = FIXTURES / "fleet-triage" / "cassettes" / "triage-hypothesis.json"
SIZE = (120, 36)


async def shoot(out: Path, name: str, paths: list[Path], keys: list[str], *, diff: bool = False,
                theme: str | None = None) -> Path:
    app = BlackboxApp(load_runs(paths), diff=diff, theme=theme)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
        await app.workers.wait_for_complete()
        await pilot.pause()
        for widget in app.screen.query("TextArea, Input"):
            widget.cursor_blink = False  # type: ignore[attr-defined]
        await pilot.pause()
        path = Path(app.save_screenshot(filename=f"{name}.svg", path=str(out)))
    return path


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(REPO)  # the fork screen shows paths relative to the working directory
    shots = [
        await shoot(out, "browse", [INCIDENT], ["j"] * 5),
        await shoot(out, "browse-light", [INCIDENT], ["G", "k", "k", "2"], theme="textual-light"),
        await shoot(out, "diff", [INCIDENT, HYPOTHESIS], [], diff=True),
        await shoot(out, "fork", [INCIDENT], ["j"] * 5 + ["f"]),
    ]
    for shot in shots:
        print(shot.relative_to(REPO) if shot.is_relative_to(REPO) else shot)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    asyncio.run(main(parser.parse_args().out.resolve()))
