"""End to end in a real terminal: `blackbox tui` inside tmux, driven by send-keys, read with capture-pane."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from blackbox.format.cassette import save
from blackbox_tui.run import PROGRESSIVE_FROM
from blackbox_tui.state import ForkSettings, remember_fork
from tests.tui.conftest import HYPOTHESIS, INCIDENT, TRIAGE
from tests.tui.synthetic import synthetic_cassette
from tests.waiting import HANG_GUARD

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

AGENT = Path(__file__).with_name("triage_agent.py")
REPLIES = TRIAGE.parent / "inputs" / "urgent-replies.json"
READING = TRIAGE.parent / "inputs" / "live-reading.json"


class Terminal:
    """One detached tmux session of 120×36 running a command."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.name = f"bbtui-{uuid.uuid4().hex[:8]}"
        # a tmux server of its own: on the shared one, a session closed by another test (or xdist worker) can
        # take the server down just as this one starts ("server exited unexpectedly")
        self.tmux = ["tmux", "-L", self.name]
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        shell = f"env -u COLUMNS -u LINES {exports} {shlex.join(command)}; echo EXITED $?; sleep 3600"
        subprocess.run([*self.tmux, "new-session", "-d", "-s", self.name, "-c", str(cwd), "-x", "120", "-y", "36",
                        shell], check=True)
        # without a client, some tmux versions keep the default 80×24: pin the size explicitly
        subprocess.run([*self.tmux, "set-option", "-t", self.name, "window-size", "manual"], check=False)
        subprocess.run([*self.tmux, "resize-window", "-t", self.name, "-x", "120", "-y", "36"], check=False)
        self.socket = subprocess.run([*self.tmux, "display-message", "-p", "#{socket_path}"], capture_output=True,
                                     text=True, check=False).stdout.strip()

    def screen(self) -> str:
        return subprocess.run([*self.tmux, "capture-pane", "-t", self.name, "-p"], capture_output=True,
                              text=True, check=False).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        for key in keys:
            subprocess.run([*self.tmux, "send-keys", "-t", self.name, *(["-l"] if literal else []), key], check=True)
            time.sleep(0.08)

    def until(self, check: Callable[[str], bool], what: str) -> str:
        """The screen once `check` holds for one capture of it.  A test waits for everything it then asserts
        of that capture: widgets repaint independently, so the header can show its new state before the status
        line (or the chain check) does.  HANG_GUARD only stops a hung test."""
        deadline = time.monotonic() + HANG_GUARD
        while True:
            shown = self.screen()
            if check(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} never showed; the screen shows:\n{shown}")
            time.sleep(0.2)

    def wait_for(self, *texts: str) -> str:
        """The screen once any one of `texts` is on it."""
        return self.until(lambda shown: any(text in shown for text in texts), f"none of {texts!r}")

    def wait_for_all(self, *texts: str, absent: tuple[str, ...] = ()) -> str:
        """The screen once every one of `texts` is on it at the same time and none of `absent` is."""
        return self.until(lambda shown: all(text in shown for text in texts)
                          and not any(text in shown for text in absent), f"all of {texts!r} without {absent!r}")

    def settled(self, timeout: float = HANG_GUARD, quiet: float = 0.5) -> str:
        """The screen once it stopped changing for `quiet` seconds: the UI has taken every key sent so far
        (under load it can lag the keys by seconds)."""
        deadline = time.monotonic() + timeout
        shown = self.screen()
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = self.screen()
            if now == shown:
                return now
            shown = now
        raise AssertionError(f"the screen kept changing for {timeout:.0f} s; it shows:\n{shown}")

    def close(self) -> None:
        """End the session as closing a terminal does (SIGHUP, the pty gone); the UI must end with it: a UI
        left running with no terminal (it once hung in Textual's output queue) fails the test."""
        pane = subprocess.run([*self.tmux, "display-message", "-p", "-t", self.name, "#{pane_pid}"],
                              capture_output=True, text=True, check=False).stdout.strip()
        below = _descendants(int(pane)) if pane.isdigit() else []
        subprocess.run([*self.tmux, "kill-server"], capture_output=True, check=False)
        if self.socket:  # the server leaves its socket file behind
            Path(self.socket).unlink(missing_ok=True)
        deadline = time.monotonic() + 120  # a guard against a hang only: the UI ends as soon as it can
        left = [pid for pid in below if _alive(pid)]
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = [pid for pid in left if _alive(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert not left, f"processes {left} outlived their closed terminal"


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    todo = [pid]
    while todo:
        children = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True, text=True,
                                  check=False).stdout.split()
        found += [int(c) for c in children]
        todo += [int(c) for c in children]
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[callable]:
    opened: list[Terminal] = []
    # TMPDIR: a UI killed with its tmux session cannot remove its scratch folders; they go with tmp_path
    base = {"TERM": "xterm-256color", "TMPDIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
            "PATH": os.environ["PATH"],
           "HOME": os.environ.get("HOME", str(tmp_path)), "NO_COLOR": ""}

    def start(*args: str, env: dict[str, str] | None = None) -> Terminal:
        term = Terminal([sys.executable, "-m", "blackbox", "tui", *args], {**base, **(env or {})}, tmp_path)
        opened.append(term)
        return term

    yield start
    for term in opened:
        term.close()


def test_browse_then_diff_in_a_real_terminal(terminal) -> None:
    term = terminal(str(INCIDENT))
    term.wait_for_all("└─ Tool result: get_telemetry → ok", "chain intact", "triage-incident", "17 steps")
    term.keys("j", "j", "j", "j", "j")
    term.wait_for_all("step 5 (6 of 17)", '"vehicle_id": "VAN-14"')
    term.keys("d")
    term.wait_for("Compare with which cassette?")
    term.keys(str(HYPOTHESIS), literal=True)
    term.keys("Enter")
    term.wait_for_all("first divergence at step 5", "same status, but the final answer changed", "≠", "◀")
    term.keys("q")
    assert "EXITED 0" in term.wait_for("EXITED")


def test_demo_opens_with_its_fork_beside_it(terminal) -> None:
    term = terminal("--demo")
    # the divergent step is the changed search result (✎: the new value), on both sides, its change shown below
    def divergent_row(shown: str) -> bool:
        return any(line.lstrip().startswith("3 ") and "✎" in line and line.count("Tool result: search → ok") == 2
                   for line in shown.splitlines())

    term.until(lambda shown: divergent_row(shown) and all(text in shown for text in (
        "first divergence at step 3", "example-run-001  ↔  example-run-001-fork", "step 3: ", "changed field",
        "result.results[0]")), "the demo's diff with its divergent row")
    term.keys("Escape")
    term.wait_for_all("15 steps", "chain intact")


def test_demo_fork_with_an_edited_value_finishes(terminal, tmp_path: Path) -> None:
    term = terminal("--demo")
    term.wait_for("first divergence at step 3")
    term.keys("Escape")
    term.wait_for("chain intact")
    term.keys("j", "j", "j", "f")
    term.wait_for("✓ valid JSON")
    replace_value(term, '{"results": [], "available": false, "message": "Sold out."}', shows='"Sold out."')
    term.keys("C-r")
    # the demo's model answers from the new result: no options, so it cannot book
    def b_outcome(shown: str) -> bool:
        return any(line.startswith(" B ") and "no options are available" in line and "Sold out." in line
                   for line in shown.splitlines())

    shown = term.until(lambda shown: "error:" in shown or (
        "first divergence at step 3" in shown and "example-run-001  ↔  example-run-001-fork" in shown
        and b_outcome(shown)), "the fork's diff (or an error)")
    assert "error:" not in shown, shown
    assert not (tmp_path / "traces").exists()


def _fork_screen(term: Terminal) -> None:
    term.wait_for("chain intact")
    term.keys("j", "j", "j", "j", "j", "f")
    term.wait_for_all("Fork triage-incident at step 5", "✓ valid JSON")
    replace_value(term, json.dumps(json.loads(READING.read_text(encoding="utf-8")), separators=(",", ":")),
                  shows='"value":"124"')


def replace_value(term: Terminal, text: str, shows: str) -> None:
    """Ctrl+A, then type `text` over the selection. Done once the editor shows `shows` (a piece only the new
    text has) and the value is valid JSON. Under load the first keys can reach the screen before the editor has
    the focus (the text is glued to the old one: not JSON), so that result, once it holds still, is undone and
    typed again. Each attempt is judged by what the screen shows, never by a delay: a UI starved of the CPU can
    look settled before it has taken any of the keys."""
    for _ in range(5):
        term.settled()  # the fork screen has mounted and its editor holds the focus
        term.keys("C-a")
        term.keys(text, literal=True)
        deadline = time.monotonic() + HANG_GUARD  # a guard against a hang only
        while time.monotonic() < deadline:
            shown = term.screen()
            if shows in shown and "✓ valid JSON" in shown and "✗ not JSON" not in shown:
                return
            if "✗ not JSON" in shown and term.settled(quiet=2.0) == shown:
                break  # the new text glued to the old (or cut): a wrong result that holds still
            time.sleep(0.2)
        term.keys("C-a", "BSpace")
    raise AssertionError(f"the value could not be replaced; the screen shows:\n{term.screen()}")


def test_fork_from_the_ui_then_see_the_divergence(terminal, tmp_path: Path, monkeypatch) -> None:
    """Fork the fleet-triage incident at step 5 from the fork screen, with the live reading typed in."""
    parent = tmp_path / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    remember_fork(parent, ForkSettings(runner="agent", command=f"{sys.executable} {AGENT}",
                                       continuation="script", script=str(REPLIES)))
    term = terminal(str(parent))
    _fork_screen(term)
    term.keys("C-r")
    shown = term.wait_for("first divergence at step 5", "error:")
    assert "first divergence at step 5" in shown, shown
    assert (tmp_path / "triage-incident-fork-at-5.json").is_file()


def test_the_agent_given_after_dashes_continues_the_fork(terminal, tmp_path: Path, monkeypatch) -> None:
    """`blackbox tui run.json -- python agent.py`: the fork screen starts with that agent chosen and its command
    filled in (nothing remembered names it), and the fork it runs with it finishes."""
    parent = tmp_path / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    remember_fork(parent, ForkSettings(continuation="script", script=str(REPLIES)))  # no agent, no command
    term = terminal(str(parent), "--", sys.executable, str(AGENT))
    _fork_screen(term)
    # the command's start (a long path is cut at the field's end), shown only when the agent continues
    term.wait_for_all("Agent command (run after --)", f"{sys.executable} "[:24])
    term.keys("C-r")
    shown = term.wait_for("first divergence at step 5", "error:")
    assert "first divergence at step 5" in shown, shown
    assert (tmp_path / "triage-incident-fork-at-5.json").is_file()


def test_what_if_from_inline_replies_without_the_agent(terminal, tmp_path: Path, monkeypatch) -> None:
    parent = tmp_path / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    remember_fork(parent, ForkSettings(runner="whatif", continuation="inline",
                                       replies='[{"type": "final_answer", "text": "Urgent work order for VAN-14."}]'))
    term = terminal(str(parent))
    _fork_screen(term)
    term.keys("C-r")
    shown = term.until(lambda shown: "error:" in shown or all(text in shown for text in (
        "first divergence at step 5", "Urgent work order for VAN-14.")), "the what-if's diff (or an error)")
    assert "error:" not in shown, shown  # the verdict quotes the new final answer


def test_what_if_live_against_the_fake_api(terminal, tmp_path: Path, monkeypatch) -> None:
    from tests.fakeapi import FakeAPI, anthropic_message

    parent = tmp_path / "triage-incident.json"
    parent.write_bytes(INCIDENT.read_bytes())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    remember_fork(parent, ForkSettings(runner="whatif", continuation="live"))
    with FakeAPI() as fake:
        fake.queue(anthropic_message(text="Coolant at 124: urgent work order."))
        term = terminal(str(parent), env={"ANTHROPIC_API_KEY": "sk-ant-e2e", "ANTHROPIC_BASE_URL": fake.url})
        _fork_screen(term)
        term.keys("C-r")
        shown = term.until(lambda shown: "error:" in shown or all(text in shown for text in (
            "first divergence at step 5", "Coolant at 124: urgent work order.")), "the what-if's diff (or an error)")
        assert "error:" not in shown, shown
        assert fake.paths() == ["/v1/messages"]


def test_follow_shows_a_step_appended_while_it_runs(terminal, tmp_path: Path) -> None:
    from blackbox.live.recorder import journal_path

    recorded = json.loads(INCIDENT.read_text(encoding="utf-8"))
    out = tmp_path / "live.json"
    journal = journal_path(out)

    def line(data: dict) -> bytes:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    term = terminal("--follow", str(out))  # started before the recording: it waits for the journal
    term.wait_for("waiting for a recording")
    header = {"blackboxJournal": 1, "id": "live", "createdAt": recorded["createdAt"], "out": str(out)}
    lock = os.open(journal, os.O_RDWR | os.O_CREAT, 0o600)  # held as a live recorder holds it
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        journal.write_bytes(line(header) + b"".join(line(s) for s in recorded["steps"][:4]))
        term.wait_for_all("4 steps", "step 0 (1 of 4)", "following live.json.blackbox-journal (live)")
        with journal.open("ab") as handle:
            handle.write(line(recorded["steps"][4]))
        term.wait_for_all("5 steps", "Tool called: get_telemetry", "following live.json.blackbox-journal (live)")
    finally:
        os.close(lock)


def test_follow_a_real_recording_to_its_end(terminal, tmp_path: Path) -> None:
    """`blackbox record` of a real SDK agent, followed from before it starts: the tool shows as running while it
    runs, and when the run ends the written cassette is shown, every step and the real outcome."""
    from tests.fakeapi import FakeAPI, anthropic_message

    out = tmp_path / "gated.json"
    gate = tmp_path / "gate"
    agent = Path(__file__).with_name("gated_agent.py")
    term = terminal("--follow", str(out))
    term.wait_for("waiting for a recording")
    with FakeAPI() as fake:
        fake.queue(anthropic_message(tool_uses=[("wait_for_gate", {"gate": "north"})]),
                   anthropic_message(text="The gate is open: done."))
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-follow-e2e", "ANTHROPIC_BASE_URL": fake.url,
               "GATE": str(gate)}
        agent_run = subprocess.Popen([sys.executable, "-m", "blackbox", "record", "--out", str(out), "--",
                                      sys.executable, str(agent)], env=env, cwd=tmp_path,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            term.wait_for_all("Tool called: wait_for_gate · running…", "1 tool running", "3 steps",
                              "outcome incomplete")
            gate.touch()
            # the status line no longer says live
            term.wait_for_all("7 steps", "outcome success", "Run completed", "chain intact",
                              "Tool result: wait_for_gate → ok", absent=("running…", "following"))
            output, _ = agent_run.communicate(timeout=HANG_GUARD)  # it ends as soon as the run does
        finally:
            if agent_run.poll() is None:
                agent_run.kill()
                agent_run.wait()
    assert agent_run.returncode == 0, output.decode(errors="replace")


def test_a_large_file_opens_at_once_and_reads_the_rest_meanwhile(terminal, tmp_path: Path) -> None:
    """A file above PROGRESSIVE_FROM: its first rows at once; G follows the end to the last step as the rest
    arrives; a search finds what was read late; the chain is checked; q exits, also while still reading.  A
    copy cut short keeps the steps read browsable under a red banner."""
    cassette = synthetic_cassette(23_000, trace_id="big-e2e")
    big = tmp_path / "big.json"
    save(cassette, big)
    assert big.stat().st_size >= PROGRESSIVE_FROM  # else it would be loaded whole, not progressively
    count = len(cassette.steps)
    # a tool call id seen by its model output, call, result and the next four model inputs: found near the end
    needle = "call-7000"
    found = [s.index for s in cassette.steps if f'"{needle}"' in json.dumps(s.payload)]
    assert len(found) > 1 and found[0] > count * 0.8
    truncated = tmp_path / "cut.json"
    truncated.write_bytes(big.read_bytes()[:-100])

    # quitting while the file is still being read (or its chain checked) ends the app at once
    hasty = terminal(str(big))
    hasty.wait_for("└─ Tool result: lookup → ok")
    hasty.keys("q")  # the header says "reading the file… 1%" here (not asserted: a fast machine may be done)
    shown = hasty.wait_for("EXITED")  # at once (about 0.5 s), not after the whole file
    assert "EXITED 0" in shown and "Traceback" not in shown

    term = terminal(str(big))
    term.wait_for_all("big-e2e  big.json", "├─ Tool called: search", "step 0 (1 of",
                      "0  model_input  Model called with 1 message(s)")
    term.keys("G")  # pressed while reading: the cursor keeps to the last row until the last step is read
    # the whole file read: no longer "steps so far"
    term.wait_for_all(f"step {count - 1} ({count} of {count})", f"{count:,} steps  ·  chain",
                      f"{count - 1}  metadata     Run completed")
    term.keys("/")
    # the box takes the keys once it has the focus, which Textual gives it a moment later: keys sent sooner
    # go to the step list (they would run its commands), so type only once the box is up, Enter once it shows
    term.wait_for("search summaries and payloads")
    term.keys(needle, literal=True)
    term.wait_for(needle)
    term.keys("Enter")
    # from the last step the search wraps around to the first match, all of them found
    term.wait_for_all(f"step {found[0]} ({found[0] + 1} of {count})", f'search "{needle}": match 1 of {len(found)}',
                      f"{found[0]}  model_output", absent=("(searching…)",))
    term.keys("n")
    term.wait_for_all(f"step {found[1]} ({found[1] + 1} of {count})", f"match 2 of {len(found)}")
    term.wait_for_all("chain intact", "outcome success")
    term.keys("q")
    assert "EXITED 0" in term.wait_for("EXITED")

    cut = terminal(str(truncated))
    kept = count - 1  # every whole step before the cut (the last one is the one cut)
    cut.wait_for_all(f"The file cannot be read from step {kept} ", "the file ends early", f"{kept:,} steps",
                     f"unreadable from step {kept}")
    cut.keys("G")
    cut.wait_for(f"step {kept - 1} ({kept} of {kept})")
    cut.keys("Up", "Up")
    shown = cut.wait_for(f"step {kept - 3} ({kept - 2} of {kept})")
    assert "Traceback" not in shown
    cut.keys("q")
    shown = cut.wait_for("EXITED")
    assert "EXITED 0" in shown and "Traceback" not in shown
