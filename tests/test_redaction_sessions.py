"""The policy wherever a cassette is made — record (and its crash journal), replay, fork, what-if, import,
recover, the pytest plugin — and the `scan` and `redact` commands, with the real anthropic SDK against the
fake API.  Nothing planted survives in any file a run leaves; the redacted cassette verifies and replays."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import blackbox
from blackbox.errors import BlackboxError
from blackbox.fork.whatif import ScriptedModel, what_if
from blackbox.format.cassette import StepChain, load
from blackbox.format.verify import verify
from blackbox.live.recorder import journal_path, recover
from blackbox.live.redaction import load_redactor
from blackbox.redaction import redact_cassette
from tests.agents.loops import anthropic_agent
from tests.cli_helpers import run_cli
from tests.fakeapi import FakeAPI, anthropic_message, turn_brain

pytest_plugins = ["pytester", "tests.conftest_fakeapi"]

KEY = "sk-ant-api03-redaction-test-key-0123456789"
EMAIL = "grace.hopper@navy.example.com"
CARD = "4111 1111 1111 1111"
CUSTOMER = "CUST-884422"
POLICY = """
detectors = ["email", "card", "ip"]
[[rules]]
name = "customer"
action = "mask"
pattern = "CUST-[0-9]{6}"
[[rules]]
name = "lookup-notes"
action = "drop"
tool = "lookup_customer"
path = "notes"
"""
PLANTED = (EMAIL, CARD, CUSTOMER, "VIP since 1999")


def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No BLACKBOX_* variable but a redaction key: only what a test names decides the policy."""
    for name in [n for n in os.environ if n.startswith("BLACKBOX_")]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BLACKBOX_REDACT_KEY", "a test key of thirty-two characters")


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "redact.toml"
    path.write_text(POLICY)
    clean_environment(monkeypatch)
    yield path


def lookup_customer(customer_id: str) -> dict[str, Any]:
    return {"id": customer_id, "email": EMAIL, "notes": "VIP since 1999", "card": CARD}

def leftover_journal(tmp_path: Path) -> Path:
    """A journal a killed recording left before the policy existed: a customer's tool call and its result."""
    chain = StepChain("old")
    chain.append("tool_call", 1, {"toolCallId": "call-0", "toolName": "lookup_customer",
                                  "toolInput": {"customer_id": CUSTOMER}})
    chain.append("tool_result", 2, {"toolCallId": "call-0", "toolName": "lookup_customer",
                                    "result": lookup_customer(CUSTOMER)})
    left = tmp_path / "old.json.blackbox-journal"
    left.write_bytes(b"\n".join([b'{"blackboxJournal": 1, "id": "old", "createdAt": 1}',
                                 *(msgspec.json.encode(s) for s in chain.steps)]) + b"\n")
    return left



TOOL_DEFS = [{"name": "lookup_customer", "description": "Find a customer.",
              "input_schema": {"type": "object", "properties": {"customer_id": {"type": "string"}}}}]


def customer_brain(customer: str = CUSTOMER) -> Any:
    return turn_brain([
        anthropic_message(text="Looking up.", tool_uses=[("lookup_customer", {"customer_id": customer})]),
        lambda body: anthropic_message(text=f"Found {EMAIL}."),
    ])


def run_agent(bb: blackbox.Session, fake: FakeAPI, customer: str = CUSTOMER) -> str:
    import anthropic

    client = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake.url, api_key=KEY, max_retries=0)
    return anthropic_agent(client, bb.tools({"lookup_customer": lookup_customer}),
                           f"Customer {customer} ({EMAIL}) says card {CARD} fails", tool_defs=TOOL_DEFS)


def assert_clean(*files: Path) -> None:
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        for value in PLANTED:
            assert value not in text, f"{value!r} in {f.name}"


def record(fake: FakeAPI, out: Path, policy: Path) -> blackbox.Cassette:
    fake.brain = customer_brain()
    bb = blackbox.session("record", out=out, policy=policy)
    run_agent(bb, fake)
    bb.finish()
    return load(out)


def test_a_recording_is_redacted_before_hashing_and_verifies(fake_api: FakeAPI, tmp_path: Path, policy: Path) -> None:
    out = tmp_path / "run.json"
    cassette = record(fake_api, out, policy)
    assert_clean(out)
    report = verify(out)
    assert report.ok and report.redacted is not None
    assert report.redacted["customer"] >= 3 and report.redacted["email"] >= 3 and report.redacted["lookup-notes"] == 2
    result = next(s.payload for s in cassette.steps if s.type == "tool_result")
    assert result["toolName"] == "lookup_customer" and result["result"]["notes"] == "[redacted:lookup-notes]"
    assert cassette.redaction["key"] != "unkeyed" and not journal_path(out).exists()


