"""Benchmark of the terminal UI on a generated 10,000-step cassette, against an empty Textual app.

Run: `python bench/bench_tui.py [--steps 10000] [--moves 1000]`.

Measured in-process with Pilot (App.run_test, 120×36, headless):
- first paint: from loading the file to the browse screen mounted and painted (the baseline: an empty
  Textual app's first paint, measured in the same run);
- cursor moves: `--moves` ↓ keys sent at once, as a terminal's key repeat does, until the cursor has moved
  that far and the screen is painted (the baseline: an app whose ↓ only counts); and the cost of the detail
  pane, rendered once the cursor rests;
- diff: opening the diff screen of two such cassettes until the comparison is on screen;
- memory: tracemalloc's peak while loading and painting, as a multiple of the file's size.
Goals: first paint under 1 s, under 2 ms per cursor move, memory under 3× the file.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from typing import ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Static

from blackbox_tui.app import BlackboxApp, load_runs
from tests.tui.synthetic import write_synthetic

SIZE = (120, 36)


class Empty(App[None]):
    """The baseline: an app whose ↓ only counts."""

    BINDINGS: ClassVar = [("down", "count", "Count")]

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Static("baseline")

    def action_count(self) -> None:
        self.count += 1


async def first_paint_empty() -> float:
    start = time.perf_counter()
    async with Empty().run_test(size=SIZE) as pilot:
        await pilot.pause()
        return time.perf_counter() - start


async def first_paint_browse(path: Path) -> float:
    start = time.perf_counter()
    app = BlackboxApp(load_runs([path]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        return time.perf_counter() - start


def moved(app: App[None]) -> int:
    return app.screen.table.cursor if isinstance(app, BlackboxApp) else app.count  # type: ignore[attr-defined]


async def moves(app: App[None], count: int) -> float:
    """Send `count` ↓ keys the way a terminal's key repeat does (no waiting in between), until all are done."""
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        driver = app._driver
        assert driver is not None
        start = time.perf_counter()
        for _ in range(count):
            driver.send_message(events.Key("down", None))
        while moved(app) < count:
            await asyncio.sleep(0)
        await pilot.pause()  # and the screen is painted
        return time.perf_counter() - start


async def detail_render(path: Path, count: int) -> float:
    """Rendering the detail pane of a step where the cursor rests (after each move under key repeat)."""
    app = BlackboxApp(load_runs([path]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        start = time.perf_counter()
        for _ in range(count):
            await pilot.pause()
        idle = time.perf_counter() - start
        start = time.perf_counter()
        for index in range(count):
            screen.detail.show(screen.run.steps[index])
            await pilot.pause()
        return max(0.0, time.perf_counter() - start - idle) / count


async def open_diff(a: Path, b: Path) -> float:
    app = BlackboxApp(load_runs([a, b]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        start = time.perf_counter()
        app.open_diff(app.runs[0], app.runs[1])
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.comparison is not None
        return time.perf_counter() - start


async def peak_memory(path: Path) -> int:
    tracemalloc.start()
    app = BlackboxApp(load_runs([path]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def best(values: list[float]) -> float:
    return min(values)


async def main(steps: int, count: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        a = write_synthetic(Path(tmp) / "a.json", steps, trace_id="bench")
        b = write_synthetic(Path(tmp) / "b.json", steps, trace_id="bench", change_at=steps // 2 + 1)
        size = a.stat().st_size
        print(f"cassette: {steps:,} steps, {size / 1e6:.1f} MB; terminal {SIZE[0]}×{SIZE[1]}; best of {repeat}")

        base = best([await first_paint_empty() for _ in range(repeat)])
        paint = best([await first_paint_browse(a) for _ in range(repeat)])
        print(f"first paint     browse {paint * 1000:7.1f} ms   empty app {base * 1000:7.1f} ms   "
              f"ratio {paint / base:5.2f}   (goal < 1000 ms)")

        base_moves = best([await moves(Empty(), count) for _ in range(repeat)])
        browse_moves = best([await moves(BlackboxApp(load_runs([a])), count) for _ in range(repeat)])
        per, per_base = browse_moves / count * 1000, base_moves / count * 1000
        print(f"cursor move     browse {per:7.3f} ms   empty app {per_base:7.3f} ms   ratio {per / per_base:5.2f}   "
              f"({count:,} ↓ keys as key repeat sends them; goal < 2 ms)")
        detail = best([await detail_render(a, 100) for _ in range(repeat)])
        print(f"detail pane     {detail * 1000:7.3f} ms per step rendered when the cursor rests "
              f"(JSON of a few KB, highlighted and laid out; Pilot's own pause subtracted)")

        diff = best([await open_diff(a, b) for _ in range(repeat)])
        print(f"open diff       {diff * 1000:7.1f} ms for two {steps:,}-step cassettes   "
              f"ratio to the empty app's first paint {diff / base:5.2f}")

        peak = await peak_memory(a)
        print(f"memory          peak {peak / 1e6:7.1f} MB while loading and painting   "
              f"{peak / size:4.2f}× the file (goal < 3×)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--moves", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.steps, options.moves, options.repeat))
