"""diff (docs/format.md, "Diff, assert, inspect and list") on the original's fixtures, and the changed-field paths
the TUI shows."""

from __future__ import annotations

from blackbox.format.canonical import JSFloat, json_value
from blackbox.format.cassette import StepChain, load
from blackbox.format.diff import diff, step_changes
from blackbox.format.firstdiff import Difference, first_difference, format_value, json_equal
from tests.conftest import FIXTURES

TRACES, FLEET = FIXTURES / "traces", FIXTURES / "fleet-triage" / "cassettes"


def test_fork_parent_and_child_diverge_at_3() -> None:
    report = diff(load(TRACES / "fork-parent.v2.json"), load(TRACES / "fork-child.v2.json"))
    assert report.first_divergence == 3 and report.shared_prefix == 3
    assert report.rows[:3] == ["same"] * 3 and report.rows[3] == "changed" and report.rows[-1] == "only_a"
    assert len(report.rows) == 15
    assert report.changed_value is not None and report.changed_value.key == "result"
    assert {f.path for f in report.changed_fields} >= {"result.available", "result.message"}
    assert report.verdict.kind == "answer_changed"
    assert not report.a_is_prefix and not report.b_is_prefix


def test_fleet_incident_and_hypothesis_diverge_at_5() -> None:
    report = diff(load(FLEET / "triage-incident.json"), load(FLEET / "triage-hypothesis.json"))
    assert report.first_divergence == 5
    assert len(report.changed_fields) == 6


def test_semantic_diff_of_separate_recordings() -> None:
    a, b = load(FLEET / "triage-incident.json"), load(FLEET / "triage-fixed.json")
    assert diff(a, b, semantic=True).first_divergence == 5
    assert diff(a, b).first_divergence == 0


def test_identical_and_prefix() -> None:
    a = load(TRACES / "fork-parent.v2.json")
    same = diff(a, a)
    assert same.first_divergence is None and same.verdict.kind == "no_change" and set(same.rows) == {"same"}
    shorter = load(TRACES / "fork-parent.v2.json")
    shorter.steps = shorter.steps[:5]
    report = diff(shorter, a)
    assert report.first_divergence == 5 and report.a_is_prefix and report.step_a is None
    assert report.verdict.kind == "status_flipped" and "incomplete → " in report.verdict.text


def _run(tools: list[str], answer: str, failed: str | None = None):
    chain = StepChain("r")
    for i, name in enumerate(tools):
        chain.append("tool_call", 0, {"toolCallId": f"call-{i}", "toolName": name, "toolInput": {}})
    end = {"event": "run_failed", "status": "error", "reason": failed} if failed else \
        {"event": "run_completed", "status": "success", "result": answer}
    chain.append("metadata", 0, end)
    return chain.cassette(0)


def test_verdicts() -> None:
    assert diff(_run(["a"], "x"), _run(["a", "b"], "x")).verdict.kind == "path_changed"
    assert "a → b" in diff(_run(["a"], "x"), _run(["a", "b"], "x")).verdict.text
    assert diff(_run([], "x", "p"), _run([], "x", "q")).verdict.kind == "reason_changed"
    assert diff(_run([], "x"), _run([], "x", "q")).verdict.kind == "status_flipped"


def test_step_changes_with_absent_sides() -> None:
    a = StepChain("a").append("tool_result", 0, json_value({"result": {"x": [1, 2], "y": "s"}}))
    b = StepChain("b").append("tool_result", 0, json_value({"result": {"x": [1, 3, 4], "z": None}}))
    changes = step_changes(a, b)
    assert [(c.path, c.old_present, c.new_present) for c in changes] == [
        ("result.x[1]", True, True), ("result.x[2]", False, True), ("result.y", True, False),
        ("result.z", False, True)]
    assert step_changes(a, None)[0].path == "(root)"
    assert len(step_changes(a, b, limit=2)) == 2


def test_first_difference_paths() -> None:
    rec = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "tools": []}
    act = {"messages": [{"role": "user", "content": [{"type": "text", "text": "ho"}]}], "tools": []}
    d = first_difference(rec, act)
    assert d is not None and d.path == "messages[0].content[0].text"
    d = first_difference({"a": 1}, {"a": 1, "b": 2})
    assert d is not None and d.path == "b" and not d.old_present and format_value(d.old, False) == "(absent)"
    assert first_difference(1, 1.0) is None and first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None
    assert first_difference([1, 2], [2, 1]) is not None
    d = first_difference(True, 1)
    assert d is not None and d.path == "(root)"
    assert not json_equal(0, False) and json_equal([1.0], [1])


def test_format_value_masks_and_cuts() -> None:
    assert "[redacted]" in format_value({"k": "sk-ant-" + "x" * 30}, True, env={})
    assert "secretvalue1" not in format_value("a secretvalue1", True, env={"OPENAI_API_KEY": "secretvalue1"})
    assert len(format_value("y" * 500)) == 200


def test_first_difference_equal_looking_values_python_equates() -> None:
    """Python's `==` (the fast path's first test) equates these; JSON equality does not."""
    d = first_difference({"m": [{"stream": False, "n": 1}]}, {"m": [{"stream": 0, "n": True}]})
    assert d is not None and d.path == "m[0].n"
    assert first_difference({"a": 2**53 + 1}, {"a": 2**53}) is not None  # the same canonical text, not equal
    nan = JSFloat("nan")
    same = {"x": [nan]}
    assert first_difference(same, same) is not None  # NaN is never JSON-equal, not even to itself
    assert first_difference({"x": [1, {"y": json_value(2.0)}]}, {"x": [1.0, {"y": 2}]}) is None


def test_replay_and_diff_report_a_difference_as_one_type() -> None:
    """Replay's first difference and diff's changed fields are the same struct, with the same sides."""
    chain = StepChain("t")
    chain.append("tool_result", 1, {"toolCallId": "call-1", "toolName": "search", "result": {"n": 1}})
    a = chain.cassette(0).steps[0]
    chain = StepChain("t")
    chain.append("tool_result", 1, {"toolCallId": "call-1", "toolName": "search", "result": {"n": 2}})
    b = chain.cassette(0).steps[0]
    replayed = first_difference(a.payload, b.payload)
    (changed,) = step_changes(a, b)
    assert type(replayed) is type(changed) is Difference
    assert replayed == changed == Difference("result.n", 1, 2)
