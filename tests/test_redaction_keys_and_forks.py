"""`blackbox scan` finds the known keys (the redaction key, its policy's key-file, the environment's API keys,
and any long piece of one) in cassettes and journals; `blackbox redact` without a policy applies what scan
reports; and a fork or a what-if made under a policy from an unredacted parent keeps no clear value in the
steps it copies.  Through the real CLI, the parent recorded by `blackbox record -- python agent.py` with the
real anthropic SDK against the fake API."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from blackbox.live.recorder import journal_path
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI, anthropic_message, turn_brain
from tests.test_launcher import blackbox as launch
from tests.test_redaction_refusals import agent_script
from tests.test_redaction_sessions import CUSTOMER, EMAIL
from tests.test_redaction_sessions import POLICY as SESSIONS_POLICY

pytest_plugins = ["tests.conftest_fakeapi"]

REDACT_KEY = "rk-7Qm2Vx9Lp4Tz8Bn3Hc6Wd1Fg5Js0Ky"
FILE_KEY = "kf-3Nh8Rw2Xq6Lm9Tv4Pb7Cz1Gd5Sy0Ej"
API_KEY = "sk-ant-api03-Zq8Wm3Xv7Ln2Tb6Rc1Hp5Jd9Fs4Kg0Ya"
AWS = "AKIAIOSFODNN7EXAMPLE"
POLICY = SESSIONS_POLICY.replace('"ip"]', '"cloud-key"]\nkey-file = "redact.key"')  # and a key file


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working folder with no policy above it, no BLACKBOX_* and no API key in the environment."""
    for name in [n for n in os.environ if n.startswith(("BLACKBOX_", "ANTHROPIC_", "OPENAI_", "GEMINI_"))]:
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    yield folder


def recorded(out: Path, result: object) -> Path:
    """A cassette recorded without a policy whose tool result is `result`."""
    bb = blackbox.session("record", out=out)
    bb.tool("lookup", lambda: result)()
    bb.finish(result="done")
    return out


def scan(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, list[dict[str, object]], str]:
    code, out, err = run_cli(capsys, "scan", *args, "--json")
    return code, json.loads(out)["hits"], out + err


# -- scan: the known keys ---------------------------------------------------------------------------------


