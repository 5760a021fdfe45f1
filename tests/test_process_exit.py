"""A recording agent (a subprocess running the real anthropic SDK against the fake API) that ends without
finish(): killed by SIGINT / SIGTERM / SIGKILL at several points, or exiting on its own.  Never half a file;
a verified cassette with the right terminal step; after SIGKILL, a journal that `recover` turns into one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import Cassette, load
from blackbox.format.outcome import outcome
from blackbox.format.verify import verify
from blackbox.live.recorder import journal_path, recover
from tests.fakeapi import FakeAPI, anthropic_message, json_reply, turn_brain
from tests.waiting import HANG_GUARD, ended, until

pytest_plugins = ["tests.conftest_fakeapi"]

ROOT = Path(__file__).parent.parent


def brain(slow_second_turn: bool = False) -> Any:
    first = anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})])
    final = anthropic_message(text="Sunny in Paris.")
    return turn_brain([first, json_reply(final, delay=10) if slow_second_turn else final])


_STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_agent_left() -> Iterator[None]:
    """An agent a failed test left waiting to be killed is killed (and reaped) with the test."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        ended(proc)


class Agent:
    """The kill agent running as a subprocess.  Its output goes to files, never to pipes: nothing the test does
    not read can fill a pipe and stall the agent, and no pipe is left open.  Its signals are reset by the agent
    itself (`AGENT_SIGNALS=default`), not by a `preexec_fn`, which runs Python in a forked copy of this threaded
    process (the fake API's server threads) where a lock held at the fork can hang the child before it starts."""

    def __init__(self, point: str, fake: FakeAPI, out: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOX_")}
        env.update(BLACKBOX_MODE="record", BLACKBOX_OUT=str(out), BLACKBOX_REPORT=str(out.with_suffix(".report")),
                   FAKE_URL=fake.url, PYTHONPATH=str(ROOT), AGENT_SIGNALS="default")
        self.stdout, self.stderr = out.with_suffix(".stdout"), out.with_suffix(".stderr")
        with self.stdout.open("w") as stdout, self.stderr.open("w") as stderr:
            self.proc = subprocess.Popen([sys.executable, "-m", "tests.agents.kill_agent", point], cwd=ROOT, env=env,
                                         stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
        _STARTED.append(self.proc)

    def printed(self, marker: str) -> bool:
        return marker in self.stdout.read_text().splitlines()

    def wait_for(self, marker: str) -> None:
        """Until the agent has printed `marker` (or has ended: a failure, with what it wrote to stderr)."""
        until(lambda: self.printed(marker) or self.proc.poll() is not None, f"{marker} from the agent")
        if not self.printed(marker):
            raise AssertionError(f"the agent ended ({self.proc.returncode}) before {marker}: {self.errors()}")

    def errors(self) -> str:
        return self.stderr.read_text()

    def send_signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def kill(self) -> None:
        self.proc.kill()

    def wait(self) -> int:
        """The agent's return code once it has ended (a hang guard, not a time limit)."""
        return ended(self.proc)


def start(point: str, fake: FakeAPI, out: Path) -> Agent:
    return Agent(point, fake, out)


def no_debris(out: Path) -> None:
    """Never half a file: no temporary files, and the cassette (if any) loads whole."""
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")]
    if out.exists():
        load(out)


def written(out: Path) -> Cassette:
    no_debris(out)
    cassette = load(out)
    assert verify(cassette).ok
    assert not journal_path(out).exists()
    return cassette


def report(out: Path) -> dict[str, Any]:
    return json.loads(out.with_suffix(".report").read_text())


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_between_calls_writes_process_exit(fake_api: FakeAPI, tmp_path: Path, sig: int, code: int) -> None:
    fake_api.brain = brain()
    out = tmp_path / "between.json"
    proc = start("between", fake_api, out)
    proc.wait_for("BETWEEN")
    proc.send_signal(sig)
    assert proc.wait() == -sig  # the signal was re-raised: a shell shows 128+n
    cassette = written(out)
    assert [s.type for s in cassette.steps] == ["model_input", "model_output", "tool_call", "tool_result",
                                                "metadata"]
    assert cassette.steps[-1].payload == {"event": "run_failed", "status": "error", "reason": "process_exit",
                                          "exitCode": code}
    assert report(out)["written"] is True and report(out)["finished"] is False


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_inside_a_tool_writes_calls_in_flight(fake_api: FakeAPI, tmp_path: Path, sig: int,
                                                       code: int) -> None:
    fake_api.brain = brain()
    out = tmp_path / "tool.json"
    proc = start("tool", fake_api, out)
    proc.wait_for("IN_TOOL")
    proc.send_signal(sig)
    assert proc.wait() == -sig
    cassette = written(out)
    assert [s.type for s in cassette.steps] == ["model_input", "model_output", "tool_call", "metadata"]
    assert cassette.steps[-1].payload == {"event": "run_failed", "status": "error", "reason": "calls_in_flight",
                                          "exitCode": code, "inFlight": 1}


def test_a_signal_during_a_model_call_writes_calls_in_flight(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.brain = brain(slow_second_turn=True)
    out = tmp_path / "model.json"
    proc = start("model", fake_api, out)
    proc.wait_for("CALLING")
    until(lambda: len(fake_api.requests) >= 2, "the slow request at the server")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait() == -signal.SIGTERM
    cassette = written(out)
    assert len(cassette.steps) == 5 and cassette.steps[-1].payload["reason"] == "calls_in_flight"


@pytest.mark.parametrize(("point", "steps"), [("between", 4), ("tool", 2)])
def test_sigkill_leaves_a_journal_that_recovers(fake_api: FakeAPI, tmp_path: Path, point: str, steps: int) -> None:
    fake_api.brain = brain()
    out = tmp_path / f"kill-{point}.json"
    proc = start(point, fake_api, out)
    proc.wait_for("BETWEEN" if point == "between" else "IN_TOOL")
    proc.kill()
    assert proc.wait() == -signal.SIGKILL
    no_debris(out)
    assert not out.exists()
    cassette = recover(journal_path(out))
    assert len(cassette.steps) == steps and cassette.id == f"kill-{point}"
    assert verify(cassette).ok and outcome(cassette).status == "incomplete"
    assert "sk-ant-subprocess-key" not in journal_path(out).read_text()


def test_the_journal_keeps_the_origin_fields_a_killed_run_recovers_with(fake_api: FakeAPI, tmp_path: Path) -> None:
    """What replay needs beyond the hashed steps (the provider's call ids, the model that answered, the places of
    whole floats) goes through the real journal of a killed recording into the recovered cassette."""
    fake_api.brain = brain()
    out = tmp_path / "floats.json"
    proc = start("between_float", fake_api, out)
    proc.wait_for("BETWEEN")
    proc.kill()
    assert proc.wait() == -signal.SIGKILL
    cassette = recover(journal_path(out))
    output, result = cassette.steps[1], cassette.steps[3]
    assert output.type == "model_output" and result.type == "tool_result", [s.type for s in cassette.steps]
    assert output.origin is not None and output.origin.toolCallIds and output.origin.model == "claude-sonnet-4-6"
    assert result.origin is not None and result.origin.floats == ("%2Fresult%2Ftemp%5Ff",)
    assert result.payload["result"]["temp_f"] == 64 and verify(cassette).ok


@pytest.mark.parametrize(("point", "code", "terminal"), [
    ("exit0", 0, {"event": "run_completed", "status": "success", "result": "Sunny in Paris."}),
    ("exit3", 3, {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": 3}),
    ("exit_false", 0, {"event": "run_completed", "status": "success", "result": "Sunny in Paris."}),
    ("raise", 1, {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": 1}),
    ("raise_exit4", 4, {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": 4}),
    ("builtin_exit5", 5, {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": 5}),
    ("builtin_quit6", 6, {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": 6}),
    ("exit_message", 1, {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": 1}),
    ("main_returns8", 8, {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": 8}),
    ("caught_exit", 0, {"event": "run_completed", "status": "success", "result": "Sunny in Paris."}),
])
def test_ending_without_finish(fake_api: FakeAPI, tmp_path: Path, point: str, code: int,
                               terminal: dict[str, Any]) -> None:
    fake_api.brain = brain()
    out = tmp_path / f"{point}.json"
    proc = start(point, fake_api, out)
    assert proc.wait() == code, proc.errors()
    stderr = proc.errors()
    if point == "raise":
        assert "RuntimeError: the agent crashed" in stderr
    if point == "exit_message":
        assert stderr.strip().endswith("the agent gave up")
    cassette = written(out)
    assert len(cassette.steps) == 7 and cassette.steps[-1].payload == terminal


def blackbox_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blackbox", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=HANG_GUARD, check=False)


def test_after_kill_9_recover_and_the_next_record_rescue_the_run(fake_api: FakeAPI, tmp_path: Path) -> None:
    """`blackbox recover <journal>` writes the killed run; a new recording to the same file rescues it first
    instead of truncating its journal."""
    fake_api.brain = brain()
    out = tmp_path / "killed.json"

    def kill_between() -> None:
        proc = start("between", fake_api, out)
        proc.wait_for("BETWEEN")
        proc.kill()
        assert proc.wait() == -signal.SIGKILL

    kill_between()
    result = blackbox_cli("recover", journal_path(out))
    recovered = tmp_path / "killed.recovered.json"
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"recovered {recovered}: 4 steps, incomplete"
    assert verify(load(recovered)).ok and not journal_path(out).exists()

    kill_between()
    proc = start("exit0", fake_api, out)
    assert proc.wait() == 0
    assert "was recovered into" in proc.errors()
    rescued = tmp_path / "killed.recovered-2.json"
    assert len(load(rescued).steps) == 4 and outcome(load(rescued)).status == "incomplete"
    assert written(out).steps[-1].payload["status"] == "success"


def test_recover_refuses_what_is_not_a_journal(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello")
    result = blackbox_cli("recover", bogus)
    assert result.returncode == 2  # bad input (README, "Exit codes")
    assert result.stderr.startswith("error: ") and "not a Blackbox journal" in result.stderr
    same = blackbox_cli("recover", bogus, "--out", bogus)
    assert same.returncode in (1, 2) and "Traceback" not in same.stderr