def test_the_crash_journal_holds_only_redacted_values(fake_api: FakeAPI, tmp_path: Path, policy: Path) -> None:
    fake_api.brain = customer_brain()
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out, policy=policy)
    import anthropic

    client = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake_api.url, api_key=KEY, max_retries=0)
    client.messages.create(model="claude-sonnet-4-6", max_tokens=64, tools=TOOL_DEFS, messages=[
        {"role": "user", "content": f"{CUSTOMER} {EMAIL} {CARD}"}])
    bb.tools({"lookup_customer": lookup_customer})["lookup_customer"](customer_id=CUSTOMER)
    journal = journal_path(out)
    assert journal.exists()
    assert_clean(journal)  # while the run is still going: what a kill -9 would leave
    rescued = recover(journal, redactor=None)
    assert verify(rescued).ok and len(rescued.steps) == 4
    bb.finish()


def test_replay_of_a_redacted_cassette_passes_and_a_changed_value_diverges(
        fake_api: FakeAPI, tmp_path: Path, policy: Path) -> None:
    out = tmp_path / "run.json"
    record(fake_api, out, policy)
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out, policy=policy)
    run_agent(bb, fake_api)
    assert bb.finish().status == "success"
    assert not fake_api.requests

    bb = blackbox.session("replay", cassette=out, policy=policy)
    with pytest.raises(Exception) as caught:
        run_agent(bb, fake_api, customer="CUST-884423")
    assert blackbox.is_blackbox_error(caught.value)
    said = str(caught.value)
    assert "diverged at step 0, messages[0].content" in said and "CUST-88442" not in said
    with pytest.raises(BlackboxError):
        bb.finish()


