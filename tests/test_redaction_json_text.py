"""A tool result the agent sends to the model as `json.dumps(...)` text, recorded under a policy whose path rule
reads it as JSON: the masked values are replaced where they stand, the rest of the text kept byte for byte, so
the replay (which hands the agent the marks and lets it `json.dumps` them again) sends the recorded text.
Through the real anthropic and openai SDKs against the fake API; and the same promise as a property over any
JSON value and any `json.dumps` options."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from blackbox.redaction.apply import Redactor
from blackbox.redaction.policy import policy_from_table
from tests.agents.loops import anthropic_agent, openai_agent
from tests.fakeapi import FakeAPI, anthropic_message, chat_completion, turn_brain
from tests.test_redaction_sessions import clean_environment

pytest_plugins = ["tests.conftest_fakeapi"]

EMAIL = "jose.nunez@example.com"
CUSTOMER = "CUST-884422"
TOKEN = "sk-test-" + "4eC39HqLyjWDarjtT1zdp7dc" * 2
POLICY = """
detectors = ["email", "phone", "card", "jwt", "credential", "cloud-key", "private-key", "url-credentials", "ip"]
[[rules]]
name = "customer-id"
action = "mask"
pattern = "CUST-[0-9]{6}"
[[rules]]
name = "crm-notes"
action = "drop"
tool = "lookup_customer"
path = "notes"
"""
DUMPS: dict[str, Callable[[Any], str]] = {
    "json.dumps": json.dumps,
    "indent=2": lambda value: json.dumps(value, indent=2),
    "indent=2, ensure_ascii=False": lambda value: json.dumps(value, indent=2, ensure_ascii=False),
}


def lookup_customer(customer_id: str) -> dict[str, Any]:
    """Masked values beside text with escapes: non-ASCII (\\u00e9), an emoji (a surrogate pair), a quote."""
    return {"id": customer_id, "name": "José Núñez", "email": EMAIL, "notes": "VIP since 1999",
            "memo": f'Café owner 🙂, "mail {EMAIL} first", key {TOKEN}', "visits": [3, 1.5, None, True]}


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    clean_environment(monkeypatch)
    path = tmp_path / "redact.toml"
    path.write_text(POLICY)
    yield path


SCHEMA = {"type": "object", "properties": {"customer_id": {"type": "string"}}}


def anthropic_run(bb: blackbox.Session, fake: FakeAPI, dumps: Callable[[Any], str]) -> str:
    import anthropic

    client = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake.url, api_key="test-key", max_retries=0)
    return anthropic_agent(client, bb.tools({"lookup_customer": lookup_customer}), f"Look up {CUSTOMER}",
                           tool_defs=[{"name": "lookup_customer", "input_schema": SCHEMA}], dumps=dumps)


def openai_run(bb: blackbox.Session, fake: FakeAPI, dumps: Callable[[Any], str]) -> str:
    import openai

    client = openai.OpenAI(http_client=bb.http_client(), base_url=fake.openai_url, api_key="test-key", max_retries=0)
    return openai_agent(client, bb.tools({"lookup_customer": lookup_customer}), f"Look up {CUSTOMER}", tool_defs=[
        {"type": "function", "function": {"name": "lookup_customer", "parameters": SCHEMA}}], dumps=dumps)


BRAINS = {
    "anthropic": (anthropic_run, lambda: turn_brain([
        anthropic_message(tool_uses=[("lookup_customer", {"customer_id": CUSTOMER})]),
        anthropic_message(text="Found them.")])),
    "openai": (openai_run, lambda: turn_brain([
        chat_completion(tool_calls=[("lookup_customer", {"customer_id": CUSTOMER})]),
        chat_completion(content="Found them.")])),
}


@pytest.mark.parametrize("style", list(DUMPS))
@pytest.mark.parametrize("provider", list(BRAINS))
def test_a_redacted_json_text_tool_result_replays(fake_api: FakeAPI, tmp_path: Path, policy: Path, provider: str,
                                                  style: str) -> None:
    run, brain = BRAINS[provider]
    dumps = DUMPS[style]
    fake_api.brain = brain()
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out, policy=policy)
    assert run(bb, fake_api, dumps) == "Found them."
    bb.finish()
    text = out.read_text()
    for value in (EMAIL, CUSTOMER, TOKEN, "VIP since 1999"):
        assert value not in text
    cassette = load(out)
    assert verify(cassette).ok
    result = next(s.payload["result"] for s in cassette.steps if s.type == "tool_result")
    sent = [s.payload for s in cassette.steps if s.type == "model_input"][-1]["messages"][-1]
    sent_text = sent["content"][0]["result"]  # both SDKs' tool results, as a neutral tool_result part
    # the agent's own text, only the masked values changed: what it sends when handed the recorded result
    assert sent_text == dumps(result) and "[redacted:crm-notes]" in sent_text

    fake_api.reset()
    bb = blackbox.session("replay", cassette=out, policy=policy)
    assert run(bb, fake_api, dumps) == "Found them."
    assert bb.finish().status == "success"
    assert not fake_api.requests


# -- the same promise over any value and any json.dumps options -------------------------------------------

_PLANTED = st.sampled_from([EMAIL, CUSTOMER, TOKEN, "10.44.0.9", "4111 1111 1111 1111"])
_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_STRINGS = st.one_of(_TEXT, st.tuples(_TEXT, _PLANTED, _TEXT).map(lambda t: f"{t[0]} {t[1]} {t[2]}"))
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False), _STRINGS),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_STRINGS, inner, max_size=3)),
    max_leaves=10)
# (not sort_keys: a masked key sorts elsewhere than its value did, so no text could be both)
_OPTIONS = st.fixed_dictionaries({"indent": st.sampled_from([None, 0, 2, "\t"]), "ensure_ascii": st.booleans(),
                                  "separators": st.sampled_from([None, (",", ":"), (" ,", " : ")])})
REDACTOR = Redactor(policy_from_table({"rules": [
    {"name": "customer-id", "action": "mask", "pattern": "CUST-[0-9]{6}"},
    {"name": "crm-notes", "action": "drop", "tool": "lookup", "path": "**.notes"}]}, "test"), b"k" * 32, "test")


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(_STRINGS, _VALUES, max_size=4).map(lambda d: {**d, "notes": d}), options=_OPTIONS)
def test_the_text_the_agent_sends_is_the_dumps_of_the_redacted_result(value: dict[str, Any],
                                                                      options: dict[str, Any]) -> None:
    """For any result: the redacted text of `json.dumps(result, **options)` in the model's request is
    `json.dumps(<the redacted result>, **options)`, so a replay sends exactly what was recorded."""
    sent = json.dumps(value, **options)
    request = {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "toolCallId": "call-0", "toolName": "lookup", "result": sent}]}]}
    recorded = REDACTOR("model_input", request)["messages"][0]["content"][0]["result"]
    result = REDACTOR("tool_result", {"toolCallId": "call-0", "toolName": "lookup", "result": value})["result"]
    assert recorded == json.dumps(result, **options)
    assert REDACTOR("model_input", {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "toolCallId": "call-0", "toolName": "lookup", "result": recorded}]}]}
    )["messages"][0]["content"][0]["result"] == recorded  # applying the policy again changes nothing
