"""Screen state that redraws itself: the run header is drawn from a reactive `HeaderState` the browse screen
binds (so a run that grows, or a chain check that ends, shows without anyone asking the header), and the fork
form's `problem` is reactive (so the screen's Run button and problem line follow every keystroke)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Button, Input, RadioButton, RadioSet, Static

from blackbox.live.recorder import journal_path
from blackbox_tui.app import BlackboxApp
from blackbox_tui.follow import Follower
from blackbox_tui.run import Run
from blackbox_tui.screens.fork import ForkScreen
from blackbox_tui.widgets.run_header import HeaderState, RunHeader
from tests.tui.conftest import INCIDENT, SIZE, TRIAGE, make_app, settle
from tests.tui.test_follow import header_of, line, recording
from tests.waiting import pilot_until

pytestmark = pytest.mark.anyio

RECORDED = json.loads(INCIDENT.read_text(encoding="utf-8"))
REPLIES = TRIAGE.parent / "inputs" / "urgent-replies.json"


def header(app: BlackboxApp) -> str:
    return str(app.screen.query_one(RunHeader).render())


async def test_the_header_follows_a_followed_recording_as_it_grows(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    journal = journal_path(out)
    steps = RECORDED["steps"]
    with recording(journal) as end:
        journal.write_bytes(line(header_of(out)) + b"".join(line(s) for s in steps[:3]))
        follower = Follower(journal)
        first = follower.poll()
        cassette = follower.cassette()
        assert cassette is not None
        run = Run(cassette, out)
        run.append(first.steps)
        app = BlackboxApp([run], follow=follower)
        async with app.run_test(size=SIZE) as pilot:
            await pilot_until(pilot, lambda: " 3 steps" in header(app), "the header's first 3 steps")
            assert "outcome incomplete" in header(app)
            with journal.open("ab") as handle:
                handle.write(b"".join(line(s) for s in steps[3:6]))
            await pilot_until(pilot, lambda: " 6 steps" in header(app) and "chain intact" in header(app),
                              "the header's 6 steps, checked")
            out.write_bytes(INCIDENT.read_bytes())  # the recording ends with its cassette written
            journal.unlink()
            end()
            await pilot_until(pilot, lambda: f" {len(steps)} steps" in header(app), "the written cassette's steps")
            await pilot_until(pilot, lambda: "outcome success" in header(app), "the outcome of the whole run")


async def test_the_header_shows_the_chain_check_as_it_ends(tampered: Path) -> None:
    """The check waits while a search runs (`run.searching`): held there, the header says it is checking; let
    go, it says where the chain breaks, with no call to the header."""
    app = make_app(tampered)
    run = app.runs[0]
    run.searching.set()
    async with app.run_test(size=SIZE) as pilot:
        await pilot_until(pilot, lambda: "chain: checking…" in header(app), "the header saying it checks")
        assert app.screen.header.checked is False
        run.searching.clear()
        await pilot_until(pilot, lambda: "chain BROKEN at step 5" in header(app), "the header naming the break")
        assert app.screen.header == HeaderState.of(run) and app.screen.header.broken == 5


async def test_the_screens_state_is_what_the_header_draws(tmp_path: Path) -> None:
    """The run grows (as a followed recording's does) and the screen says so once (`rows_changed`): the header,
    bound to the screen's state, redraws; a state set by hand is drawn as it is."""
    app = make_app(INCIDENT)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        run = screen.run
        assert f" {len(run)} steps" in header(app) and "chain intact" in header(app)
        more = Run.open(INCIDENT).steps.lazy[:2]
        run.append(more)  # the chain must be checked again
        screen.rows_changed()
        await pilot.pause()
        assert f" {len(run)} steps" in header(app) and "chain: checking…" in header(app)
        screen.header = screen.header._replace(progress=250)  # validated: never past all of the steps
        await pilot.pause()
        assert "chain: checking… 100%" in header(app)


async def test_the_fork_forms_validity_follows_what_is_typed(incident_copy: Path) -> None:
    app = make_app(incident_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*["j"] * 5, "f")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ForkScreen)
        form = screen.form
        seen: list[str | None] = []

        def saw(problem: str | None) -> None:
            seen.append(problem)

        screen.watch(form, "problem", saw, init=False)
        screen.query_one("#runner", RadioSet).query_one("#agent", RadioButton).value = True
        screen.query_one("#script-path", Input).value = str(REPLIES)
        await pilot.pause()
        assert form.problem is not None and "agent command" in form.problem
        assert screen.problem == form.problem and screen.query_one("#run", Button).disabled
        screen.query_one("#command", Input).focus()
        await pilot.press(*"python agent.py")
        await pilot.pause()
        assert form.problem is None and screen.problem is None  # typed: valid, with no call to check it
        assert not screen.query_one("#run", Button).disabled
        assert str(screen.query_one("#fork-problem", Static).render()) == ""
        assert "give the agent command, e.g. python agent.py (or let Blackbox continue)" in seen and seen[-1] is None
        await pilot.press(*["backspace"] * len("python agent.py"))
        await pilot.pause()
        assert form.problem is not None and screen.query_one("#run", Button).disabled
        assert "agent command" in str(screen.query_one("#fork-problem", Static).render())
        screen.query_one("#out", Input).value = str(incident_copy)  # the output path is the screen's part
        screen.query_one("#command", Input).value = "python agent.py"
        await pilot.pause()
        assert form.problem is None and screen.problem is not None and "another file" in screen.problem
        assert screen.query_one("#run", Button).disabled
