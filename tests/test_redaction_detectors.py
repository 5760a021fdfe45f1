"""The built-in detectors on realistic text (what each must find, and what it must leave alone), the policy
file's one-line errors, and the redactor's rules: where, what, drop / mask / keep, stable tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox.live.redaction import active_redactor, load_redactor
from blackbox.redaction.apply import Redactor
from blackbox.redaction.detectors import DETECTORS, luhn_ok
from blackbox.redaction.policy import PolicyError, policy_from_table

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
FOUND = {
    "email": [("Write to jane.doe+billing@example.co.uk today", "jane.doe+billing@example.co.uk"),
              ("From: ops@mail.acme-corp.io", "ops@mail.acme-corp.io")],
    "phone": [("Call +1 415 555 0132 after 5", "+1 415 555 0132"), ("tel (212) 555-0199.", "(212) 555-0199"),
              ("+44 20 7946 0958", "+44 20 7946 0958"), ("office 650-253-0000", "650-253-0000")],
    "card": [("paid with 4111 1111 1111 1111 yesterday", "4111 1111 1111 1111"),
             ("card=5555555555554444;", "5555555555554444"), ("amex 3782-822463-10005", "3782-822463-10005"),
             ("v2.0 4111 1111 1111 1111", "4111 1111 1111 1111")],  # after digits it may not follow
    "jwt": [(f"token {JWT} end", JWT)],
    "credential": [("Authorization: Bearer 9f8e7d6c5b4a39281706abcdef", "Bearer 9f8e7d6c5b4a39281706abcdef"),
                   ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Basic YWxhZGRpbjpvcGVuc2VzYW1l")],
    "cloud-key": [("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
                  ("key=AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
                  ("gh ghp_" + "a1B2" * 9 + " x", "ghp_" + "a1B2" * 9),
                  ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                   "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")],
    "private-key": [("x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\ny",
                     "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"),
                    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz (cut)", "-----BEGIN OPENSSH PRIVATE KEY-----\n"
                     "b3BlbnNz (cut)")],
    "url-credentials": [("DATABASE_URL=postgres://admin:hunter2@db.internal:5432/app", "admin:hunter2"),
                        ("https://bot:tok3n@git.example.com/repo.git", "bot:tok3n")],
    "ip": [("connect to 10.20.30.40:8080", "10.20.30.40"), ("from 192.168.1.254.", "192.168.1.254"),
           ("v6 2001:db8::8a2e:370:7334 seen", "2001:db8::8a2e:370:7334"), ("::ffff:10.0.0.1 is mapped", None)],
}

LEFT_ALONE = {
    "email": ["use the @decorator syntax", "user@localhost", "see docs@ or email me", "a@b"],
    "phone": ["on 2026-12-03 at 12:30:45", "version 1.2.3", "order 1733212345678 shipped", "ISBN 978-3-16"],
    "card": ["timestamp 1733212345678", "order 1234567812345678", "4111 1111 1111 1112", "0000000000000000"],
    "jwt": ["eyJ is how base64 JSON starts", "eyJhbGci.eyJzdWIi.x"],
    "credential": ["Bearer authentication is described in RFC 6750", "basic questions", "Basic notanything"],
    "cloud-key": ["AKIA is the prefix of AWS keys", "sk-short", "the ghp_ prefix"],
    "private-key": ["-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "a private key is secret"],
    "url-credentials": ["https://example.com/a:b@c", "mailto:someone@example.com", "https://host:8080/path"],
    "ip": ["v1.2.3.4 released", "999.1.1.1", "12:30:45", "de:ad:be:ef:00:01", "pi is 3.14159"],
}


def found(name: str, text: str) -> list[str]:
    return [text[a:b] for a, b in DETECTORS[name].spans(text)]


@pytest.mark.parametrize(("name", "text", "value"), [(n, t, v) for n, cases in FOUND.items() for t, v in cases])
def test_each_detector_finds_its_values_in_realistic_text(name: str, text: str, value: str | None) -> None:
    assert found(name, text) == ([value] if value is not None else found(name, text)) and found(name, text)


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, cases in LEFT_ALONE.items() for t in cases])
def test_each_detector_leaves_lookalikes_alone(name: str, text: str) -> None:
    assert found(name, text) == []


def test_luhn() -> None:
    assert luhn_ok("4111111111111111") and luhn_ok("79927398713") and not luhn_ok("4111111111111112")


# ---------------------------------------------------------------------------------------------------------
# the policy file


@pytest.mark.parametrize(("table", "message"), [
    ({"rules": [{"name": "x", "action": "erase", "pattern": "a"}]}, "rule 1 (x): `action` must be drop, mask or keep"),
    ({"rules": [{"name": "Bad_Name", "action": "mask", "pattern": "a"}]}, "rule 1: `name` must be"),
    ({"rules": [{"name": "x", "action": "mask", "pattern": "("}]}, "rule 1 (x): `pattern` is not a regular expression"),
    ({"rules": [{"name": "x", "action": "mask", "detector": "ssn"}]}, "rule 1 (x): `detector` must be one of"),
    ({"rules": [{"name": "x", "action": "mask", "path": "a..[b"}]}, "rule 1 (x): `path` is not a JSON path"),
    ({"rules": [{"name": "x", "action": "mask"}]}, "rule 1 (x): a rule that redacts whole values needs"),
    ({"rules": [{"name": "x", "action": "mask", "pattern": "a", "colour": "red"}]},
     "rule 1 (x): unknown field `colour`"),
    ({"rules": [{"name": "x", "action": "mask", "pattern": "a"}, {"name": "x", "action": "keep", "pattern": "b"}]},
     "rule 2 (x): `name` is used by an earlier rule"),
    ({"rules": [{"name": "x", "action": "mask", "pattern": "a*"}]}, "rule 1 (x): `pattern` matches the empty string"),
    ({"detectors": ["email", "passport"]}, "the policy: `detectors` names an unknown detector"),
])
def test_a_wrong_policy_is_one_line_naming_the_rule_and_the_field(table: dict, message: str) -> None:
    with pytest.raises(PolicyError) as caught:
        policy_from_table(table, "p.toml")
    text = str(caught.value)
    assert "\n" not in text and text.startswith("policy p.toml: ") and message in text


def test_a_policy_file_that_is_not_toml_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "policy.toml"
    bad.write_text('detectors = ["email"]\n[[rules]\nname = 1\n')
    with pytest.raises(PolicyError, match=r"policy .*policy.toml: not valid TOML at line 2"):
        load_redactor(bad, env={})


def test_the_policy_is_found_in_pyproject_and_blackbox_policy_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.blackbox.redact]\ndetectors = ["email"]\n')
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    found_here = active_redactor(env={}, cwd=sub)
    assert found_here is not None and found_here.policy.names == ["email"]
    other = tmp_path / "other.toml"
    other.write_text('detectors = ["ip"]\n')
    named = active_redactor(env={"BLACKBOX_POLICY": str(other)}, cwd=sub)
    assert named is not None and named.policy.names == ["ip"]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert active_redactor(env={}, cwd=sub) is None


def test_the_key_comes_from_blackbox_redact_key_or_the_key_file(tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text('detectors = ["email"]\nkey-file = "redact.key"\n')
    with pytest.raises(PolicyError, match=r"`key-file` .*redact.key: cannot read it"):
        load_redactor(policy, env={})
    (tmp_path / "redact.key").write_text("0123456789abcdef0123456789abcdef\n")
    from_file = load_redactor(policy, env={})
    from_env = load_redactor(policy, env={"BLACKBOX_REDACT_KEY": "another key of enough length"})
    assert from_file.key_id != from_env.key_id != "unkeyed"
    with pytest.raises(PolicyError, match="BLACKBOX_REDACT_KEY is too short"):
        load_redactor(policy, env={"BLACKBOX_REDACT_KEY": "short"})
    mail = {"toolCallId": "call-0", "toolName": "t", "result": "bob@example.com"}
    assert from_file("tool_result", mail) != from_env("tool_result", mail)


# ---------------------------------------------------------------------------------------------------------
# rules


def redactor(rules: list[dict], detectors: list[str] | None = None) -> Redactor:
    table: dict = {"rules": rules}
    if detectors is not None:
        table["detectors"] = detectors
    return Redactor(policy_from_table(table, "t"), b"k" * 16, "test")


def test_mask_is_a_stable_token_drop_a_bare_mark_keep_an_exception() -> None:
    r = redactor([{"name": "loopback", "action": "keep", "pattern": r"127\.0\.0\.1"},
                  {"name": "ticket", "action": "drop", "pattern": r"TICKET-\d+"}], ["ip", "email"])
    out = r("model_input", {"messages": [{"role": "user", "content":
                                          "a@example.com 10.0.0.7 127.0.0.1 TICKET-42 a@example.com"}], "tools": []})
    text = out["messages"][0]["content"]
    tokens = text.split()
    assert tokens[0] == tokens[4] and tokens[0].startswith("[redacted:email:") and len(tokens[0]) == 33
    assert tokens[1].startswith("[redacted:ip:") and tokens[2] == "127.0.0.1" and tokens[3] == "[redacted:ticket]"
    assert r("model_input", out) == out  # a redacted payload stays as it is


def test_a_tool_rule_covers_the_arguments_and_results_wherever_they_appear() -> None:
    r = redactor([{"name": "vault", "action": "mask", "tool": "read_vault"}], [])
    call = r("tool_call", {"toolCallId": "call-0", "toolName": "read_vault", "toolInput": {"item": "db"}})
    result = r("tool_result", {"toolCallId": "call-0", "toolName": "read_vault", "result": {"password": "pw"}})
    history = r("model_input", {"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "toolCallId": "call-0", "toolName": "read_vault",
                                           "toolInput": {"item": "db"}}]},
        {"role": "user", "content": [{"type": "tool_result", "toolCallId": "call-0", "toolName": "read_vault",
                                      "result": {"password": "pw"}}]}], "tools": []})
    assert call["toolName"] == "read_vault" and call["toolCallId"] == "call-0"
    assert history["messages"][0]["content"][0]["toolInput"] == call["toolInput"]
    assert history["messages"][1]["content"][0]["result"] == result["result"]
    other = r("tool_result", {"toolCallId": "call-1", "toolName": "search", "result": {"password": "pw"}})
    assert other["result"] == {"password": "pw"}


def test_paths_and_headers_name_places() -> None:
    r = redactor([{"name": "customer", "action": "mask", "path": "tool_result.result.customers[*].name"},
                  {"name": "session", "action": "drop", "header": "X-Session"}], [])
    out = r("tool_result", {"toolCallId": "call-0", "toolName": "crm", "result": {
        "customers": [{"name": "Ada Lovelace", "plan": "pro"}], "headers": {"x-session": "abc", "accept": "json"}}})
    assert out["result"]["customers"][0]["name"].startswith("[redacted:customer:")
    assert out["result"]["customers"][0]["plan"] == "pro"
    assert out["result"]["headers"] == {"x-session": "[redacted:session]", "accept": "json"}


def test_structure_is_never_redacted() -> None:
    r = redactor([{"name": "everything", "action": "mask", "pattern": ".+"}], [])
    out = r("model_output", {"type": "tool_calls", "calls": [{"toolCallId": "call-0", "toolName": "get_weather",
                                                               "toolInput": {"city": "Paris"}}]})
    assert out["type"] == "tool_calls" and out["calls"][0]["toolName"] == "get_weather"
    assert out["calls"][0]["toolCallId"] == "call-0" and "Paris" not in str(out["calls"][0]["toolInput"])
