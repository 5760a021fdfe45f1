"""The exit code a cassette records is the status the process really ends with: as Python maps `sys.exit`'s
value (256 → 0, -1 → 255, beyond a C long → 255), for an `exit` bound before the session, and, under
`blackbox record`, as the launcher sees it (the source of truth: an atexit handler that runs after
Blackbox's can still change it).  A hang-up sent to the launcher's whole process group records the run; a
hang-up the agent inherited as ignored (`nohup`) stays ignored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import load
from blackbox.format.verify import verify
from blackbox.live.exit_status import of_returncode, of_system_exit
from blackbox.live.recorder import journal_path
from tests.agents import default_signals
from tests.fakeapi import FakeAPI, anthropic_message, turn_brain
from tests.waiting import HANG_GUARD

pytest_plugins = ["tests.conftest_fakeapi"]

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
CODES = ["0", "3", "255", "256", "-1", "-256", "2**32 + 7", "2**63 - 1", "2**63", "2**70", "-(2**70)", "True",
         "None", "'a message'"]

# A module imported before the session binds the C `sys.exit` (`from sys import exit`), then exits with it.
EARLY = "from sys import exit\n\n\ndef leave(code):\n    exit(code)\n"
AGENT = """\
import sys
import early  # binds sys.exit before the session
import blackbox

bb = blackbox.session()
tools = bb.tools({"note": lambda text: {"noted": text}})
tools["note"]("one step before the exit")
early.leave(eval(sys.argv[1]))
"""
# An atexit handler registered before the session runs after Blackbox's and changes the status.
LATE_CHANGE = """\
import atexit
import os
import blackbox

