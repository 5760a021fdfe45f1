"""The redactor's walk: a payload nested 2,500 levels deep (deeper than Python's recursion limit) is walked
without a RecursionError and every kind of rule still finds what is planted at the bottom; a string too long
for the cache is still redacted; what no rule can change is shared, not copied."""

from __future__ import annotations

from typing import Any

from blackbox.redaction.apply import Redactor
from blackbox.redaction.policy import policy_from_table

DEPTH = 2_500
EMAIL = "grace.hopper@navy.example.com"


def nested(leaf: Any, depth: int = DEPTH) -> Any:
    for level in range(depth):
        leaf = {"level": [leaf]} if level % 2 else [{"level": leaf}]
    return leaf


def bottom(value: Any) -> Any:
    for level in range(DEPTH - 1, -1, -1):
        value = value[0]["level"] if not level % 2 else value["level"][0]
    return value


def redactor(rules: list[dict[str, Any]]) -> Redactor:
    return Redactor(policy_from_table({"detectors": ["email"], "rules": rules}, "test"), b"k" * 32, "test")


def test_every_kind_of_rule_reaches_the_bottom_of_a_deep_payload() -> None:
    policy = redactor([{"name": "notes", "action": "drop", "path": "**.notes"},
                       {"name": "session", "action": "mask", "header": "x-session"},
                       {"name": "ticket", "action": "mask", "pattern": "T-[0-9]{6}"}])
    leaf = {"mail": f"write to {EMAIL}", "notes": "VIP since 1999", "x-session": "s3ss10n", "ticket": "T-123456"}
    payload = {"toolCallId": "call-1", "toolName": "lookup", "result": nested(leaf)}
    out = bottom(policy("tool_result", payload)["result"])
    assert EMAIL not in out["mail"] and out["mail"].startswith("write to [redacted:email:")
    assert out["notes"] == "[redacted:notes]"
    assert out["x-session"].startswith("[redacted:session:") and out["ticket"].startswith("[redacted:ticket:")
    assert bottom(payload["result"]) == leaf  # the payload given is never modified


def test_a_deep_payload_with_nothing_to_redact_comes_back_as_it_was() -> None:
    payload = {"toolCallId": "call-1", "toolName": "lookup", "result": nested({"note": "nothing personal"})}
    assert redactor([{"name": "notes", "action": "drop", "path": "**.notes"}])("tool_result", payload) is payload


def test_a_deep_value_a_rule_masks_whole_gets_its_stable_token() -> None:
    policy = redactor([{"name": "blob", "action": "mask", "path": "**.blob"}])
    payload = {"toolCallId": "call-1", "toolName": "lookup",
               "result": {"a": nested({"blob": nested(EMAIL)}), "b": {"blob": nested(EMAIL)}}}
    out = policy("tool_result", payload)["result"]
    assert bottom(out["a"])["blob"] == out["b"]["blob"] and out["b"]["blob"].startswith("[redacted:blob:")


def test_a_string_longer_than_the_cache_keeps_is_still_redacted() -> None:
    policy = redactor([])
    long = "x" * 40_000 + f" mail {EMAIL}"
    for _ in range(2):  # the second time the string is new to the cache again
        out = policy("tool_result", {"toolCallId": "call-1", "toolName": "lookup", "result": {"text": long}})
        assert EMAIL not in out["result"]["text"] and "[redacted:email:" in out["result"]["text"]


def test_the_history_a_rule_cannot_change_is_shared_not_copied() -> None:
    policy = redactor([{"name": "notes", "action": "drop", "tool": "lookup", "path": "notes"}])
    quiet = [{"role": "user", "content": f"turn {n}: the weather in Lisbon"} for n in range(6)]
    loud = {"role": "user", "content": [{"type": "tool_result", "toolCallId": "c", "toolName": "lookup",
                                         "result": {"notes": "VIP", "mail": EMAIL}}]}
    payload = {"messages": [*quiet, loud]}
    out = policy("model_input", payload)
    assert all(a is b for a, b in zip(out["messages"][:6], quiet, strict=True))
    assert out["messages"][6]["content"][0]["result"] == {"notes": "[redacted:notes]",
                                                          "mail": out["messages"][6]["content"][0]["result"]["mail"]}
    assert EMAIL not in out["messages"][6]["content"][0]["result"]["mail"]
