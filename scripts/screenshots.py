"""Regenerate screenshots/*.svg (browse, search, diff, fork, the what-if flow, the demo, a large file being read, a
sweep) as the README shows them.

Run: `python scripts/screenshots.py [--out screenshots]`.  Uses App.run_test and save_screenshot at 120×36.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from blackbox.demo import demo_pair  # noqa: E402
from blackbox.fork.whatif import ScriptedModel, what_if  # noqa: E402
from blackbox.format.canonical import decode_json  # noqa: E402
from blackbox.format.cassette import load, save  # noqa: E402
from blackbox_tui.app import BlackboxApp, load_runs  # noqa: E402
from blackbox_tui.state import ForkSettings, remember_fork  # noqa: E402
from tests.tui.sweeps import write_sweep_folder  # noqa: E402
from tests.tui.synthetic import write_synthetic  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
INCIDENT = FIXTURES / "fleet-triage" / "cassettes" / "triage-incident.json"
HYPOTHESIS = FIXTURES / "fleet-triage" / "cassettes" / "triage-hypothesis.json"
READING = FIXTURES / "fleet-triage" / "inputs" / "live-reading.json"
REPLY_TEXT = ('[{"type": "final_answer", "text": "VAN-14: coolant at 124 °C. Stop the van and open an urgent work '
              'order today."}]')
SIZE = (120, 36)


async def shoot(out: Path, name: str, paths: list[Path], keys: list[str], *, diff: bool = False,
                theme: str | None = None, demo: bool = False, search: str = "", cwd: Path = REPO) -> Path:
    """`cwd`: where paths are shown from (the scratch copies: their names alone, the same on every run)."""
    os.chdir(cwd)
    app = BlackboxApp(load_runs(paths), diff=diff, theme=theme, demo=demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if search:
            app.screen.search(search)  # type: ignore[attr-defined]
        if keys:
            await pilot.press(*keys)
        await app.workers.wait_for_complete()
        await pilot.pause()
        for widget in app.screen.query("TextArea, Input"):
            widget.cursor_blink = False  # type: ignore[attr-defined]
        await pilot.pause()
        path = Path(app.save_screenshot(filename=f"{name}.svg", path=str(out)))
    return path


async def shoot_reading(out: Path, path: Path) -> Path:
    """A large file part-way through its background reading, `G` pressed: the cursor follows the end."""
    runs = load_runs([path])
    app = BlackboxApp(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("G")
        loading = runs[0].loading
        while loading is not None and runs[0].loading is not None and loading.fraction < 0.4:
            await asyncio.sleep(0.01)
        shot = Path(app.save_screenshot(filename="large.svg", path=str(out)))
    return shot


async def shoot_sweep(out: Path, scratch: Path) -> Path:
    """A sweep's folder (`tests/tui/sweeps`: real what-if forks of the demo) on the sweep screen."""
    write_sweep_folder(scratch / "coolant")
    os.chdir(scratch)
    app = BlackboxApp([], sweep="coolant")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        return Path(app.save_screenshot(filename="sweep.svg", path=str(out)))


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(REPO)  # the fork screen shows paths relative to the working directory
    scratch = Path(tempfile.mkdtemp(prefix="blackbox-shots-"))
    os.environ["XDG_STATE_HOME"] = str(scratch / "state")  # never the user's remembered settings
    parent = scratch / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    remember_fork(parent, ForkSettings(runner="whatif", continuation="inline",
                                       replies=REPLY_TEXT))
    whatif = scratch / "triage-incident-fork-at-5.json"
    fork, _ = what_if(load(parent), 5, decode_json(READING.read_bytes()),
                      ScriptedModel(decode_json(REPLY_TEXT)), trace_id="triage-incident-fork-at-5")
    save(fork, whatif)
    demo_parent, demo_fork = demo_pair(scratch)
    shots = [
        await shoot(out, "browse", [INCIDENT], ["j"] * 5),
        await shoot(out, "browse-light", [INCIDENT], ["G", "k", "k", "2"], theme="textual-light"),
        await shoot(out, "search", [INCIDENT], ["j"] * 4, search="VAN-14"),
        await shoot(out, "diff", [INCIDENT, HYPOTHESIS], [], diff=True),
        await shoot(out, "fork", [INCIDENT], ["j"] * 5 + ["f"]),
        await shoot(out, "whatif-fork", [parent], ["j"] * 5 + ["f"], cwd=scratch),
        await shoot(out, "whatif-diff", [parent, whatif], ["right_square_bracket"], diff=True, cwd=scratch),
        await shoot(out, "demo", [demo_parent, demo_fork], [], diff=True, demo=True),
        await shoot_reading(out, write_synthetic(scratch / "large.json", 100_000, trace_id="large-run")),
        await shoot_sweep(out, scratch),
    ]
    os.chdir(REPO)
    shutil.rmtree(scratch, ignore_errors=True)
    for shot in shots:
        print(shot.relative_to(REPO) if shot.is_relative_to(REPO) else shot)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    asyncio.run(main(parser.parse_args().out.resolve()))
