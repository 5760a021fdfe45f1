"""`blackbox fork <parent> --at N --set V --out F (--script R | --live) -- <command>` on the example agents
(real SDKs, run as subprocesses by the real launcher) against the fake API: the child verifies, diffs at
exactly N, and its outcome shows what the continuation did.  Every refusal is one `error:` line, exit 2 for
usage and 1 for a failed run."""

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
from typer.testing import CliRunner

import blackbox
from blackbox.cli import app
from blackbox.format.cassette import StepChain, load
from blackbox.format.writing import dumps
from blackbox.live.recorder import journal_path
from tests.fakeapi import FakeAPI, weather_brain
from tests.travel_brain import DATE, travel_brain
from tests.waiting import HANG_GUARD

ROOT = Path(__file__).parent.parent
AGENTS = {"anthropic": ROOT / "examples" / "anthropic_agent.py", "openai": ROOT / "examples" / "openai_agent.py"}
RAIN = {"city": "Lisbon", "date": DATE, "condition": "rain", "high_c": 15, "rain_chance": 0.9}
SCRIPT = [
    {"type": "tool_calls", "calls": [{"toolName": "book_hotel",
                                      "toolInput": {"city": "Porto", "date": DATE, "guest": "Alice"}}]},
    {"type": "final_answer", "text": "Rain in Lisbon, so I booked Porto for Alice."},
]
runner = CliRunner()