def test_replay_with_another_key_says_which_key_made_the_cassette(
        fake_api: FakeAPI, tmp_path: Path, policy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run.json"
    record(fake_api, out, policy)
    monkeypatch.setenv("BLACKBOX_REDACT_KEY", "some other key, also long enough")
    bb = blackbox.session("replay", cassette=out, policy=policy)
    with pytest.raises(Exception, match="made with redaction key"):
        run_agent(bb, fake_api)
    with pytest.raises(BlackboxError):
        bb.finish()


def test_fork_and_what_if_apply_the_policy_to_the_new_value(fake_api: FakeAPI, tmp_path: Path, policy: Path) -> None:
    parent_path = tmp_path / "run.json"
    parent = record(fake_api, parent_path, policy)
    at = next(s.index for s in parent.steps if s.type == "tool_result")
    value = {"id": "x", "email": "new.person@example.org", "notes": "secret notes"}
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Mail new.person@example.org"}]))
    out = tmp_path / "fork.json"
    bb = blackbox.session("fork", cassette=parent_path, out=out, fork_at=at, fork_set=value, continue_with="script",
                          script=script, policy=policy)
    run_agent(bb, fake_api)
    bb.finish()
    fork = load(out)
    assert verify(fork).ok and "new.person@example.org" not in out.read_text()
    assert [s.hash for s in fork.steps[:at]] == [s.hash for s in parent.steps[:at]]  # the prefix is the parent's

    redactor = load_redactor(policy)
    wi, _ = what_if(parent, at, value, ScriptedModel([{"type": "final_answer", "text": "new.person@example.org"}]),
                    trace_id="wi", redactor=redactor)
    text = json.dumps([s.payload for s in wi.steps])
    assert verify(wi).ok and "new.person@example.org" not in text and "secret notes" not in text


def test_import_and_recover_apply_the_policy(tmp_path: Path, policy: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLACKBOX_POLICY", str(policy))
    transcript = tmp_path / "chat.json"
    transcript.write_text(json.dumps({"messages": [
        {"role": "user", "content": f"I am {EMAIL}", "timestamp": 1},
        {"role": "assistant", "content": f"Hello {CUSTOMER}", "timestamp": 2}]}))
    out = tmp_path / "imported.json"
    code, stdout, _ = run_cli(capsys, "import", "--from", "chat-json", "--in", transcript, "--out", out)
    assert code == 0 and out.exists()
    assert_clean(out)
    assert EMAIL not in stdout and CUSTOMER not in stdout

    # a journal a killed recording left before the policy existed
    left = leftover_journal(tmp_path)
    target = tmp_path / "recovered.json"
    code, _, err = run_cli(capsys, "recover", left, "--out", target)
    assert code == 0, err
    assert_clean(target)
    assert verify(target).ok


def test_scan_finds_planted_values_in_a_cassette_a_journal_and_a_temp_file(
        tmp_path: Path, policy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    bb = blackbox.session("record", out=folder / "leaky.json")
    bb.tools({"lookup_customer": lookup_customer})["lookup_customer"](customer_id=CUSTOMER)
    bb.finish()
    (folder / "run.json.blackbox-journal").write_text('{"blackboxJournal": 1, "id": "r"}\n'
                                                      f'{{"type": "tool_result", "payload": {{"m": "{EMAIL}"}}}}\n')
    (folder / ".run.json.abc123.tmp").write_text(f'{{"steps": [{{"payload": "card {CARD} and')
    code, out, _ = run_cli(capsys, "scan", folder, "--policy", policy, "--json")
    doc = json.loads(out)
    assert code == 1 and not doc["ok"]
    kinds = {(h["kind"], h["rule"]) for h in doc["hits"]}
    assert {("cassette", "email"), ("cassette", "customer"), ("cassette", "card"), ("journal", "email"),
            ("temporary file", "card")} <= kinds
    assert next(h for h in doc["hits"] if h["kind"] == "cassette")["step"] is not None
    for value in PLANTED:
        assert value not in out
    code, md, _ = run_cli(capsys, "scan", folder, "--policy", policy, "--format", "markdown")
    assert code == 1 and md.startswith("### blackbox scan:") and EMAIL not in md

    clean = tmp_path / "clean"
    clean.mkdir()
    redact_target = clean / "shared.json"
    code, _, err = run_cli(capsys, "redact", folder / "leaky.json", "--out", redact_target, "--policy", policy)
    assert code == 0, err
    code, out, _ = run_cli(capsys, "scan", clean, "--policy", policy)
    assert code == 0 and "clean" in out


def test_redact_rechains_with_a_link_verify_shows(tmp_path: Path, policy: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "leaky.json"
    bb = blackbox.session("record", out=source)
    bb.tools({"lookup_customer": lookup_customer})["lookup_customer"](customer_id=CUSTOMER)
    bb.finish()
    original = load(source)
    out = tmp_path / "shared.json"
    code, said, _ = run_cli(capsys, "redact", source, "--out", out, "--policy", policy)
    assert code == 0 and "re-chained from step 0" in said
    assert_clean(out)
    code, text, _ = run_cli(capsys, "verify", out)
    assert code == 0 and "rewritten by blackbox redact from leaky" in text and "redacted: card 1, customer 2" in text
    code, doc, _ = run_cli(capsys, "verify", out, "--json")
    link = json.loads(doc)["redaction"]["rewrittenFrom"]
    assert link == {"id": "leaky", "finalHash": original.steps[-1].hash, "steps": len(original.steps)}
    code, doc, _ = run_cli(capsys, "inspect", out, "--json")
    assert json.loads(doc)["redaction"]["redacted"]["email"] == 1
    code, _, err = run_cli(capsys, "redact", source, "--out", source, "--policy", policy)
    assert code == 2 and "--out must differ" in err
    # a cassette changed after it was recorded is refused: re-chaining it would make the change verify
    tampered = tmp_path / "tampered.json"
    tampered.write_text(source.read_text().replace(CUSTOMER, CUSTOMER + "0"))
    code, _, err = run_cli(capsys, "redact", tampered, "--out", tmp_path / "laundered.json", "--policy", policy)
    assert code == 2 and "hash chain does not hold at step" in err and not (tmp_path / "laundered.json").exists()


def test_the_pytest_plugin_records_under_the_projects_policy(pytester: pytest.Pytester, fake_api: FakeAPI,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_pytest_plugin import NO_PLUGINS

    fake_api.brain = customer_brain()
    monkeypatch.setenv("FAKE_URL", fake_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    for name in [n for n in os.environ if n.startswith("BLACKBOX_")]:
        monkeypatch.delenv(name, raising=False)
    pytester.makefile(".toml", pyproject=f'[project]\nname = "t"\n[tool.blackbox.redact]\n{POLICY}'.replace(
        "[[rules]]", "[[tool.blackbox.redact.rules]]"))
    pytester.makepyfile(test_agent='''
import os
import anthropic
from tests.test_redaction_sessions import run_agent

class Fake:
    url = os.environ["FAKE_URL"]

def test_customer(blackbox):
    run_agent(blackbox, Fake())
''')
    pytester.runpytest_inprocess(*NO_PLUGINS, "--blackbox-record").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes/test_agent/test_customer.json"
    assert_clean(cassette)
    assert verify(cassette).ok
    fake_api.reset()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    pytester.runpytest_inprocess(*NO_PLUGINS).assert_outcomes(passed=1)


# ---------------------------------------------------------------------------------------------------------
# the property: whatever the payload, nothing planted survives and the result verifies

_SECRETS = st.sampled_from([EMAIL, CARD, CUSTOMER, "10.44.0.9", "AKIAIOSFODNN7EXAMPLE",
                            "postgres://u:pw1@db.example.com/x"])
_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_PLANTED = st.tuples(_TEXT, _SECRETS, _TEXT).map(lambda t: f"{t[0]} {t[1]} {t[2]}")
_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10, 10), _TEXT, _PLANTED),
                       lambda inner: st.one_of(st.lists(inner, max_size=3),
                                               st.dictionaries(st.one_of(_TEXT, _PLANTED), inner, max_size=3)),
                       max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(results=st.lists(_VALUES, min_size=1, max_size=4), prompt=_PLANTED)
def test_no_planted_value_survives_and_the_redacted_cassette_verifies(results: list[Any], prompt: str,
                                                                      tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text(POLICY.replace('detectors = ["email", "card", "ip"]', "") + '\n')
    redactor = load_redactor(policy, env={})
    folder = Path(tempfile.mkdtemp(dir=tmp_path))  # one folder per example
    out = folder / "run.json"
    bb = blackbox.session("record", out=out, policy=policy)
    tool = bb.tools({"echo": lambda i: results[i]})["echo"]
    for i in range(len(results)):
        tool(i)
    journal = journal_path(out)
    journal_text = journal.read_text() if journal.exists() else ""
    bb.finish(result=prompt)
    artifacts = out.read_text() + journal_text
    for value in ("grace.hopper@navy.example.com", "4111 1111 1111 1111", "CUST-884422", "10.44.0.9",
                  "AKIAIOSFODNN7EXAMPLE", "u:pw1"):
        assert value not in artifacts
    cassette = load(out)
    assert verify(cassette).ok
    assert redact_cassette(cassette, redactor).steps == cassette.steps  # applying it again changes nothing


AGENT_WITH_A_TOOL = f"""
import blackbox
bb = blackbox.session()
bb.tools({{"lookup": lambda: {{"email": "{EMAIL}", "id": "{CUSTOMER}"}}}})["lookup"]()
bb.finish(result="mail {EMAIL}")
"""


def test_the_launcher_hands_the_policy_and_the_key_to_the_agent(tmp_path: Path, policy: Path) -> None:
    from tests.test_launcher import PY
    from tests.test_launcher import blackbox as launch

    agent = tmp_path / "agent.py"
    agent.write_text(AGENT_WITH_A_TOOL)
    out = tmp_path / "run.json"
    key = {"BLACKBOX_REDACT_KEY": os.environ["BLACKBOX_REDACT_KEY"]}
    result = launch("record", "--out", out, "--policy", policy, "--", PY, agent, env=key)
    assert result.returncode == 0, result.stderr
    assert_clean(out)
    assert load(out).redaction["key"] == load_redactor(policy).key_id  # BLACKBOX_REDACT_KEY reached the agent
    result = launch("replay", out, "--policy", policy, "--", PY, agent, env=key)
    assert result.returncode == 0 and "PASS" in result.stdout, result.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rules]]\nname = "x"\naction = "erase"\npattern = "a"\n')
    result = launch("record", "--out", tmp_path / "no.json", "--policy", bad, "--", PY, agent)
    assert result.returncode == 2 and "rule 1 (x): `action` must be drop, mask or keep" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "no.json").exists()


def test_the_export_sends_content_only_as_the_policy_lets_it(tmp_path: Path, policy: Path,
                                                             capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("opentelemetry.sdk")
    source = tmp_path / "leaky.json"
    bb = blackbox.session("record", out=source)  # recorded before the policy existed
    bb.tools({"lookup_customer": lookup_customer})["lookup_customer"](customer_id=CUSTOMER)
    bb.finish(result=f"mailed {EMAIL}")
    out = tmp_path / "run.otlp.json"
    monkeypatch.setenv("BLACKBOX_POLICY", str(policy))
    code, _, err = run_cli(capsys, "export", source, "--to", "otlp-json", "--out", out, "--content")
    assert code == 0, err
    text = out.read_text()
    assert "[redacted:email:" in text and "[redacted:customer:" in text
    for value in (EMAIL, CARD, CUSTOMER):
        assert value not in text and json.dumps(value)[1:-1] not in text