atexit.register(lambda: os._exit(3))
bb = blackbox.session()
tools = bb.tools({"note": lambda text: {"noted": text}})
tools["note"]("the run ends with exit 0, then the process with 3")
"""


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLACKBOX_", "ANTHROPIC_", "OPENAI_"))}
    return {**env, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), extra.pop("PYTHONPATH", "")]),
            **extra}


def terminal_of(out: Path) -> Any:
    cassette = load(out)
    assert verify(cassette).ok
    last = cassette.steps[-1].payload
    return last if last.get("event") in ("run_failed", "run_completed") else None


def expected_terminal(status: int) -> dict[str, Any] | None:
    if status == 0:
        return None  # no final answer: the run closed at exit 0 is incomplete
    return {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": status}


@pytest.mark.parametrize("code", CODES)
def test_the_mapping_is_the_status_the_kernel_reports(code: str) -> None:
    done = subprocess.run([PY, "-c", f"raise SystemExit({code})"], capture_output=True, timeout=HANG_GUARD)
    assert of_system_exit(eval(code)) == done.returncode


def test_a_signal_is_128_plus_n() -> None:
    assert of_returncode(-signal.SIGTERM) == 143 and of_returncode(7) == 7


@pytest.mark.parametrize("code", ["12", "256", "-1", "2**70", "'gave up'"])
def test_an_exit_bound_before_the_session_is_recorded_as_the_process_ends(tmp_path: Path, code: str) -> None:
    """Without the launcher: the in-process hook alone gets the status right."""
    (tmp_path / "early.py").write_text(EARLY)
    (tmp_path / "agent.py").write_text(AGENT)
    out = tmp_path / "run.json"
    done = subprocess.run([PY, "agent.py", code], cwd=tmp_path, capture_output=True, text=True, timeout=HANG_GUARD,
                          env=clean_env(BLACKBOX_MODE="record", BLACKBOX_OUT=str(out), PYTHONPATH=str(tmp_path)))
    assert "Traceback" not in done.stderr, done.stderr
    assert terminal_of(out) == expected_terminal(done.returncode), (code, done.returncode)


@pytest.mark.parametrize("code", ["12", "256", "-1", "2**70"])
def test_under_the_launcher_the_same_codes_are_recorded(tmp_path: Path, code: str) -> None:
    (tmp_path / "early.py").write_text(EARLY)
    (tmp_path / "agent.py").write_text(AGENT)
    out = tmp_path / "run.json"
    done = subprocess.run([PY, "-m", "blackbox", "record", "--out", str(out), "--", PY, "agent.py", code],
                          cwd=tmp_path, capture_output=True, text=True, timeout=HANG_GUARD,
                          env=clean_env(PYTHONPATH=str(tmp_path)))
    status = of_system_exit(eval(code))
    assert done.returncode == status, done.stderr
    assert terminal_of(out) == expected_terminal(status)


def test_the_launcher_records_the_status_the_agent_really_ended_with(tmp_path: Path) -> None:
    """Blackbox's hook saw a clean exit (0: the run closed incomplete); a later atexit handler ended the
    process with 3.  The launcher sees 3, and the cassette says so: one rewritten, verified terminal step."""
    (tmp_path / "agent.py").write_text(LATE_CHANGE)
    out = tmp_path / "run.json"
    done = subprocess.run([PY, "-m", "blackbox", "record", "--out", str(out), "--", PY, "agent.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=HANG_GUARD, env=clean_env())
    assert done.returncode == 3, done.stderr
    assert terminal_of(out) == expected_terminal(3)
    assert [s.type for s in load(out).steps] == ["tool_call", "tool_result", "metadata"]
    assert done.stdout.strip() == (f"recorded {out}: 3 steps, error (finish() was not called; the run was closed "
                                   "at exit)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.py", "run.json"]  # no temporary file left


def brain() -> Any:
    return turn_brain([anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})]),
                       anthropic_message(text="Sunny in Paris.")])


def between_calls(fake: FakeAPI, out: Path, *, launcher: bool, preexec: Any) -> subprocess.Popen[str]:
    """The kill agent, paused after its tool turn (it printed BETWEEN), in a process group of its own."""
    agent = [PY, "-m", "tests.agents.kill_agent", "between"]
    command = [PY, "-m", "blackbox", "record", "--out", str(out), "--", *agent] if launcher else agent
    env = clean_env(FAKE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-subprocess-key-0000")
    if not launcher:
        env.update(BLACKBOX_MODE="record", BLACKBOX_OUT=str(out))
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=preexec)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "BETWEEN":
            return proc
    proc.wait(HANG_GUARD)
    raise AssertionError(f"the agent ended before BETWEEN: {proc.stderr.read() if proc.stderr else ''}")


def own_group() -> None:
    default_signals()
    os.setsid()


def test_a_hangup_to_the_launchers_process_group_records_the_run(fake_api: FakeAPI, tmp_path: Path) -> None:
    """The terminal hangs up: the launcher and the agent both get SIGHUP, and the launcher forwards its copy
    to the group.  The second SIGHUP must not kill the agent while it writes the cassette."""
    fake_api.brain = brain()
    out = tmp_path / "hup.json"
    proc = between_calls(fake_api, out, launcher=True, preexec=own_group)
    os.killpg(proc.pid, signal.SIGHUP)
    _, stderr = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 129, stderr
    assert "nothing was recorded" not in stderr
    assert terminal_of(out) == expected_terminal(129)
    assert len(load(out).steps) == 5
    assert not journal_path(out).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hup.json"]  # no .hup.json.*.tmp left behind


def test_a_hangup_ignored_by_nohup_stays_ignored(fake_api: FakeAPI, tmp_path: Path) -> None:
    """Started under `nohup` (SIGHUP inherited as ignored), the agent survives a hang-up; SIGTERM sent after it
    is what ends the run (signals are discarded when ignored, so the order is certain)."""
    fake_api.brain = brain()
    out = tmp_path / "nohup.json"

    def nohup() -> None:
        default_signals()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = between_calls(fake_api, out, launcher=False, preexec=nohup)
    proc.send_signal(signal.SIGHUP)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == -signal.SIGTERM
    assert terminal_of(out) == expected_terminal(143)


SECOND_HANGUP = """\
import os
import signal
import sys
import blackbox

bb = blackbox.session("record", out=sys.argv[1])
bb.tools({"note": lambda text: {"noted": text}})["note"]("one step")
closing = bb.close_at_exit


def close_at_exit(code):
    os.kill(os.getpid(), signal.SIGHUP)  # the launcher's forwarded copy, arriving while the run is written
    sum(range(10_000))  # Python runs a pending handler between bytecodes: here, if at all
    closing(code)
    print("WRITTEN", code, flush=True)


bb.close_at_exit = close_at_exit
os.kill(os.getpid(), signal.SIGHUP)
signal.pause()
"""


def test_a_second_hangup_while_the_run_is_written_does_not_kill_the_write(tmp_path: Path) -> None:
    """The group test above, made certain: the second SIGHUP is raised inside the close, every time."""
    (tmp_path / "agent.py").write_text(SECOND_HANGUP)
    out = tmp_path / "run.json"
    done = subprocess.run([PY, "agent.py", str(out)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=HANG_GUARD, env=clean_env(), preexec_fn=default_signals)
    assert done.returncode == -signal.SIGHUP, done.stderr
    assert done.stdout == "WRITTEN 129\n"
    assert terminal_of(out) == expected_terminal(129)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.py", "run.json"]
