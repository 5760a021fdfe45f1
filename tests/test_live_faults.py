"""Hostile faults against a live recording: two recorders on one file, SIGKILL while parallel tools run, a key
known only to the SDK client, a full disk.  Real subprocesses running the real anthropic SDK against the fake
API; every artifact is searched for the key and for every 20-character piece of it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import load
from blackbox.format.outcome import outcome
from blackbox.format.verify import verify
from blackbox.live.recorder import journal_path, recover
from tests.agents.hostile_agent import CITIES, KEY
from tests.fakeapi import FakeAPI, anthropic_message, turn_brain
from tests.waiting import HANG_GUARD

pytest_plugins = ["tests.conftest_fakeapi"]

ROOT = Path(__file__).parent.parent
PY = sys.executable


def env_for(fake: FakeAPI, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLACKBOX_", "ANTHROPIC_", "OPENAI_"))}
    env.update(FAKE_URL=fake.url, PYTHONPATH=str(ROOT), NO_COLOR="1", **extra)
    return env


def agent(point: str, fake: FakeAPI, out: Path, **popen: Any) -> subprocess.Popen[str]:
    env = env_for(fake, BLACKBOX_MODE="record", BLACKBOX_OUT=str(out),
                  BLACKBOX_REPORT=str(out.with_suffix(".report")))
    return subprocess.Popen([PY, "-m", "tests.agents.hostile_agent", point], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def record(out: Path, fake: FakeAPI, point: str, **run: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "blackbox", "record", "--out", str(out), "--", PY, "-m",
                           "tests.agents.hostile_agent", point], cwd=ROOT, env=env_for(fake), text=True,
                          capture_output=True, timeout=HANG_GUARD, check=False, **run)


def read_until(proc: subprocess.Popen[str], marker: str) -> list[str]:
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line.strip())
        if line.strip() == marker:
            return seen
    proc.wait(HANG_GUARD)
    raise AssertionError(f"the agent ended before {marker}: {proc.stderr.read() if proc.stderr else ''}")


def key_pieces(key: str = KEY, size: int = 20) -> list[str]:
    return [key[i:i + size] for i in range(len(key) - size + 1)]


def assert_no_key(*texts: str | bytes) -> None:
    for text in texts:
        data = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        leaked = [piece for piece in key_pieces() if piece in data]
        assert not leaked, f"a piece of the key leaked: {leaked[0]!r}"


def parallel_brain() -> Any:
    return turn_brain([anthropic_message(tool_uses=[("get_weather", {"city": c}) for c in CITIES]),
                       anthropic_message(text="Done.")])


# -- two recorders on one output ------------------------------------------------------------------------


def test_a_second_recorder_to_a_live_journal_refuses_and_leaves_it_alone(fake_api: FakeAPI,
                                                                          tmp_path: Path) -> None:
    fake_api.brain = parallel_brain()
    out = tmp_path / "shared.json"
    first = agent("parallel", fake_api, out)
    try:
        read_until(first, "ALL")
        before = journal_path(out).read_bytes()
        second = record(out, fake_api, "parallel")
        assert second.returncode == 2, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "another recording to" in lines[0] and "is running" in lines[0], lines
        assert "Traceback" not in second.stderr and second.stdout == ""
        # The session refuses too (an agent run without the launcher, e.g. BLACKBOX_* set by hand).
        third = agent("parallel", fake_api, out)
        _, stderr = third.communicate(timeout=HANG_GUARD)
        assert third.returncode == 1 and "another recording to" in stderr
        assert journal_path(out).read_bytes() == before and not list(tmp_path.glob("*.recovered*.json"))
    finally:
        first.kill()
        first.communicate(timeout=HANG_GUARD)  # reaped, its pipes closed
    cassette = recover(journal_path(out))
    assert len(cassette.steps) == 2 + 2 * len(CITIES) and verify(cassette).ok


# -- SIGKILL while parallel tools run --------------------------------------------------------------------


@pytest.mark.parametrize("received", [1, 2, 3, 4])
def test_sigkill_while_parallel_tools_run_loses_no_result_the_agent_received(fake_api: FakeAPI, tmp_path: Path,
                                                                             received: int) -> None:
    """Tools finish in reverse order; after the agent holds `received` results it is killed with SIGKILL."""
    fake_api.brain = parallel_brain()
    out = tmp_path / f"kill-{received}.json"
    proc = agent("parallel", fake_api, out)
    got = [line.removeprefix("GOT ") for line in read_until(proc, f"GOT {CITIES[-received]}")
           if line.startswith("GOT ")]
    proc.kill()
    proc.communicate(timeout=HANG_GUARD)  # reaped, its pipes closed
    assert proc.returncode == -signal.SIGKILL
    assert got == CITIES[::-1][:received]
    cassette = recover(journal_path(out))
    assert verify(cassette).ok and outcome(cassette).status == "incomplete"
    tools = [(s.type, s.payload["toolInput"]["city"] if s.type == "tool_call" else s.payload["result"]["city"])
             for s in cassette.steps[2:]]
    cities = [city for kind, city in tools if kind == "tool_result"]
    assert set(got) <= set(cities), f"results the agent held are missing: {set(got) - set(cities)}"
    assert cities == [c for c in CITIES if c in cities]  # the model's order, whatever order they finished in
    assert [kind for kind, _ in tools] == ["tool_call", "tool_result"] * len(cities)
    calls = {s.payload["toolCallId"] for s in cassette.steps[2:]}
    asked = {c["toolCallId"] for c in cassette.steps[1].payload["calls"]}
    assert calls <= asked


# -- a key given only to the client ---------------------------------------------------------------------


@pytest.mark.parametrize("point", ["early_key", "early_piece"])
def test_a_tool_returning_the_clients_key_before_the_first_request_never_reaches_the_journal(
        fake_api: FakeAPI, tmp_path: Path, point: str) -> None:
    fake_api.brain = turn_brain([anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})]),
                                 anthropic_message(text="Done.")])
    out = tmp_path / f"{point}.json"
    with agent(point, fake_api, out, stdin=subprocess.PIPE) as killed:
        read_until(killed, "TOOL_DONE")
        held = journal_path(out).read_bytes()
        killed.kill()
    assert held == b""  # the key is unknown until the first request: nothing was written yet
    journal_path(out).unlink()

    proc = agent(point, fake_api, out, stdin=subprocess.PIPE)
    stdout, stderr = proc.communicate("go\n", timeout=HANG_GUARD)
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr  # the refusal is the launcher's one line (from the report), never a traceback
    assert not out.exists() and not journal_path(out).exists()
    report = out.with_suffix(".report").read_text()
    assert '"written":false' in report.replace(" ", "")
    assert "refusing to write the cassette: step 1 contains the API key" in report
    assert_no_key(stdout, stderr, report)
    assert_no_key(*(p.read_bytes() for p in tmp_path.iterdir()))


def test_through_the_launcher_the_key_reaches_no_artifact(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.brain = turn_brain([anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})]),
                                 anthropic_message(text="Done.")])
    out = tmp_path / "launched.json"
    result = record(out, fake_api, "early_piece", input="go\n")
    assert result.returncode == 1
    assert "nothing was recorded: refusing to write the cassette: step 1 contains the API key" in result.stderr
    assert_no_key(result.stdout, result.stderr, *(p.read_bytes() for p in tmp_path.iterdir()))


# -- a full disk while journaling -----------------------------------------------------------------------


def test_a_full_disk_stops_the_journal_not_the_agent(fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.brain = turn_brain([anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})]),
                                 anthropic_message(text="Done.")])
    out = tmp_path / "full.json"
    result = record(out, fake_api, "full_disk")
    assert result.returncode == 0, result.stderr
    assert "DONE" in result.stdout
    assert f"recorded {out}: 7 steps, success" in result.stdout
    assert ("note: the journal could not be written: No space left on device; the cassette was written"
            in result.stdout + result.stderr)
    assert "Traceback" not in result.stderr
    cassette = load(out)
    assert verify(cassette).ok and not journal_path(out).exists()
