"""`blackbox record | replay -- <command>` end to end: real subprocesses, real SDK agents, the fake API.

The committed example cassettes must replay offline on a fresh clone; the launcher's one-line results,
exit codes, placeholder keys and refusals are checked through the real CLI.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from blackbox.format.cassette import StepChain, load, save
from blackbox.format.diff import diff
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, weather_brain
from tests.travel_brain import travel_brain
from tests.waiting import HANG_GUARD

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PY = sys.executable


def blackbox(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None,
             timeout: float = HANG_GUARD) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("BLACKBOX_", "ANTHROPIC_", "OPENAI_"))}
    return subprocess.run(
        [PY, "-m", "blackbox", *map(str, args)], env={**base, "NO_COLOR": "1", **(env or {})},
        cwd=cwd or ROOT, capture_output=True, text=True, timeout=timeout, check=False,
    )


def _unreachable_env() -> dict[str, str]:
    """Base URLs pointing at a port nobody listens on: any network call would fail loudly."""
    return {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


@pytest.mark.parametrize("name", ["anthropic_agent", "openai_agent"])
def test_committed_examples_replay_offline_without_keys(name: str, fake_api: FakeAPI) -> None:
    env = {"ANTHROPIC_BASE_URL": fake_api.url, "OPENAI_BASE_URL": fake_api.openai_url}
    result = blackbox("replay", EXAMPLES / f"{name}.json", "--", PY, EXAMPLES / f"{name}.py", env=env)
    assert result.returncode == 0, result.stderr
    assert f"PASS {EXAMPLES / name}.json: 13 steps replayed from the cassette, no network calls" in result.stdout
    assert "Booked: Lisbon" in result.stdout
    assert fake_api.requests == []


@pytest.mark.parametrize(("provider", "name"), [("anthropic", "anthropic_agent"), ("openai", "openai_agent")])
def test_committed_examples_are_current(provider: str, name: str, fake_api: FakeAPI, tmp_path: Path) -> None:
    """Re-recording the example against its fake model gives the committed run, step for step."""
    fake_api.brain = travel_brain(provider)
    env = {"ANTHROPIC_BASE_URL": fake_api.url, "OPENAI_BASE_URL": fake_api.openai_url,
           "ANTHROPIC_API_KEY": "test-recording-key", "OPENAI_API_KEY": "test-recording-key"}
    out = tmp_path / f"{name}.json"
    result = blackbox("record", "--out", out, "--", PY, EXAMPLES / f"{name}.py", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(f"recorded {out}: 13 steps, success")
    fresh, committed = load(out), load(EXAMPLES / f"{name}.json")
    assert verify(fresh).ok
    assert diff(committed, fresh, semantic=True).first_divergence is None
    assert b"test-recording-key" not in out.read_bytes()


def test_a_changed_recording_fails_replay_at_the_step_and_path(tmp_path: Path) -> None:
    committed = load(EXAMPLES / "openai_agent.json")
    chain = StepChain("changed")
    for step in committed.steps:
        payload = step.payload
        if step.index == 6:
            payload = {**payload, "model": "gpt-4o"}
        chain.append(step.type, step.timestamp, payload)
    changed = tmp_path / "changed.json"
    save(chain.cassette(committed.createdAt), changed)
    result = blackbox("replay", changed, "--", PY, EXAMPLES / "openai_agent.py", env=_unreachable_env())
    assert result.returncode == 1
    assert "replay diverged at step 6, model" in result.stderr
    assert '"gpt-4o"' in result.stderr and '"gpt-4.1-mini"' in result.stderr
    assert "Traceback" not in result.stderr
    # said once, by the launcher, its lines as lines (not the SDK's error repr with a literal \n, nor ␊)
    assert result.stderr.count("replay diverged") == 1, result.stderr
    assert "\\n" not in result.stderr and "␊" not in result.stderr and "{'error'" not in result.stderr
    assert "\n  recorded: " in result.stderr and "\n  actual:   " in result.stderr


def test_sequence_match_through_the_cli(tmp_path: Path) -> None:
    committed = load(EXAMPLES / "anthropic_agent.json")
    chain = StepChain("seq")
    for step in committed.steps:
        payload = step.payload
        if step.type == "model_input":
            payload = {**payload, "systemPrompt": payload["systemPrompt"] + " Today is Monday."}
        chain.append(step.type, step.timestamp, payload)
    changed = tmp_path / "seq.json"
    save(chain.cassette(committed.createdAt), changed)
    strict = blackbox("replay", changed, "--", PY, EXAMPLES / "anthropic_agent.py", env=_unreachable_env())
    assert strict.returncode == 1 and "systemPrompt" in strict.stderr
    loose = blackbox("replay", changed, "--match", "sequence", "--", PY, EXAMPLES / "anthropic_agent.py",
                     env=_unreachable_env())
    assert loose.returncode == 0, loose.stderr
    assert "PASS" in loose.stdout


AGENT_WITHOUT_SESSION = "print('hello from an agent without Blackbox')"
AGENT_OVERRIDING = """
import blackbox, sys
bb = blackbox.session(mode="record", out=sys.argv[1])
bb.finish(result="done")
"""
AGENT_EXITING = """
import blackbox, sys
bb = blackbox.session()
raise SystemExit(sys.exit(3))
"""
AGENT_PRINTING_KEY = """
import os, blackbox
bb = blackbox.session()
print("key:", os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("OPENAI_API_KEY"))
bb.finish(result="done")
"""


def _script(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


def test_record_without_a_command_suggests_the_demo(tmp_path: Path) -> None:
    result = blackbox("record", "--out", tmp_path / "x.json")
    assert result.returncode == 2
    assert "blackbox demo" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_command_without_a_session_says_how_to_add_one(tmp_path: Path) -> None:
    agent = _script(tmp_path, "plain.py", AGENT_WITHOUT_SESSION)
    result = blackbox("record", "--out", tmp_path / "x.json", "--", PY, agent)
    assert result.returncode == 1
    assert "ran no Blackbox session" in result.stderr
    assert "bb = blackbox.session()" in result.stderr
    assert not (tmp_path / "x.json").exists()


def test_a_session_overriding_the_cli_settings_fails(tmp_path: Path) -> None:
    agent = _script(tmp_path, "override.py", AGENT_OVERRIDING)
    result = blackbox("record", "--out", tmp_path / "asked.json", "--", PY, agent, tmp_path / "other.json")
    assert result.returncode == 1
    assert "used out" in result.stderr and "asked" in result.stderr


def test_the_agents_exit_code_is_the_launchers(tmp_path: Path) -> None:
    agent = _script(tmp_path, "exit3.py", AGENT_EXITING)
    out = tmp_path / "exit.json"
    result = blackbox("record", "--out", out, "--", PY, agent)
    assert result.returncode == 3
    assert load(out).steps[-1].payload == {"event": "run_failed", "status": "error", "reason": "process_exit",
                                          "exitCode": 3}


def test_replay_sets_placeholder_keys_and_record_does_not(tmp_path: Path) -> None:
    agent = _script(tmp_path, "keys.py", AGENT_PRINTING_KEY)
    out = tmp_path / "keys.json"
    recorded = blackbox("record", "--out", out, "--", PY, agent)
    assert recorded.returncode == 0, recorded.stderr
    assert "key: None None" in recorded.stdout
    replayed = blackbox("replay", out, "--", PY, agent)
    assert replayed.returncode == 0, replayed.stderr
    assert "key: blackbox-replay-placeholder blackbox-replay-placeholder" in replayed.stdout


def test_a_shell_line_is_run_by_the_shell(tmp_path: Path) -> None:
    agent = _script(tmp_path, "keys.py", AGENT_PRINTING_KEY)
    out = tmp_path / "shell.json"
    result = blackbox("record", "--out", out, "--", f"{PY} {agent} && echo shell-ran")
    assert result.returncode == 0, result.stderr
    assert "shell-ran" in result.stdout


def test_a_missing_program_is_one_line(tmp_path: Path) -> None:
    result = blackbox("record", "--out", tmp_path / "x.json", "--", "no-such-program-here")
    assert result.returncode == 2
    assert result.stderr.startswith("error: cannot run 'no-such-program-here'")


def test_replay_of_a_broken_cassette_never_starts_the_agent(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 2, "id": "x", "createdAt": 0, "steps": [')
    agent = _script(tmp_path, "plain.py", "open('started', 'w').write('yes')")
    result = blackbox("replay", broken, "--", PY, agent, cwd=tmp_path)
    assert result.returncode == 2  # nothing to replay against: bad input
    assert "truncated" in result.stderr
    assert not (tmp_path / "started").exists()


def test_ctrl_c_stops_the_agent_and_the_run_is_written(fake_api: FakeAPI, tmp_path: Path) -> None:
    """A terminal's Ctrl-C signals the whole foreground group: the agent must get it (not inherit an ignored
    SIGINT from the launcher), write its cassette, and the launcher must exit with 130."""
    fake_api.brain = weather_brain("anthropic")
    out = tmp_path / "ctrl-c.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOX_")}
    env.update(FAKE_URL=fake_api.url, PYTHONPATH=str(ROOT), NO_COLOR="1")
    proc = subprocess.Popen(
        [PY, "-m", "blackbox", "record", "--out", str(out), "--", PY, "-m", "tests.agents.kill_agent", "between"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "BETWEEN":  # after a tool turn, before the next model call
                break
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(HANG_GUARD) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=HANG_GUARD)  # reaped, its pipes closed
    cassette = load(out)
    assert verify(cassette).ok
    assert cassette.steps[-1].payload == {"event": "run_failed", "status": "error", "reason": "process_exit",
                                          "exitCode": 130}


def test_record_without_a_key_says_so_with_the_remedy(tmp_path: Path) -> None:
    """The SDK refuses before any request: the run is 1 step (its process_exit), and the note names the keys."""
    out = tmp_path / "run.json"
    result = blackbox("record", "--out", out, "--", PY, EXAMPLES / "anthropic_agent.py", env=_unreachable_env())
    assert result.returncode != 0
    assert f"recorded {out}: 1 step, error" in result.stdout  # not "1 steps"
    note = next(line for line in result.stderr.splitlines() if line.startswith("note: "))
    assert "no API key is set" in note and "ANTHROPIC_API_KEY" in note and "record again" in note


@pytest.mark.parametrize(("provider", "name"), [("anthropic", "anthropic_agent"), ("openai", "openai_agent")])
def test_record_refused_for_its_key_says_which_status_and_what_to_check(provider: str, name: str,
                                                                       fake_api: FakeAPI, tmp_path: Path) -> None:
    from tests.fakeapi import error_reply

    fake_api.queue(error_reply(provider, 401))
    env = {"ANTHROPIC_BASE_URL": fake_api.url, "OPENAI_BASE_URL": fake_api.openai_url,
           "ANTHROPIC_API_KEY": "sk-ant-wrong-key-0000000000", "OPENAI_API_KEY": "sk-proj-wrong-key-0000000000"}
    out = tmp_path / "run.json"
    result = blackbox("record", "--out", out, "--", PY, EXAMPLES / f"{name}.py", env=env)
    assert result.returncode != 0 and len(fake_api.requests) == 1
    assert f"recorded {out}: 1 step, error" in result.stdout
    note = next(line for line in result.stderr.splitlines() if line.startswith("note: "))
    assert "HTTP 401" in note and "API key is missing or wrong" in note
    assert "wrong-key" not in result.stdout + note
