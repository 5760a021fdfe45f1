"""`--policy FILE` on every command that makes a cassette — fork (the agent's, and the demo's), what-if,
demo fork, import, recover — with no BLACKBOX_POLICY and no pyproject.toml policy: the flag alone decides, and
each command refuses a wrong policy in one line.  The parent is recorded with the real anthropic SDK against
the fake API, without a policy."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from tests.cli_helpers import run_cli
from tests.conftest import FIXTURES
from tests.fakeapi import FakeAPI
from tests.test_redaction_sessions import (
    CUSTOMER,
    EMAIL,
    POLICY,
    clean_environment,
    customer_brain,
    leftover_journal,
    run_agent,
)

pytest_plugins = ["tests.conftest_fakeapi"]

NEW = "new.person@example.org"


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A policy file only `--policy` names: no BLACKBOX_* variable, no pyproject.toml in the working folder."""
    clean_environment(monkeypatch)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    path = tmp_path / "policies" / "redact.toml"
    path.parent.mkdir()
    path.write_text(POLICY)
    yield path


def parent_run(fake: FakeAPI, out: Path) -> tuple[Path, int]:
    fake.brain = customer_brain()
    bb = blackbox.session("record", out=out)
    run_agent(bb, fake)
    bb.finish()
    assert EMAIL in out.read_text()  # recorded without a policy
    return out, next(s.index for s in load(out).steps if s.type == "tool_result")


def test_what_if_takes_the_policy_from_the_flag(fake_api: FakeAPI, tmp_path: Path, policy: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    parent, at = parent_run(fake_api, tmp_path / "run.json")
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"type": "final_answer", "text": f"Mail {NEW}"}]))
    value = json.dumps({"email": NEW, "notes": "secret notes"})
    plain, flagged = tmp_path / "plain.json", tmp_path / "flagged.json"
    args = ["what-if", parent, "--at", at, "--set", value, "--script", replies]
    assert run_cli(capsys, *args, "--out", plain)[0] == 0
    assert NEW in plain.read_text()  # no policy anywhere but the flag
    code, _, err = run_cli(capsys, *args, "--out", flagged, "--policy", policy)
    assert code == 0, err
    text = flagged.read_text()
    assert verify(flagged).ok and load(flagged).redaction is not None
    assert NEW not in text and EMAIL not in text and "secret notes" not in text


def test_the_demo_fork_takes_the_policy_from_the_flag(tmp_path: Path, policy: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    parent = FIXTURES / "traces" / "fork-parent.v2.json"
    payload = json.dumps({"available": False, "contact": NEW})
    for command in (["demo", "fork", "--trace", parent], ["fork", "--trace", parent]):  # and the older form
        plain, flagged = tmp_path / "plain.json", tmp_path / "flagged.json"
        assert run_cli(capsys, *command, "--payload-json", payload, "--out", plain)[0] == 0
        assert NEW in plain.read_text()
        code, _, err = run_cli(capsys, *command, "--payload-json", payload, "--out", flagged, "--policy", policy)
        assert code == 0, err
        assert NEW not in flagged.read_text() and verify(flagged).ok and load(flagged).redaction is not None


def test_the_agents_fork_hands_the_flags_policy_to_the_agent(fake_api: FakeAPI, tmp_path: Path, policy: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    parent, at = parent_run(fake_api, tmp_path / "run.json")
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"type": "final_answer", "text": "ok"}]))
    seen = tmp_path / "seen-policy"
    agent = f"import os; open({str(seen)!r}, 'w').write(os.environ.get('BLACKBOX_POLICY', ''))"
    run_cli(capsys, "fork", parent, "--at", at, "--set", '"x"', "--out", tmp_path / "fork.json", "--script",
            replies, "--policy", policy, "--", sys.executable, "-c", agent)
    assert Path(seen.read_text()) == policy.absolute()


def test_import_and_recover_take_the_policy_from_the_flag(tmp_path: Path, policy: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    transcript = tmp_path / "chat.json"
    transcript.write_text(json.dumps({"messages": [
        {"role": "user", "content": f"I am {EMAIL}", "timestamp": 1},
        {"role": "assistant", "content": f"Hello {CUSTOMER}", "timestamp": 2}]}))
    plain, flagged = tmp_path / "plain.json", tmp_path / "flagged.json"
    assert run_cli(capsys, "import", "--from", "chat-json", "--in", transcript, "--out", plain)[0] == 0
    assert EMAIL in plain.read_text()
    code, stdout, err = run_cli(capsys, "import", "--from", "chat-json", "--in", transcript, "--out", flagged,
                                "--policy", policy)
    assert code == 0, err
    assert EMAIL not in flagged.read_text() and CUSTOMER not in flagged.read_text() and verify(flagged).ok
    assert EMAIL not in stdout

    left = leftover_journal(tmp_path)
    target = tmp_path / "recovered.json"
    code, _, err = run_cli(capsys, "recover", left, "--out", target, "--policy", policy)
    assert code == 0, err
    assert EMAIL not in target.read_text() and "VIP since 1999" not in target.read_text() and verify(target).ok


@pytest.mark.parametrize("command", [
    ["what-if", "run.json", "--at", "3", "--set", "1", "--out", "f.json", "--script", "r.json"],
    ["demo", "fork"], ["import", "--from", "chat-json", "--in", "chat.json", "--out", "i.json"],
    ["recover", "run.json.blackbox-journal"],
])
def test_a_wrong_policy_is_one_line_with_exit_2(tmp_path: Path, policy: Path, capsys: pytest.CaptureFixture[str],
                                                command: list[str]) -> None:
    for name in ("run.json", "r.json", "chat.json", "run.json.blackbox-journal"):
        (tmp_path / "work" / name).write_text("[]")
    broken = tmp_path / "broken.toml"
    broken.write_text("[[rules]]\nname = 'x'\naction = 'explode'\n")
    code, _, err = run_cli(capsys, *command, "--policy", broken)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "broken.toml" in err, err


def test_printers_apply_the_policy_in_force_to_a_cassette_recorded_without_it(
        tmp_path: Path, policy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """inspect (rows, one step, --json) and diff print what the policy masks as its marks, never the value, when
    the cassette was recorded before the policy existed; with no policy in force they print it as it is."""
    out = tmp_path / "plain.json"
    with blackbox.session("record", out=out) as bb:  # no policy in force: the e-mail is recorded as it is
        bb.tool("lookup", lambda who: {"email": EMAIL, "note": f"write to {EMAIL}"})("grace")
        bb.finish(f"mailed {EMAIL}")
    assert EMAIL in out.read_text()
    other = tmp_path / "other.json"
    with blackbox.session("record", out=other) as bb:
        bb.tool("lookup", lambda who: {"email": EMAIL, "note": "changed"})("grace")
        bb.finish(f"mailed {EMAIL}")
    shows = [("inspect", out), ("inspect", out, "--step", 1), ("inspect", out, "--step", 1, "--json"),
             ("inspect", out, "--json"), ("diff", out, other)]
    for args in shows:
        _, said, _ = run_cli(capsys, *args)
        assert EMAIL in said, args  # no policy: as recorded
    monkeypatch.setenv("BLACKBOX_POLICY", str(policy))
    for args in shows:
        _, said, err = run_cli(capsys, *args)
        assert EMAIL not in said + err and "[redacted:email:" in said, args
