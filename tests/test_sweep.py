"""`blackbox sweep` end to end: the real CLI as a subprocess against the fake API answering with controlled
randomness (`tests/fakeapi_chance.py`), the parent recorded by the real openai SDK through a Blackbox session.

Known pass rates come back inside their Wilson intervals and are told apart from the baseline's; the
replayed prefix costs no request; a killed sweep resumes without redoing a finished branch; another command
on the folder is refused in one line; bad input is one line and exit 2; a 429 is waited out.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import openai
import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from blackbox.many.folder import read_sweep
from blackbox.many.report import NOISE
from tests.fakeapi import FakeAPI, error_reply, weather_brain
from tests.fakeapi_chance import chance_brain
from tests.waiting import HANG_GUARD, until

pytest_plugins = ["tests.conftest_fakeapi"]

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-proj-sweep-0123456789abcdefghijklmn"
TOOLS: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
RECORDED = "sunny in Paris"
AT = 3  # the parent's tool_result


def record_parent(fake: FakeAPI, out: Path) -> None:
    """A two-turn weather run through the real openai SDK and a Blackbox session."""
    fake.brain = weather_brain("openai", model="gpt-4o")
    bb = blackbox.session("record", out=out)
    weather = bb.tool("get_weather", lambda city: f"sunny in {city}")
    client = openai.OpenAI(base_url=fake.openai_url, api_key=KEY, http_client=bb.http_client(), max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    while True:
        message = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS).choices[0].message
        if not message.tool_calls:
            bb.finish(result=message.content)
            break
        messages.append(message.model_dump(exclude_none=True))
        messages += [{"role": "tool", "tool_call_id": call.id,
                      "content": weather(**json.loads(call.function.arguments))}  # type: ignore[union-attr]
                     for call in message.tool_calls]
    client.close()
    fake.reset()


def env_for(fake: FakeAPI) -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake.openai_url, "PYTHONPATH": str(ROOT),
            "NO_COLOR": "1"}


def sweep(fake: FakeAPI, *args: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "blackbox", "sweep", *map(str, args)], env=env_for(fake),
                          capture_output=True, text=True, timeout=HANG_GUARD, check=False)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


@pytest.fixture
def parent(fake_api: FakeAPI, tmp_path: Path) -> Path:
    path = tmp_path / "parent.json"
    record_parent(fake_api, path)
    assert load(path).steps[AT].payload["result"] == RECORDED
    return path


def test_known_pass_rates_fall_inside_their_intervals_and_are_told_apart(
        fake_api: FakeAPI, parent: Path, tmp_path: Path) -> None:
    rates = {RECORDED: 0.5, "hot": 0.9, "cold": 0.1, "mild": 0.5}
    brain = fake_api.brain = chance_brain(rates, seed=3)
    out, runs = tmp_path / "sweep", 40
    done = sweep(fake_api, parent, "--at", AT, "--set", '"hot"', "--set", '"cold"', "--set", '"mild"', "--repeat",
                 runs, "--live", "--out", out, "--expect-final-answer", "pass", "--concurrency", 8, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = {row["variant"]: row for row in report["variants"]}
    assert list(rows) == ["baseline", "hot", "cold", "mild"]
    for name, value in (("baseline", RECORDED), ("hot", "hot"), ("cold", "cold"), ("mild", "mild")):
        row = rows[name]
        assert row["runs"] == runs and row["passed"] == brain.expected_passes(value, runs)
        assert row["low"] <= rates[value] <= row["high"], (name, row)
    assert rows["hot"]["low"] > rows["cold"]["high"]  # 0.9 and 0.1 told apart
    assert rows["hot"]["label"].startswith("improvement") and rows["cold"]["label"].startswith("regression")
    assert rows["mild"]["label"] == NOISE  # the same rate as the run itself: noise, not a regression
    assert report["flapRate"] == min(rows["baseline"]["passed"], runs - rows["baseline"]["passed"]) / runs
    # the replayed prefix cost nothing: one request per branch, each the continuation's
    assert len(fake_api.requests) == 4 * runs and sum(brain.served.values()) == 4 * runs
    manifest = read_sweep(out)
    assert len({b.seed for b in manifest.branches}) == len(manifest.branches)
    parent_run = load(parent)
    for branch in manifest.branches[::17]:
        fork = load(out / str(branch.file))
        assert verify(fork).ok and fork.parentId == parent_run.id
        assert [s.hash for s in fork.steps[:AT]] == [s.hash for s in parent_run.steps[:AT]]
        assert branch.divergence == 5 and branch.change == "answer_changed"  # "pass"/"fail", not the weather
    assert KEY not in (out / "sweep.json").read_text()


def test_the_same_sweep_twice_with_a_script_is_deterministic_and_markdown_reads_it(
        fake_api: FakeAPI, parent: Path, tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Weather: sunny in Paris"}]))
    out = tmp_path / "s"
    args = [parent, "--at", AT, "--set", '"hot"', "--repeat", 3, "--script", script, "--out", out,
            "--expect-status", "success", "--format", "markdown"]
    first = sweep(fake_api, *args)
    assert first.returncode == 0, first.stderr
    assert "| baseline | 3 | 3/3 = 100% (44%–100%) | none |" in first.stdout
    assert "| hot | 3 | 3/3 = 100%" in first.stdout and NOISE in first.stdout
    assert fake_api.requests == []  # scripted: nothing asked of any API
    again = sweep(fake_api, *args)  # every branch finished: the report again, nothing rerun
    assert again.returncode == 0 and again.stdout == first.stdout


def test_a_killed_sweep_resumes_without_redoing_a_finished_branch(
        fake_api: FakeAPI, parent: Path, tmp_path: Path) -> None:
    brain = fake_api.brain = chance_brain({RECORDED: 1.0}, seed=1)
    brain.hold, brain.free = threading.Event(), 2  # the third request waits: the sweep is mid-way when killed
    out = tmp_path / "s"
    args = ["-m", "blackbox", "sweep", str(parent), "--at", str(AT), "--repeat", "6", "--live", "--out", str(out),
            "--concurrency", "1", "--json"]
    proc = subprocess.Popen([sys.executable, *args], env=env_for(fake_api), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    until(lambda: (out / "sweep.json").is_file() and
          sum(b.verdict is not None for b in read_sweep(out).branches) >= 1, "a finished branch in the manifest")
    proc.kill()
    proc.communicate(timeout=HANG_GUARD)
    brain.hold.set()
    finished = sum(b.verdict is not None for b in read_sweep(out).branches)  # whole: it reads
    assert 1 <= finished <= 2
    brain.served.clear()
    brain.hold = None
    done = sweep(fake_api, parent, "--at", AT, "--repeat", 6, "--live", "--out", out, "--concurrency", 1, "--json")
    assert done.returncode == 0, done.stderr
    assert sum(brain.served.values()) == 6 - finished  # the finished ones were not asked again
    report = json.loads(done.stdout)
    assert report["complete"] and report["variants"][0]["passed"] == 6


def test_ctrl_c_stops_cleanly_with_the_manifest_whole(fake_api: FakeAPI, parent: Path, tmp_path: Path) -> None:
    brain = fake_api.brain = chance_brain({RECORDED: 1.0}, seed=1)
    brain.hold, brain.free = threading.Event(), 1
    out = tmp_path / "s"
    proc = subprocess.Popen([sys.executable, "-m", "blackbox", "sweep", str(parent), "--at", str(AT), "--repeat",
                             "4", "--live", "--out", str(out), "--concurrency", "1"],
                            env=env_for(fake_api), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    until(lambda: (out / "sweep.json").is_file() and
          any(b.verdict is not None for b in read_sweep(out).branches), "a finished branch in the manifest")
    until(lambda: sum(brain.served.values()) == 2, "the second request waiting")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=HANG_GUARD)
    brain.hold.set()
    assert proc.returncode == 130
    assert "interrupted: 1 of 4 branches finished" in err and "Traceback" not in err
    assert [b.verdict for b in read_sweep(out).branches] == ["pass", None, None, None]


def test_a_different_command_on_the_folder_is_refused_in_one_line(
        fake_api: FakeAPI, parent: Path, tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "ok"}]))
    out = tmp_path / "s"
    assert sweep(fake_api, parent, "--at", AT, "--repeat", 2, "--script", script, "--out", out).returncode == 0
    before = (out / "sweep.json").read_bytes()
    for extra, what in ((["--repeat", 3], "--repeat differs"), (["--repeat", 2, "--set", '"x"'], "variants"),
                        (["--repeat", 2, "--expect-status", "error"], "the checks")):
        done = sweep(fake_api, parent, "--at", AT, "--script", script, "--out", out, *extra)
        assert done.returncode == 2 and what in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert (out / "sweep.json").read_bytes() == before


def test_bad_input_is_one_line_and_exit_2(fake_api: FakeAPI, parent: Path, tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "ok"}]))
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    common = ["--script", script]
    cases = [
        ([tmp_path / "missing.json", "--at", AT, "--out", tmp_path / "o1", *common], "no such file"),
        ([parent, "--at", AT, "--set", "{bad", "--out", tmp_path / "o2", *common], "not valid JSON"),
        ([parent, "--at", 1, "--out", tmp_path / "o3", *common], "tool_result"),
        ([parent, "--at", AT, "--out", a_file, *common], "is a file"),
        ([parent, "--at", AT, "--set", "@" + str(tmp_path / "nope.json"), "--out", tmp_path / "o4", *common],
         "cannot read"),
        ([parent, "--at", AT, "--out", tmp_path / "o5"], "choose one continuation"),
    ]
    for args, message in cases:
        done = sweep(fake_api, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "o2").exists() and a_file.read_text() == "x"


def test_a_429_with_retry_after_is_waited_out_and_the_branch_still_runs(
        fake_api: FakeAPI, parent: Path, tmp_path: Path) -> None:
    brain = fake_api.brain = chance_brain({RECORDED: 1.0})
    fake_api.queue(error_reply("openai", 429, retry_after_ms=200))
    done = sweep(fake_api, parent, "--at", AT, "--repeat", 3, "--live", "--out", tmp_path / "s", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["variants"][0]["passed"] == 3 and report["variants"][0]["errors"] == 0
    assert len(fake_api.requests) == 4 and sum(brain.served.values()) == 3  # one refused, asked again


AGENT = '''
import json, os, sys
import openai
import blackbox

bb = blackbox.session()
weather = bb.tool("get_weather", lambda city: f"sunny in {city}")
client = openai.OpenAI(http_client=bb.http_client(), max_retries=0)
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
messages = [{"role": "user", "content": "Weather in Paris?"}]
while True:
    message = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
    if not message.tool_calls:
        bb.finish(result=message.content)
        break
    messages.append(message.model_dump(exclude_none=True))
    messages += [{"role": "tool", "tool_call_id": c.id, "content": weather(**json.loads(c.function.arguments))}
                 for c in message.tool_calls]
if os.environ.get("SEED_LOG"):
    with open(os.environ["SEED_LOG"], "a") as log:
        log.write(os.environ.get("SWEEP_SEED", "none") + chr(10))
'''


def test_an_agent_command_sweep_runs_the_agent_per_branch_through_the_fork(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    parent = tmp_path / "parent.json"
    fake_api.brain = weather_brain("openai", model="gpt-4o")
    recorded = subprocess.run([sys.executable, "-m", "blackbox", "record", "--out", str(parent), "--",
                               sys.executable, str(agent)], env=env_for(fake_api), capture_output=True, text=True,
                              timeout=HANG_GUARD, check=False)
    assert recorded.returncode == 0, recorded.stderr
    fake_api.reset()
    brain = fake_api.brain = chance_brain({RECORDED: 1.0, "hot": 0.0})
    out, seeds = tmp_path / "s", tmp_path / "seeds.txt"
    monkeypatch.setenv("SEED_LOG", str(seeds))
    done = sweep(fake_api, parent, "--at", AT, "--set", '"hot"', "--repeat", 2, "--live", "--out", out,
                 "--expect-final-answer", "pass", "--json", "--", sys.executable, str(agent))
    assert done.returncode == 0, done.stderr
    rows = {row["variant"]: row for row in json.loads(done.stdout)["variants"]}
    assert (rows["baseline"]["passed"], rows["hot"]["passed"]) == (2, 0)
    assert sum(brain.served.values()) == 4  # the agent's first call was replayed from the parent: no request
    manifest = read_sweep(out)
    assert manifest.settings.mode == "agent" and manifest.settings.command[-1] == str(agent)
    for branch in manifest.branches:
        fork = load(out / str(branch.file))
        assert verify(fork).ok and fork.parentId == load(parent).id
    assert sorted(seeds.read_text().split()) == sorted(str(b.seed) for b in manifest.branches)  # each its own
