"""Typed payload views (blackbox/format/typed.py): every recorded shape reads as its Struct, a payload that does
not fit reads as `Odd` and still loads, hashes and verifies as before, and the lazy and eager views agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from blackbox.format.cassette import Step, StepChain, chain_break, load, loads, save
from blackbox.format.diff import diff, diff_lazy, lazy_outcome
from blackbox.format.lazy import load_lazy, loads_lazy
from blackbox.format.outcome import outcome, payload_problem, summarize_step
from blackbox.format.typed import (
    UNSET,
    FinalAnswerView,
    ModelInputView,
    Odd,
    RunCompletedView,
    RunFailedView,
    SingleToolCallView,
    TextPartView,
    ToolCallsView,
    ToolCallView,
    ToolResultPartView,
    ToolResultView,
    ToolUsePartView,
    calls_in,
    view_of,
)
from blackbox.format.writing import dumps

HERE = Path(__file__).parent / "fixtures"  # the original's fixtures, copied byte for byte, and ours
FAMILIES: dict[str, tuple[type, ...]] = {
    "model_input": (ModelInputView,),
    "model_output": (FinalAnswerView, ToolCallsView, SingleToolCallView),
    "tool_call": (ToolCallView,),
    "tool_result": (ToolResultView,),
    "metadata": (RunCompletedView, RunFailedView),
}


def _cassettes() -> list[Path]:
    roots = [HERE]
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.json")):
            head = msgspec.json.decode(path.read_bytes())
            if isinstance(head, dict) and isinstance(head.get("version"), int) and "steps" in head:
                found.append(path)
    return found


CASSETTES = _cassettes()


def _fields(found: Any) -> dict[str, Any]:
    """A view as the JSON object it read, tags included, absent fields left out."""
    return msgspec.to_builtins(found, enc_hook=float)  # UNSET fields are omitted, a tag field is written


def test_there_are_fixtures_to_view() -> None:
    assert len(CASSETTES) >= 10
    assert any(p.parent.name == "traces" for p in CASSETTES)  # the original's own cassettes among them


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_step_has_a_view_of_its_type(path: Path) -> None:
    """Every step of the original's and the tests' cassettes fits its shape, the view holds the payload's own
    values, the lazy view equals the eager one, and viewing changes no byte."""
    data = path.read_bytes()
    cassette = load(path)
    lazy = load_lazy(path)
    for step, lazy_step in zip(cassette.steps, lazy.steps, strict=True):
        found = step.view()
        assert isinstance(found, FAMILIES[step.type]), (step.index, found)
        for key, value in _fields(found).items():
            if key in step.payload:
                assert msgspec.to_builtins(step.payload[key], enc_hook=float) == value, (step.index, key)
            else:  # a default the payload does not carry (`toolInput` None, `tools` [])
                assert value in (None, [], ""), (step.index, key)
        assert lazy_step.view() == found
    assert chain_break(cassette) is None
    assert loads(data).steps == cassette.steps


def test_the_shapes_the_readers_meet() -> None:
    """Each tag reads as its own Struct; absent fields are UNSET, a recorded null result is None."""
    assert view_of("model_output", {"type": "final_answer", "text": "hi", "stop": "length"}) == \
        FinalAnswerView("hi", "length")
    many = view_of("model_output", {"type": "tool_calls", "calls": [
        {"toolCallId": "call-0", "toolName": "a", "toolInput": {"x": 1}}], "thoughts": [{}]})
    assert isinstance(many, ToolCallsView) and many.text is UNSET
    assert calls_in(many) == [ToolCallView(toolCallId="call-0", toolName="a", toolInput={"x": 1})]
    one = view_of("model_output", {"type": "tool_call", "toolCallId": "call-1", "toolName": "b", "toolInput": []})
    assert one == SingleToolCallView("call-1", "b", [])
    assert calls_in(one) == [ToolCallView(toolCallId="call-1", toolName="b", toolInput=[])]
    ok = view_of("tool_result", {"toolCallId": "call-0", "toolName": "a", "result": None})
    assert isinstance(ok, ToolResultView) and ok.result is None and not ok.failed
    bad = view_of("tool_result", {"toolCallId": "call-0", "toolName": "a", "error": "boom"})
    assert isinstance(bad, ToolResultView) and bad.failed and bad.result is UNSET
    request = view_of("model_input", {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "t"},
                                          {"type": "tool_use", "toolCallId": "c", "toolName": "a", "toolInput": 1}]},
        {"role": "user", "content": [{"type": "tool_result", "toolCallId": "c", "toolName": "a", "error": "e"}]}],
        "tools": [], "model": "m"})
    assert isinstance(request, ModelInputView) and request.model == "m" and request.systemPrompt is UNSET
    assert [type(p) for m in request.messages[1:] for p in m.content] == \
        [TextPartView, ToolUsePartView, ToolResultPartView]
    failed = view_of("metadata", {"event": "run_failed", "status": "error", "reason": "process_exit", "exitCode": 3})
    assert isinstance(failed, RunFailedView) and failed.exitCode == 3


ODD: list[tuple[str, Any, str | None]] = [
    ("model_input", "not an object", None),
    ("model_input", {"messages": "many"}, None),
    ("model_input", {"messages": [{"role": "user", "content": [{"type": "image"}]}], "tools": []}, None),
    ("model_output", {"type": "tool_calls", "calls": "many"}, "tool_calls"),
    ("model_output", {"type": "tool_calls", "calls": [{"toolName": 3}]}, "tool_calls"),
    ("model_output", {"type": "a_future_kind", "text": "x"}, "a_future_kind"),
    ("model_output", {"text": "no type"}, None),
    ("model_output", [1, 2], None),
    ("tool_call", {"toolCallId": "call-0", "toolInput": "no name"}, None),
    ("tool_call", {"toolCallId": "call-0", "toolName": ["not", "a", "name"]}, None),
    ("tool_result", {"toolCallId": 7, "toolName": "a", "result": 1}, None),
    ("tool_result", {"toolCallId": "call-0", "result": 1}, None),
    ("tool_result", None, None),
    ("metadata", {"event": "run_paused"}, "run_paused"),
    ("metadata", {"event": 5}, None),
    ("metadata", "\ud800", None),
]


@pytest.mark.parametrize(("kind", "payload", "tag"), ODD, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(ODD)])
def test_a_payload_that_does_not_fit_is_odd(kind: str, payload: Any, tag: str | None) -> None:
    found = view_of(kind, payload)
    assert isinstance(found, Odd) and found.tag == tag
    assert "does not fit" in found.why or "surrogate" in found.why


def _odd_cassette() -> bytes:
    chain = StepChain("odd-run")
    for i, (kind, payload, _) in enumerate(ODD):
        chain.append(kind, 1_700_000_000_000 + i, payload)  # type: ignore[arg-type]
    chain.append("tool_call", 1_700_000_000_100, {"toolCallId": "call-9", "toolName": "search", "toolInput": 1.5})
    chain.append("metadata", 1_700_000_000_200, {"event": "run_completed", "status": "success", "result": 2.0})
    return dumps(chain.cassette(1_700_000_000_000))


def test_odd_payloads_load_hash_and_verify_as_before(tmp_path: Path) -> None:
    """Viewing is reading: a cassette of payloads that fit no shape loads, keeps its chain, saves to the same
    bytes and verifies; its summaries and outcome read the views without a crash, eager and lazy alike."""
    from blackbox.format.verify import verify

    path = tmp_path / "odd.json"
    before = _odd_cassette()
    path.write_bytes(before)
    cassette = load(path)
    unviewed = dumps(load(path))
    assert chain_break(cassette) is None
    summaries = [summarize_step(step) for step in cassette.steps]
    assert summaries[3] == "Model → tool_calls: (calls is not a list)"
    assert summaries[4] == "Model → tool_calls: (unreadable calls)"
    assert summaries[5] == "Model → (unknown output)"
    assert summaries[8:10] == ["Tool called: ?", "Tool called: ?"]
    assert summaries[12] == "Tool result: ? → (unreadable payload)"
    assert summaries[13] == "Metadata: run_paused"
    assert [i for i, s in enumerate(cassette.steps) if payload_problem(s)] == [3]
    save(cassette, path)
    assert path.read_bytes() == unviewed  # no view leaked into the payloads
    assert outcome(cassette) == lazy_outcome(loads_lazy(before))
    assert outcome(cassette).tools == ("?", "?", "search") and outcome(cassette).final_answer == "2"
    report = verify(cassette)
    assert [(c.name, c.status) for c in report.checks if c.name == "hash_chain"] == [("hash_chain", "pass")]
    assert next(c for c in report.checks if c.name == "replayability").step == 3


def test_lazy_and_eager_views_agree_on_every_odd_payload() -> None:
    data = _odd_cassette()
    eager, lazy = loads(data), loads_lazy(data)
    assert [s.view() for s in eager.steps] == [s.view() for s in lazy.steps]
    assert diff(eager, eager).to_dict() == diff_lazy(lazy, lazy).to_dict()


def test_a_step_is_viewed_not_changed() -> None:
    payload = {"toolCallId": "call-0", "toolName": "a", "toolInput": {"deep": [1]}, "mcp": {"server": "s"}}
    step = Step("id", 0, "tool_call", 1, payload, None, "h")
    found = step.view()
    assert view_of("tool_result", {"toolName": "a", "result": 1}) == ToolResultView("a", result=1)  # no id: ""
    assert found == ToolCallView(toolCallId="call-0", toolName="a", toolInput={"deep": [1]})
    assert step.payload == {"toolCallId": "call-0", "toolName": "a", "toolInput": {"deep": [1]},
                            "mcp": {"server": "s"}}
    assert list(step.payload) == ["toolCallId", "toolName", "toolInput", "mcp"]  # field order kept


def test_the_views_are_generated_from_the_one_declaration() -> None:
    """`format/payloads` declares the shapes once; the readers' Structs are generated from it."""
    from blackbox.format import view_maker

    written = (Path(__file__).parent.parent / "blackbox" / "format" / "payload_views.py").read_text(encoding="utf-8")
    assert written == view_maker.generate(), (
        "blackbox/format/payload_views.py is stale: python -m blackbox.format.view_maker > "
        "blackbox/format/payload_views.py")


def test_every_key_a_writer_writes_is_a_field_a_reader_reads() -> None:
    import typing

    from blackbox.format import payload_views, payloads

    for shape in payloads.SHAPES.values():
        read = payload_views.__dict__[f"{shape.__name__}View"]
        fields = {f.encode_name for f in msgspec.structs.fields(read)}
        tag = read.__struct_config__.tag_field
        assert set(typing.get_type_hints(shape)) == fields | ({tag} if tag else set()), shape.__name__