def cli(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def one_error_line(stderr: str, *needles: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    for needle in needles:
        assert needle in lines[0], stderr


@pytest.fixture(scope="module")
def server() -> Iterator[FakeAPI]:
    fake = FakeAPI().start()
    yield fake
    fake.close()
    assert not fake.brain_errors, fake.brain_errors


@pytest.fixture
def api(server: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> FakeAPI:
    """The examples reach the fake server through the SDKs' own environment variables, with dummy keys."""
    server.reset()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-key-for-the-fake-api-000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-dummy-key-for-the-fake-api-000")
    return server


def record_parent(api: FakeAPI, provider: str, out: Path) -> Path:
    api.brain = travel_brain(provider)
    code, stdout, stderr = cli("record", "--out", out, "--", sys.executable, AGENTS[provider])
    assert code == 0, stderr
    assert f"recorded {out}: 13 steps, success" in stdout
    api.reset()
    return out


@pytest.fixture(scope="module")
def parents(server: FakeAPI, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One recorded parent per example agent: weather for Lisbon (3) and Porto (5), book Lisbon, answer."""
    folder = tmp_path_factory.mktemp("parents")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in (("ANTHROPIC_BASE_URL", server.url), ("OPENAI_BASE_URL", server.openai_url),
                            ("ANTHROPIC_API_KEY", "sk-ant-dummy-key-for-the-fake-api-000"),
                            ("OPENAI_API_KEY", "sk-proj-dummy-key-for-the-fake-api-000")):
            mp.setenv(name, value)
        paths = {p: record_parent(server, p, folder / f"{p}-parent.json") for p in AGENTS}
    for path in paths.values():
        assert load(path).steps[9].payload["result"]["city"] == "Lisbon"
    return paths


def fork(parent: Path, out: Path, at: int, value: Any, provider: str, *continuation: str | Path) -> tuple[int, str,
                                                                                                          str]:
    return cli("fork", parent, "--at", str(at), "--set", json.dumps(value), "--out", out, *continuation, "--",
               sys.executable, AGENTS[provider])


def check_child(parent: Path, child: Path, at: int, value: Any) -> blackbox.DiffReport:
    code, stdout, stderr = cli("verify", child)
    assert code == 0, stdout + stderr
    loaded = load(child)
    assert (loaded.parentId, loaded.forkedFromStepId) == (load(parent).id, load(parent).steps[at].id)
    report = blackbox.diff(load(parent), loaded)
    assert report.first_divergence == at
    assert report.changed_value is not None and report.changed_value.new == value
    return report


# ---------------------------------------------------------------------------------------------------------
# the example agents, forked


def test_scripted_fork_of_the_anthropic_example(parents: dict[str, Path], api: FakeAPI, tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(SCRIPT))
    child = tmp_path / "rainy.json"
    code, stdout, stderr = fork(parents["anthropic"], child, 3, RAIN, "anthropic", "--script", replies)
    assert code == 0, stderr
    assert stdout.splitlines()[-2:] == [
        f"forked {child}: 13 steps, success; steps 0–2 are the parent's, step 3 is the new result",
        f"next: blackbox diff {parents['anthropic']} {child}",
    ]
    assert api.requests == []  # a scripted fork never calls the API
    report = check_child(parents["anthropic"], child, 3, RAIN)
    assert report.verdict.kind == "answer_changed"
    assert report.outcome_b.final_answer == "Rain in Lisbon, so I booked Porto for Alice."
    booked = load(child).steps[9].payload["result"]
    assert booked["reference"] == "HT-POR-20261212-A"  # the real book_hotel ran after the fork point
    code, stdout, _ = cli("diff", parents["anthropic"], child)
    assert code == 0 and "3" in stdout


@pytest.mark.parametrize(("provider", "at", "value", "booked"), [
    ("anthropic", 3, RAIN, "Porto"),
    ("openai", 5, {"city": "Porto", "date": DATE, "condition": "sunny", "high_c": 26, "rain_chance": 0.0}, "Porto"),
])
def test_live_fork_lets_the_model_react(parents: dict[str, Path], api: FakeAPI, tmp_path: Path, provider: str,
                                        at: int, value: Any, booked: str) -> None:
    api.brain = travel_brain(provider)
    child = tmp_path / "live.json"
    code, stdout, stderr = fork(parents[provider], child, at, value, provider, "--live")
    assert code == 0, stderr
    assert f"forked {child}: 13 steps, success; steps 0–{at - 1} are the parent's" in stdout
    assert len(api.requests) == 2  # the two model calls after the fork point went to the (fake) API
    report = check_child(parents[provider], child, at, value)
    assert report.verdict.kind == "answer_changed"
    assert f"Booked: {booked}" in (report.outcome_b.final_answer or "")
    assert "Booked: Lisbon" in (report.outcome_a.final_answer or "")
    calls = [s.payload["toolInput"]["city"] for s in load(child).steps if s.type == "tool_call"]
    assert calls == ["Lisbon", "Porto", booked]


# ---------------------------------------------------------------------------------------------------------
# runs that fail: exit 1, one line


def test_running_out_of_replies_fails_the_fork(parents: dict[str, Path], api: FakeAPI, tmp_path: Path) -> None:
    replies = tmp_path / "short.json"
    replies.write_text(json.dumps(SCRIPT[:1]))
    code, _, stderr = fork(parents["anthropic"], tmp_path / "short-child.json", 3, RAIN, "anthropic",
                           "--script", replies)
    assert code == 1
    one_error_line(stderr, "error: the fork failed: the script has no reply left for model call 2",
                   f"add more replies to {replies}; the run so far was written to {tmp_path / 'short-child.json'}")
    assert api.requests == []


def test_a_run_that_never_reaches_the_fork_point(parents: dict[str, Path], tmp_path: Path) -> None:
    child = tmp_path / "never.json"
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(SCRIPT))
    code, _, stderr = cli("fork", parents["openai"], "--at", "9", "--set", '"x"', "--out", child, "--script",
                          replies, "--", sys.executable, "-c", "import blackbox; blackbox.session().finish()")
    assert code == 1
    one_error_line(stderr, "the run ended before the fork point (step 9)")
    assert not child.exists() and not journal_path(child).exists()


def test_sigint_after_the_fork_point_writes_the_fork(server: FakeAPI, tmp_path: Path) -> None:
    def start(mode_env: dict[str, str], point: str) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOX_")}
        env.update(mode_env, FAKE_URL=server.url, PYTHONPATH=str(ROOT), AGENT_SIGNALS="default")
        return subprocess.Popen([sys.executable, "-m", "tests.agents.kill_agent", point], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    server.reset()
    server.brain = weather_brain("anthropic")
    parent = tmp_path / "kill-parent.json"
    with start({"BLACKBOX_MODE": "record", "BLACKBOX_OUT": str(parent)}, "full") as recording:
        assert recording.wait(HANG_GUARD) == 0
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"type": "final_answer", "text": "never reached"}]))
    child = tmp_path / "kill-child.json"
    with start({"BLACKBOX_MODE": "fork", "BLACKBOX_CASSETTE": str(parent), "BLACKBOX_OUT": str(child),
                "BLACKBOX_FORK_AT": "3", "BLACKBOX_FORK_SET": '{"city":"Paris","temp_c":40}',
                "BLACKBOX_CONTINUE": "script", "BLACKBOX_SCRIPT": str(replies)}, "between") as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "BETWEEN"  # past the fork point, before the next model call
        proc.send_signal(signal.SIGINT)
        assert proc.wait(HANG_GUARD) == -signal.SIGINT
    cassette = load(child)
    assert blackbox.verify(cassette).ok and cassette.parentId == load(parent).id
    assert cassette.steps[3].payload["result"] == {"city": "Paris", "temp_c": 40}
    assert cassette.steps[-1].payload == {"event": "run_failed", "status": "error", "reason": "process_exit",
                                          "exitCode": 130}
    assert len(cassette.steps) == 5


# ---------------------------------------------------------------------------------------------------------
# usage mistakes: exit 2, one line, the agent never starts


def thinking_parent(path: Path) -> Path:
    chain = StepChain("thinker")
    chain.append("model_input", 1, {"messages": [{"role": "user", "content": "Paris?"}], "tools": [],
                                    "params": {"maxTokens": 2048, "thinking": {"type": "enabled",
                                                                               "budget_tokens": 1024}}})
    chain.append("model_output", 2, {"type": "tool_calls", "calls": [
        {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}]})
    chain.append("tool_call", 3, {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}})
    chain.append("tool_result", 4, {"toolCallId": "call-0", "toolName": "get_weather", "result": {"temp_c": 18}})
    path.write_bytes(dumps(chain.cassette(0)))
    return path


def test_usage_mistakes_are_one_line_with_exit_2(parents: dict[str, Path], tmp_path: Path) -> None:
    parent = parents["anthropic"]
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(SCRIPT))
    marker = tmp_path / "agent-ran"
    agent = ["--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    out = tmp_path / "child.json"
    link = tmp_path / "link.json"
    link.symlink_to(parent)
    malformed = tmp_path / "malformed.json"
    malformed.write_text(json.dumps([{"type": "tool_calls", "calls": [{"toolInput": {}}]}]))
    not_json = tmp_path / "not-json.json"
    not_json.write_text("[{")
    odd_text = tmp_path / "odd-text.json"  # the shape the fork engine reads (format/payloads), checked up front
    odd_text.write_text(json.dumps([{"type": "tool_calls", "calls": [{"toolName": "book"}], "text": 5}]))
    cases: list[tuple[list[str | Path], str]] = [
        ([parent, "--at", "2", "--set", "1", "--out", out, "--script", replies],
         "step 2 is a tool_call, not a tool_result; tool_result steps: 3, 5, 9"),
        ([parent, "--at", "40", "--set", "1", "--out", out, "--live"], "--at 40 is outside the cassette"),
        ([parent, "--at", "3", "--set", "sunny", "--out", out, "--live"], "--set is not valid JSON; quote strings"),
        ([parent, "--at", "3", "--set", "1", "--out", link, "--live"], "--out must differ from the cassette"),
        ([parent, "--at", "3", "--set", "1", "--out", replies, "--script", replies],
         "--out must differ from the --script file"),
        ([parent, "--at", "3", "--set", "1", "--out", out, "--script", malformed],
         "replies[0].calls[0] needs a toolName string"),
        ([parent, "--at", "3", "--set", "1", "--out", out, "--script", not_json], "is not valid JSON"),
        ([parent, "--at", "3", "--set", "1", "--out", out, "--script", odd_text],
         "replies[0].text does not fit a tool_calls reply"),
        ([parent, "--at", "3", "--set", "1", "--out", out], "choose one continuation: --live"),
        ([parent, "--at", "3", "--set", "1", "--out", out, "--live", "--script", replies], "choose one continuation"),
        ([parent, "--at", "3", "--set", "1", "--out", out, "--live", "--pace", "slow"],
         "--pace='slow' is not valid; use one of fast, recorded"),
        ([thinking_parent(tmp_path / "thinker.json"), "--at", "3", "--set", "1", "--out", out, "--live"],
         "fork --live of an agent using extended thinking is not supported yet"),
    ]
    for args, needle in cases:
        code, _, stderr = cli("fork", *args, *agent)
        assert code == 2, (args, stderr)
        one_error_line(stderr, needle)
    assert not marker.exists() and not out.exists()
    code, _, stderr = cli("fork", tmp_path / "missing.json", "--at", "3", "--set", "1", "--out", out, "--live",
                          *agent)
    assert code == 2  # no parent to fork: bad input, as for every command
    one_error_line(stderr, "missing.json")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_live_fork_without_the_key_names_the_key_before_the_agent_runs(
        parents: dict[str, Path], provider: str, api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded model says which provider the agent talks to; without its key the agent would fail at its
    first request and the fork would blame the agent ("check that the command replays the parent")."""
    variable = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}[provider]
    monkeypatch.setenv(variable, "  ")
    out, marker = tmp_path / "child.json", tmp_path / "agent-ran"
    code, stdout, stderr = cli("fork", parents[provider], "--at", "3", "--set", "1", "--out", out, "--live", "--",
                               sys.executable, "-c", f"open({str(marker)!r}, 'w')")
    assert code == 2, stdout + stderr
    one_error_line(stderr, f"{variable} is not set", "--script")
    assert not marker.exists() and not out.exists() and "replays the parent" not in stderr
    other = {"anthropic": "OPENAI_API_KEY", "openai": "ANTHROPIC_API_KEY"}[provider]
    monkeypatch.setenv(variable, "sk-dummy-key-for-the-fake-api-000")
    monkeypatch.delenv(other)  # the other provider's key is not needed
    api.brain = travel_brain(provider)
    code, stdout, stderr = fork(parents[provider], out, 3, RAIN, provider, "--live")
    assert code == 0, stdout + stderr



def test_pace_reaches_the_forked_agent(parents: dict[str, Path], tmp_path: Path) -> None:
    """`--pace recorded` is the agent's setting (its session replays the prefix's streams at their pace)."""
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(SCRIPT))
    seen = tmp_path / "pace.txt"
    agent = ["--", sys.executable, "-c",
             f"import os; open({str(seen)!r}, 'w').write(os.environ.get('BLACKBOX_PACE', 'unset'))"]
    cli("fork", parents["anthropic"], "--at", "3", "--set", "1", "--out", tmp_path / "child.json", "--script",
        replies, "--pace", "recorded", *agent)
    assert seen.read_text() == "recorded"
