"""Benchmark of the terminal UI on a generated 10,000-step cassette, against an empty Textual app.

Run: `python bench/bench_tui.py [--steps 10000] [--moves 1000] [--before DIR]`; `--steps 100000` for a huge
file.  `--before DIR` (a checkout of an earlier commit) runs each round twice, each in a fresh process: this
checkout's UI, then DIR's, on the same files; both sets of figures printed.

Measured in-process with Pilot (App.run_test, 120×36, headless):
- first paint: from loading the file to the first frame of the browse screen handed to the terminal (the
  baseline: an empty Textual app's, measured in the same run); and to the app's first idle moment;
- reading: a large file opens with its first steps and is read (then its chain checked) in the background:
  the time until all steps are there and until the chain is checked; ↓ keys and `G` sent during the reading,
  and a search started during it (to the first match and to its end);
- cursor moves: `--moves` ↓ keys sent at once, as a terminal's key repeat does, until the cursor has moved
  that far and the screen is painted (the baseline: an app whose ↓ only counts); and the cost of the detail
  pane, rendered once the cursor rests;
- diff: opening the diff screen of two such cassettes until the comparison is on screen;
- memory: tracemalloc's peak while loading and painting, as a multiple of the file's size; and the peak
  resident memory (VmHWM) of a child process that opens the file, reads it and checks its chain.
Goals: first paint under 1 s, under 2 ms per cursor move, memory under 3× the file (resident: under 1× for a
file read progressively).
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _code_from(root: Path) -> None:
    """Import blackbox and the UI from `root` (`--before`: an older checkout) rather than this checkout: its
    folder first on the path, and its `tui/` as `blackbox_tui` through a link (the editable install maps that
    name to this checkout's tui/ only when nothing on the path has it)."""
    if root != ROOT:
        link = Path(tempfile.mkdtemp(prefix="bench-tui-")) / "blackbox_tui"
        link.symlink_to(root / "tui")
        atexit.register(shutil.rmtree, link.parent, True)
        sys.path.insert(0, str(link.parent))
    sys.path.insert(0, str(root))


_code_from(Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv else ROOT)

import json  # noqa: E402
import os  # noqa: E402
from typing import ClassVar  # noqa: E402

from textual import events  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.widgets import Static  # noqa: E402

from blackbox_tui.app import BlackboxApp, load_runs  # noqa: E402
from blackbox_tui.run import PROGRESSIVE_FROM  # noqa: E402
from blackbox_tui.screens.browse import BrowseScreen  # noqa: E402

SIZE = (120, 36)


def searching(screen: BrowseScreen) -> bool:
    """Whether the screen's search is still running (before issue 24 the attribute was private)."""
    return bool(getattr(screen, "searching", getattr(screen, "_searching", False)))


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


def watch_frames(app: App[None]) -> list[float]:
    """The times the browse screen's frames are handed to the terminal (headless: where they would be)."""
    frames: list[float] = []
    display = app._display

    def timed(screen: object, renderable: object) -> None:
        if renderable is not None and isinstance(screen, BrowseScreen):
            frames.append(time.perf_counter())
        display(screen, renderable)  # type: ignore[arg-type]

    app._display = timed  # type: ignore[method-assign]
    return frames


async def first_paint_browse(path: Path) -> tuple[float, float]:
    """To the first frame, and to the first idle moment."""
    start = time.perf_counter()
    app = BlackboxApp(load_runs([path]))
    frames = watch_frames(app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        return frames[0] - start, time.perf_counter() - start


async def until(test: object, step: float = 0.002) -> float:
    while not test():  # type: ignore[operator]
        await asyncio.sleep(step)
    return time.perf_counter()


async def reading_case(path: Path, case: str, count: int, out: dict[str, float]) -> None:
    """One case of `reading`, in an app of its own."""
    start = time.perf_counter()
    runs = load_runs([path])
    run = runs[0]
    app = BlackboxApp(runs)
    frames = watch_frames(app)
    async with app.run_test(size=SIZE):
        await until(lambda: frames)
        first = frames[0]
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        if case == "read":
            out["loaded"] = await until(run.loaded.is_set) - start
            out["steps"] = len(run)
            out["chain"] = await until(lambda: run.chain_checked, 0.01) - start
        elif case == "moves":  # within the rows already there: the keys must not wait for rows to come
            driver = app._driver
            assert driver is not None
            count = min(count, len(run) - 1)
            begun = time.perf_counter()
            for _ in range(count):
                driver.send_message(events.Key("down", None))
            await until(lambda: screen.table.cursor >= count)
            painted = len(frames)
            await until(lambda: len(frames) > painted)  # the frame that shows it (Pilot's pause would wait
            out["moves"] = (frames[-1] - begun) / count  # for the reading to end: the app is never idle)
            out["moves_count"] = count
            out["moves_while_reading"] = float(not run.loaded.is_set())
        elif case == "G":
            driver = app._driver
            assert driver is not None
            driver.send_message(events.Key("G", "G"))
            await until(lambda: run.loaded.is_set() and screen.table.cursor == len(run) - 1)
            out["G"] = time.perf_counter() - first
        else:
            begun = time.perf_counter()
            screen.search("fetch_page")
            await until(lambda: bool(screen.matches) and screen.table.step_index in screen.matches)
            out["search_first"] = time.perf_counter() - begun
            await until(lambda: not searching(screen), 0.01)
            out["search_all"] = time.perf_counter() - begun
            out["search_matches"] = len(screen.matches)
        await app.workers.wait_for_complete()


async def reading(path: Path, count: int) -> dict[str, float]:
    """A large file: the background reading and chain check, and keys sent while it reads."""
    out: dict[str, float] = {}
    for case in ("read", "moves", "G", "search"):
        await reading_case(path, case, count, out)
    return out


async def search_time(path: Path, needle: str) -> tuple[float, int]:
    """A search over a loaded file, from submitting it to the last match marked."""
    app = BlackboxApp(load_runs([path]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        start = time.perf_counter()
        screen.search(needle)
        await until(lambda: not searching(screen), 0.001)
        return time.perf_counter() - start, len(screen.matches)


def resident_child(path: Path) -> None:
    """In a child process: open the file as the UI does, read it, check its chain, print the peak RSS."""
    async def run_app() -> None:
        runs = load_runs([path])
        app = BlackboxApp(runs)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await until(runs[0].loaded.is_set, 0.01)
            await until(lambda: runs[0].chain_checked, 0.01)
            await pilot.press("G")
            await pilot.pause(0.2)
    asyncio.run(run_app())
    status = Path("/proc/self/status").read_text()
    peak = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    print(int(peak.split()[1]) * 1024)


def resident(path: Path) -> int:
    code = ["--code", sys.argv[sys.argv.index("--code") + 1]] if "--code" in sys.argv else []
    out = subprocess.run([sys.executable, __file__, "--resident-child", str(path), *code], check=True,
                         capture_output=True, text=True).stdout
    return int(out.split()[-1])


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
        await until(lambda: getattr(app.screen, "comparison", None) is not None)  # not the chain check after it
        await pilot.pause()
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


async def measure_all(a: Path, b: Path, small: Path, steps: int, count: int, repeat: int) -> dict[str, float]:
    """Every figure, the best of `repeat` runs each."""
    got: dict[str, float] = {"size": a.stat().st_size}
    got["base"] = best([await first_paint_empty() for _ in range(repeat)])
    paints = [await first_paint_browse(a) for _ in range(repeat)]
    got["paint"], got["idle"] = best([p[0] for p in paints]), best([p[1] for p in paints])
    if got["size"] >= PROGRESSIVE_FROM:
        got |= await reading(a, min(count, 200))
    got["base_moves"] = best([await moves(Empty(), count) for _ in range(repeat)]) / count
    got["browse_moves"] = best([await moves(BlackboxApp(load_runs([a])), count) for _ in range(repeat)]) / count
    got["detail"] = best([await detail_render(a, 100) for _ in range(repeat)])
    searched = [await search_time(a, "fetch_page") for _ in range(repeat)]
    got["search"], got["search_matches"] = best([t for t, _ in searched]), searched[0][1]
    got["diff"] = best([await open_diff(a, b) for _ in range(repeat)])
    got["peak"] = await peak_memory(a)
    got["rss"], got["rss_base"] = resident(a), resident(small)
    return got


def show(steps: int, count: int, repeat: int, got: dict[str, float], before: dict[str, float] | None) -> None:
    """The figures; with `before`, each line followed by the older checkout's (measured in the same run)."""
    for label, figures in (("", got), ("before ", before)):
        if figures is None:
            continue
        size, base, paint, idle = figures["size"], figures["base"], figures["paint"], figures["idle"]
        if label:
            print(f"\n{label.strip()} (the checkout given to --before, in the same run)")
        print(f"first paint     browse {paint * 1000:7.1f} ms   empty app {base * 1000:7.1f} ms   "
              f"ratio {paint / base:5.2f}   (goal < 1000 ms; first idle moment {idle * 1000:.1f} ms)")
        if "loaded" in figures:
            print(f"reading         all {int(figures['steps']):,} steps after {figures['loaded'] * 1000:7.1f} ms, "
                  f"chain checked after {figures['chain'] * 1000:7.1f} ms (both in the background)")
            keys = int(figures["moves_count"])
            print(f"while reading   {figures['moves'] * 1000:7.3f} ms per ↓ key ({keys} keys from the first frame"
                  f"{', all while reading' if figures['moves_while_reading'] else ', read before the last'}); "
                  f"G → last step {figures['G'] * 1000:7.1f} ms after the first frame")
            print(f"search          started at the first frame: first match {figures['search_first'] * 1000:7.1f} "
                  f"ms, all {int(figures['search_matches']):,} {figures['search_all'] * 1000:7.1f} ms")
        per, per_base = figures["browse_moves"] * 1000, figures["base_moves"] * 1000
        print(f"cursor move     browse {per:7.3f} ms   empty app {per_base:7.3f} ms   ratio {per / per_base:5.2f}   "
              f"({count:,} ↓ keys as key repeat sends them; goal < 2 ms)")
        print(f"detail pane     {figures['detail'] * 1000:7.3f} ms per step rendered when the cursor rests "
              f"(JSON of a few KB, highlighted and laid out; Pilot's own pause subtracted)")
        print(f"search          {figures['search'] * 1000:7.1f} ms over {steps:,} steps "
              f"({int(figures['search_matches']):,} matches of \"fetch_page\", from submitting to the last marked)")
        print(f"open diff       {figures['diff'] * 1000:7.1f} ms for two {steps:,}-step cassettes   "
              f"ratio to the empty app's first paint {figures['diff'] / base:5.2f}")
        print(f"memory          peak {figures['peak'] / 1e6:7.1f} MB while loading and painting   "
              f"{figures['peak'] / size:4.2f}× the file (goal < 3×)")
        print(f"resident        peak {figures['rss'] / 1e6:7.1f} MB ({figures['rss'] / size:4.2f}× the file; the app "
              f"on a 100-step file {figures['rss_base'] / 1e6:.1f} MB)"
              f"{'  goal < 1×' if size >= PROGRESSIVE_FROM else ''}")


def child(root: Path, files: list[Path], steps: int, count: int) -> dict[str, float]:
    """One round of every figure in a fresh process importing `root`'s code (`--before` runs)."""
    argv = [sys.executable, __file__, "--code", str(root), "--files", *map(str, files), "--steps", str(steps),
            "--moves", str(count), "--repeat", "1"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    found: dict[str, float] = json.loads(out.splitlines()[-1])
    return found


async def main(steps: int, count: int, repeat: int, result_text: int, before: Path | None) -> None:
    from tests.tui.synthetic import result_near, write_synthetic  # this checkout's generator for both sides

    with tempfile.TemporaryDirectory() as tmp:
        a = write_synthetic(Path(tmp) / "a.json", steps, trace_id="bench", result_text=result_text)
        b = write_synthetic(Path(tmp) / "b.json", steps, trace_id="bench", change_at=result_near(steps // 2),
                            result_text=result_text)
        small = write_synthetic(Path(tmp) / "small.json", 100, trace_id="bench")
        print(f"cassette: {steps:,} steps, {a.stat().st_size / 1e6:.1f} MB; terminal {SIZE[0]}×{SIZE[1]}; "
              f"best of {repeat}; load average {os.getloadavg()[0]:.1f}")
        if before is None:
            show(steps, count, repeat, await measure_all(a, b, small, steps, count, repeat), None)
            return
        rounds: dict[str, list[dict[str, float]]] = {"now": [], "before": []}
        for _ in range(repeat):  # interleaved round by round: a burst of load hits both alike
            rounds["now"].append(child(ROOT, [a, b, small], steps, count))
            rounds["before"].append(child(before.resolve(), [a, b, small], steps, count))
        now, then = ({key: min(r[key] for r in runs) for key in runs[0]} for runs in rounds.values())
        show(steps, count, repeat, now, then)
        print(f"(load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--moves", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--result-text", type=int, default=0,
                        help="characters of text added to each tool result (a larger file, same steps)")
    parser.add_argument("--before", type=Path, help="a checkout of an earlier commit: each round runs this "
                        "checkout's UI and then its, each in a fresh process; both columns printed")
    parser.add_argument("--resident-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)  # read before the imports, above
    parser.add_argument("--files", type=Path, nargs=3, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.resident_child:
        resident_child(options.resident_child)
    elif options.files:
        a, b, small = options.files
        figures = asyncio.run(measure_all(a, b, small, options.steps, options.moves, options.repeat))
        print(json.dumps(figures))
    else:
        asyncio.run(main(options.steps, options.moves, options.repeat, options.result_text, options.before))