def test_scan_reports_the_redaction_key_and_its_key_file(work: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (work / "redact.key").write_text(FILE_KEY + "\n")
    (work / "policy.toml").write_text(POLICY)
    cassette = recorded(work / "run.json", {"note": f"the key is {REDACT_KEY}.", "backup": FILE_KEY})
    journal = work / "other.json.blackbox-journal"  # a journal a killed run left, holding a piece of the key
    journal.write_text('{"blackboxJournal": 1, "id": "r"}\n'
                       f'{{"type": "tool_result", "index": 0, "payload": {{"m": "x{FILE_KEY[3:27]}y"}}}}\n')

    code, hits, said = scan(capsys, cassette, journal, "--policy", work / "policy.toml")
    assert code == 1
    found = {(h["file"], h["step"], h["line"], h["path"], h["rule"]) for h in hits}
    assert (str(cassette), 1, None, "payload.result.backup", "redaction-key") in found  # the key-file's key
    assert (str(journal), 0, 2, "payload.m", "redaction-key") in found  # a 24-character piece of it
    assert not any(h["path"] == "payload.result.note" for h in hits)  # BLACKBOX_REDACT_KEY is not set yet
    assert FILE_KEY[3:23] not in said  # never printed, not even the rest of it beside the mark

    monkeypatch.setenv("BLACKBOX_REDACT_KEY", REDACT_KEY)  # the variable wins for tokens: both are still keys
    code, hits, said = scan(capsys, cassette, "--policy", work / "policy.toml")
    assert {h["path"] for h in hits if h["rule"] == "redaction-key"} == {"payload.result.note", "payload.result.backup"}
    assert REDACT_KEY[:20] not in said and REDACT_KEY[-20:] not in said
    code, hits, _ = scan(capsys, cassette)  # no policy: the variable alone
    assert [h["path"] for h in hits if h["rule"] == "redaction-key"] == ["payload.result.note"]


def test_scan_reports_an_api_keys_long_piece_and_not_a_short_one(work: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cassette = recorded(work / "run.json", {"long": API_KEY[5:26], "short": API_KEY[5:24]})
    assert run_cli(capsys, "scan", cassette)[0] == 0
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    code, hits, said = scan(capsys, cassette)
    assert code == 1 and [(h["path"], h["rule"]) for h in hits] == [("payload.result.long", "api-key")]
    assert API_KEY[5:25] not in said


# -- redact without a policy: what scan reports -----------------------------------------------------------

PLANTED = {"email": EMAIL, "card": "4111 1111 1111 1111", "cloud-key": AWS, "ip": "10.44.0.9",
           "url-credentials": "postgres://admin:hunter2@db.internal/app", "phone": "+1 415 555 0132"}


def test_redact_without_a_policy_applies_what_scan_reports(work: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    leaky = recorded(work / "leaky.json", {**PLANTED, "pasted": ("sk-proj-" + "Ab3" * 12)[2:30]})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "Ab3" * 12)  # known to scan and redact, not the recording
    code, hits, _ = scan(capsys, leaky)
    assert code == 1
    reported = {h["rule"] for h in hits}
    assert reported == {*PLANTED, "api-key"}

    code, out, err = run_cli(capsys, "redact", leaky, "--out", work / "shared.json")
    assert out.startswith("wrote ") and EMAIL not in out + err
    assert code == 0, err
    line = err.strip()
    assert "\n" not in line and line.startswith("no redaction policy")
    for name in (*PLANTED, "api-key"):  # the line names what was applied
        assert name in line
    text = (work / "shared.json").read_text()
    for value in PLANTED.values():
        assert value not in text
    assert run_cli(capsys, "scan", work / "shared.json")[0] == 0  # what scan reports is what was redacted
    assert verify(work / "shared.json").ok and load(work / "shared.json").redaction["key"] == "unkeyed"

    monkeypatch.setenv("BLACKBOX_REDACT_KEY", "short")
    code, _, err = run_cli(capsys, "redact", leaky, "--out", work / "other.json")
    assert code == 2 and err.count("\n") == 1 and "BLACKBOX_REDACT_KEY is too short" in err
    assert not (work / "other.json").exists()


# -- forks under a policy from an unredacted parent -------------------------------------------------------

AGENT = agent_script(f'{{"lookup_customer": lambda customer_id: {{"id": customer_id, "email": {EMAIL!r}, '
                     f'"aws": {AWS!r}}}, "send_mail": lambda to: {{"sent": to}}}}',
                     f"Customer {CUSTOMER} ({EMAIL}) cannot log in")
NEW = "new.person@example.org"


def parent_brain() -> object:
    return turn_brain([
        anthropic_message(text=f"Looking up {CUSTOMER}.", tool_uses=[("lookup_customer", {"customer_id": CUSTOMER})]),
        anthropic_message(text=f"Mailing {EMAIL}.", tool_uses=[("send_mail", {"to": EMAIL})]),
        anthropic_message(text=f"Mailed {EMAIL}."),
    ])


@pytest.fixture
def parent(work: Path, fake_api: FakeAPI) -> tuple[Path, int, dict[str, str]]:
    """A parent recorded without a policy (its every step holds the planted values) and its last tool result."""
    (work / "agent.py").write_text(AGENT)
    (work / "redact.key").write_text(FILE_KEY)
    (work / "policy.toml").write_text(POLICY)
    env = {"ANTHROPIC_BASE_URL": fake_api.url, "ANTHROPIC_API_KEY": "test-recording-key"}
    fake_api.brain = parent_brain()
    result = launch("record", "--out", "parent.json", "--", sys.executable, "agent.py", env=env, cwd=work)
    assert result.returncode == 0, result.stderr
    steps = load(work / "parent.json").steps
    at = [s.index for s in steps if s.type == "tool_result"][-1]
    prefix = json.dumps([s.payload for s in steps[:at]])
    assert EMAIL in prefix and CUSTOMER in prefix and AWS in prefix  # recorded in the clear
    return work / "parent.json", at, env


def assert_prefix_clean(fork: Path, at: int) -> None:
    cassette = load(fork)
    assert verify(cassette).ok and cassette.redaction is not None and cassette.forkedFromStepId is not None
    prefix = json.dumps([s.payload for s in cassette.steps[:at]])
    assert "[redacted:email:" in prefix and "[redacted:customer:" in prefix and "[redacted:cloud-key:" in prefix
    text = fork.read_text()
    for value in (EMAIL, CUSTOMER, AWS, NEW):
        assert value not in text, value
    assert not journal_path(fork).exists()


def test_an_agents_fork_under_a_policy_copies_no_clear_value(parent: tuple[Path, int, dict[str, str]],
                                                             work: Path) -> None:
    path, at, env = parent
    (work / "replies.json").write_text(json.dumps([{"type": "final_answer", "text": f"Sent to {NEW}"}]))
    result = launch("fork", path, "--at", str(at), "--set", json.dumps({"sent": NEW}), "--out", "fork.json",
                    "--script", "replies.json", "--policy", "policy.toml", "--", sys.executable, "agent.py",
                    env=env, cwd=work)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_prefix_clean(work / "fork.json", at)


def test_a_what_if_under_a_policy_copies_no_clear_value(parent: tuple[Path, int, dict[str, str]], work: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path, at, _ = parent
    (work / "replies.json").write_text(json.dumps([{"type": "final_answer", "text": f"Sent to {NEW}"}]))
    code, out, err = run_cli(capsys, "what-if", path, "--at", at, "--set", json.dumps({"sent": NEW}), "--script",
                             work / "replies.json", "--out", work / "whatif.json", "--policy", work / "policy.toml")
    assert code == 0, err
    assert_prefix_clean(work / "whatif.json", at)
    for value in (EMAIL, CUSTOMER, AWS, NEW):
        assert value not in out + err
