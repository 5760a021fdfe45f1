"""The UI's fork runners without a UI: each writes a real fork cassette (the agent through the real CLI and the
fixtures' Anthropic SDK agent), cancel stops a running agent, failures come back as one status line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blackbox.format.cassette import load
from blackbox_tui.fork_runners import AgentRunner, ForkJob, ForkResult, ForkRunner, next_model_input, runner_for
from blackbox_tui.run import Run
from blackbox_tui.state import ForkSettings
from tests.conftest import FIXTURES

TRIAGE = FIXTURES / "fleet-triage"
INCIDENT = TRIAGE / "cassettes" / "triage-incident.json"
REPLIES = TRIAGE / "inputs" / "urgent-replies.json"
READING = TRIAGE / "inputs" / "live-reading.json"
AGENT = Path(__file__).parent / "tui" / "triage_agent.py"
HANG_GUARD = 600.0  # seconds: only a hung run gets here; the tests wait for what the runner reports


class Events:
    """Records what a runner reports; `answer` is the result given for a call the parent never made."""

    def __init__(self, answer: Any = None) -> None:
        self.lines: list[str] = []
        self.statuses: list[str] = []
        self.asked: list[dict[str, Any]] = []
        self.answer = answer
        self.heard = asyncio.Event()

    def line(self, text: str) -> None:
        self.lines.append(text)
        self.heard.set()

    def started(self, status: str) -> None:
        self.statuses.append(status)

    def ask_result(self, call: dict[str, Any]) -> Any:
        self.asked.append(call)
        return self.answer


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    path = tmp_path / "triage-incident.json"
    path.write_bytes(INCIDENT.read_bytes())
    return path


def job(parent: Path, settings: ForkSettings, value: str | None = None, **more: Any) -> ForkJob:
    return ForkJob(parent, 5, value if value is not None else READING.read_text(encoding="utf-8"),
                   parent.with_name("fork.json"), settings, **more)


def run(runner: ForkRunner, the_job: ForkJob, events: Events) -> ForkResult:
    return asyncio.run(asyncio.wait_for(runner.run(the_job, events), HANG_GUARD))


def test_the_runners_module_never_imports_textual() -> None:
    code = "import sys, blackbox_tui.fork_runners; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD, check=True)
    assert out.stdout.strip() == "False"


def test_what_if_from_inline_replies_writes_the_fork(parent: Path) -> None:
    settings = ForkSettings(runner="whatif", continuation="inline",
                            replies=json.dumps([{"type": "final_answer", "text": "Urgent: VAN-14."}]))
    events = Events()
    result = run(runner_for("whatif"), job(parent, settings), events)
    assert result.ok, result.message
    fork = load(result.out)
    assert fork.parentId == "triage-incident" and fork.steps[-2].payload["text"] == "Urgent: VAN-14."
    assert fork.steps[5].payload["result"] == json.loads(READING.read_text(encoding="utf-8"))
    assert events.statuses == ["running… (the model is being asked)"]
    assert "wrote" in events.lines[-1] and str(result.out) in events.lines[-1]


def test_what_if_asks_for_a_call_the_parent_never_made(parent: Path) -> None:
    replies = [{"type": "tool_call", "toolName": "get_service_history", "toolInput": {"vehicle_id": "VAN-99"}},
               {"type": "final_answer", "text": "VAN-99 has no history."}]
    settings = ForkSettings(runner="whatif", continuation="inline", replies=json.dumps(replies))
    events = Events(answer={"services": []})
    result = run(runner_for("whatif"), job(parent, settings), events)
    assert result.ok, result.message
    assert [call["toolName"] for call in events.asked] == ["get_service_history"]
    results = [s.payload for s in load(result.out).steps if s.type == "tool_result"]
    assert results[-1]["result"] == {"services": []}


def test_a_bad_value_or_replies_file_is_one_status_line(parent: Path) -> None:
    events = Events()
    bad_value = run(runner_for("whatif"), job(parent, ForkSettings(runner="whatif", script=str(REPLIES)), "{oops"),
                    events)
    assert not bad_value.ok and bad_value.message.startswith("error: ") and "\n" not in bad_value.message
    missing = run(runner_for("whatif"), job(parent, ForkSettings(runner="whatif", script=str(parent) + ".nope")),
                  Events())
    assert not missing.ok and "cannot read it" in missing.message
    assert not parent.with_name("fork.json").exists()


def test_the_agent_command_makes_the_fork_through_the_cli(parent: Path) -> None:
    settings = ForkSettings(runner="agent", command=f"{sys.executable} {AGENT}", continuation="script",
                            script=str(REPLIES))
    events = Events()
    result = run(runner_for("agent"), job(parent, settings), events)
    assert result.ok, "\n".join(events.lines)
    assert events.lines[0].startswith("$ blackbox fork ") and "--set @" in events.lines[0]
    assert events.statuses == ["running… (ctrl+g cancels)"]
    fork = load(result.out)
    assert fork.parentId == "triage-incident"
    assert fork.steps[5].payload["result"] == json.loads(READING.read_text(encoding="utf-8"))


def test_a_failing_agent_reports_its_last_error_line(parent: Path) -> None:
    agent = f"{sys.executable} -c \"import sys; print('agent says hi'); sys.exit('no module named anthropic')\""
    settings = ForkSettings(runner="agent", command=agent, script=str(REPLIES))
    events = Events()
    result = run(runner_for("agent"), job(parent, settings), events)
    assert not result.ok
    assert result.message.startswith("error: the fork exited with status")
    assert "agent says hi" in events.lines


def test_cancel_stops_the_agent_and_everything_it_started(parent: Path) -> None:
    agent = f"{sys.executable} -u -c \"import time; print('agent started', flush=True); time.sleep(600)\""
    settings = ForkSettings(runner="agent", command=agent, script=str(REPLIES))
    runner = AgentRunner()
    events = Events()

    async def scenario() -> ForkResult:
        assert not runner.cancel()  # nothing runs yet
        task = asyncio.create_task(runner.run(job(parent, settings), events))
        while "agent started" not in events.lines:
            events.heard.clear()
            await events.heard.wait()
        assert runner.process is not None
        assert runner.cancel()
        return await task

    result = asyncio.run(asyncio.wait_for(scenario(), HANG_GUARD))
    assert not result.ok and result.message.startswith("cancelled (exit status ")
    assert runner.process is None
    assert not parent.with_name("fork.json").exists()


def test_the_demo_runner_forks_the_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from blackbox.demo import demo_pair

    monkeypatch.chdir(tmp_path)
    demo_parent, _ = demo_pair(tmp_path)
    the_job = ForkJob(demo_parent, 3, '{"results": [], "available": false}', tmp_path / "demo-fork.json",
                      ForkSettings(runner="demo"), next_model_input=next_model_input(Run.open(demo_parent), 3))
    events = Events()
    result = run(runner_for("demo"), the_job, events)
    assert result.ok, result.message
    assert load(result.out).parentId is not None
    assert events.lines[-1].startswith("the demo agent finished; wrote")
