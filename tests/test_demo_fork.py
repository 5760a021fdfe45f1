"""The built-in demo fork: the original's fork fixture reproduced, its rules, and every refusal."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from blackbox.cli import app
from blackbox.demo import demo_pair
from blackbox.demo.clock import frozen
from blackbox.demo.fork import DEFAULT_PAYLOAD, demo_fork, parse_payload_json
from blackbox.demo.model import ScriptedModel
from blackbox.demo.scenarios import record_error, record_success
from blackbox.errors import CassetteError, UsageError
from blackbox.format.cassette import Cassette, chain_break, load, save
from blackbox.format.outcome import outcome
from blackbox.format.writing import dumps
from tests.conftest import FIXTURES

PARENT = FIXTURES / "traces" / "fork-parent.v2.json"
CHILD = FIXTURES / "traces" / "fork-child.v2.json"
# The original's fixture generator continued with a scripted answer, not the reactive model.
FIXTURE_ANSWER = "No hotels available for Alice this weekend. The area is fully booked — consider a different date."


def _fixture_fork(out: Path) -> Cassette:
    return demo_fork(PARENT, out, fork_index=4, mutation_step=3, payload=DEFAULT_PAYLOAD, clock=frozen(0),
                     model=ScriptedModel([{"type": "final_answer", "text": FIXTURE_ANSWER}]))


def test_reproduces_the_original_fork_fixture(tmp_path: Path) -> None:
    child = _fixture_fork(tmp_path / "child.json")
    expected = load(CHILD)
    assert [s.hash for s in child.steps] == [s.hash for s in expected.steps]
    assert [s.payload for s in child.steps] == [s.payload for s in expected.steps]
    assert (child.id, child.createdAt, child.parentId, child.forkedFromStepId) == (
        expected.id, expected.createdAt, expected.parentId, expected.forkedFromStepId)
    # The copied prefix keeps the parent's step ids (docs/format.md, "Steps"); the original's fixture generator renamed
    # every id after forking.  With that renaming the bytes are the fixture's, key order and dash included.
    assert [s.id for s in child.steps[:3]] == [f"fixture-fork-parent:{i}" for i in range(3)]
    renamed = msgspec.structs.replace(
        child, steps=[msgspec.structs.replace(s, id=f"{child.id}:{s.index}") for s in child.steps])
    assert dumps(renamed) == CHILD.read_bytes()
    assert (tmp_path / "child.json").read_bytes() == dumps(child)


def test_mutated_steps_keep_their_timestamps_and_new_steps_take_the_clock(tmp_path: Path) -> None:
    ticks = iter(range(1000, 2000))
    parent = record_success(clock=lambda: next(ticks))
    save(parent, tmp_path / "parent.json")
    child = demo_fork(tmp_path / "parent.json", tmp_path / "child.json", clock=frozen(5))
    assert child.steps[:3] == parent.steps[:3]
    assert child.steps[3].timestamp == parent.steps[3].timestamp
    assert child.steps[3].hash != parent.steps[3].hash
    assert [s.timestamp for s in child.steps[4:]] == [5, 5, 5]
    assert child.createdAt == parent.createdAt
    assert chain_break(child) is None


def test_default_continuation_reacts_to_the_new_result(tmp_path: Path) -> None:
    parent, fork = demo_pair(tmp_path)
    child = load(fork)
    assert (parent.name, fork.name, child.id, len(child.steps)) == (
        "example-trace.json", "example-run-001-fork.json", "example-run-001-fork", 7)
    assert outcome(child).final_answer == (
        'Based on the search result, no options are available: "No hotels available for that date.". '
        "I could not complete the booking.")
    assert list(child.steps[3].payload) == ["toolName", "result", "toolCallId"]
    history = child.steps[4].payload["messages"]
    assert history[-1]["content"][0]["result"] == DEFAULT_PAYLOAD
    assert history[-2]["content"][0]["toolInput"] == {"query": "weekend hotels"}
    assert chain_break(load(parent)) is None and chain_break(child) is None

    other = demo_fork(parent, tmp_path / "other.json", payload={"results": [{"title": "Inn"}]})
    assert "1 option(s) are available" in outcome(other).final_answer  # type: ignore[operator]


def test_new_tool_calls_get_ids_past_the_prefix(tmp_path: Path) -> None:
    save(record_success(clock=frozen(0)), tmp_path / "p.json")
    script = ScriptedModel([{"type": "tool_call", "toolName": "calendar", "toolInput": {"date": "d"}},
                            {"type": "final_answer", "text": "ok"}])
    child = demo_fork(tmp_path / "p.json", tmp_path / "c.json", model=script, clock=frozen(0))
    assert child.steps[5].payload["toolCallId"] == "call-1"
    assert outcome(child).final_answer == "ok"


def test_prompt_mode_copies_the_prefix_and_starts_over(tmp_path: Path) -> None:
    parent = record_success(clock=frozen(0))
    save(parent, tmp_path / "p.json")
    child = demo_fork(tmp_path / "p.json", tmp_path / "c.json", mode="prompt", prompt="Find a flight.",
                      clock=frozen(0))
    assert child.steps[:4] == parent.steps[:4]
    assert child.steps[4].payload["messages"] == [{"role": "user", "content": "Find a flight."}]
    assert outcome(child).final_answer == (
        'No tool results were available; responding to the request directly: "Find a flight.".')
    assert child.forkedFromStepId == "example-run-001:4"


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    path = tmp_path / "parent.json"
    save(record_success(clock=frozen(0)), path)
    return path


@pytest.mark.parametrize(("options", "message"), [
    ({"fork_index": 15}, "--fork-index 15 is outside the cassette (steps 0–14)"),
    ({"fork_index": -1}, "--fork-index -1 is outside the cassette"),
    ({"fork_index": 14}, "terminal metadata step"),
    ({"fork_index": 4, "mutation_step": -2}, "--mutation-step -2 is negative"),
    ({"fork_index": 4, "mutation_step": 4}, "--mutation-step 4 must come before --fork-index 4"),
    ({"fork_index": 4, "mutation_step": 2}, "--mutation-step 2 is a tool_call, not a tool_result; "
                                            "tool_result steps before --fork-index 4: 3"),
    ({"fork_index": 8, "mutation_step": 3}, "would leave the model_input at step 4 stale"),
    ({"mode": "sideways"}, "--mode must be tool-result or prompt"),
    ({"mode": "prompt"}, "--prompt is required with --mode prompt"),
    ({"payload": {1, 2}}, "--payload-json holds a set"),
])
def test_usage_errors(parent: Path, tmp_path: Path, options: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        demo_fork(parent, tmp_path / "child.json", **options)  # type: ignore[arg-type]
    assert not (tmp_path / "child.json").exists()


def test_refuses_to_overwrite_the_parent(parent: Path) -> None:
    with pytest.raises(UsageError, match="--out must differ from --trace"):
        demo_fork(parent, parent.parent / ".." / parent.parent.name / parent.name)


def test_bad_payload_json() -> None:
    assert parse_payload_json('{"a": [1, 2.5]}') == {"a": [1, 2.5]}
    with pytest.raises(UsageError, match="--payload-json is not valid JSON"):
        parse_payload_json("{nope")


def test_unreadable_or_broken_parents_are_cassette_errors(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such file"):
        demo_fork(tmp_path / "missing.json", tmp_path / "c.json")
    edited = dumps(record_success(clock=frozen(0))).replace(b'"query": "weekend hotels"', b'"query": "edited"', 2)
    (tmp_path / "broken.json").write_bytes(edited.replace(b'"edited"', b'"weekend hotels"', 1))
    with pytest.raises(CassetteError, match="hash chain broken at step 2"):
        demo_fork(tmp_path / "broken.json", tmp_path / "c.json")


def test_an_error_run_cannot_be_forked_past_its_end(tmp_path: Path) -> None:
    save(record_error(clock=frozen(0)), tmp_path / "e.json")
    with pytest.raises(UsageError, match="terminal metadata step"):
        demo_fork(tmp_path / "e.json", tmp_path / "c.json")


# -- through the command line (the `fork` command without an agent command) ---------------------------------


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["fork", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_demo_fork(parent: Path, tmp_path: Path) -> None:
    code, out, _ = _cli("--trace", str(parent), "--out", str(tmp_path / "f.json"),
                        "--payload-json", '{"results": [], "available": false, "message": "Closed."}')
    assert code == 0
    assert "Closed." in load(tmp_path / "f.json").steps[5].payload["text"]
    assert "next: blackbox diff" in out


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--fork-index", "99"], 2, "--fork-index 99 is outside the cassette"),
    (["--mutation-step", "5"], 2, "--mutation-step 5 must come before the default fork index 4"),
    (["--mutation-step", "1"], 2, "is a model_output, not a tool_result"),
    (["--payload-json", "{bad"], 2, "--payload-json is not valid JSON"),
    (["--mode", "prompt"], 2, "--prompt is required"),
])
def test_cli_errors_are_one_line(parent: Path, tmp_path: Path, args: list[str], code: int, message: str) -> None:
    exit_code, _, err = _cli("--trace", str(parent), "--out", str(tmp_path / "f.json"), *args)
    assert exit_code == code
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "f.json").exists()


_DEMO_FLAGS = ("--trace", "--out", "--fork-index", "--mutation-step", "--payload-json", "--mode", "--prompt")


@pytest.mark.parametrize("command", [["demo", "fork"], ["fork"]])
@pytest.mark.parametrize(("args", "message"), [
    (["-P", "--mutation-step", "5"], "--mutation-step 5 must come before the default fork index 4"),
    (["-P", "--fork-index", "2"], "the default changed step 3 must come before --fork-index 2"),
    (["-P", "--fork-index", "8"], "the default changed step 3 would leave the model_input at step 4 stale"),
    (["-P", "--mutation-step", "2"], "--mutation-step 2 is a tool_call, not a tool_result; tool_result steps "
                                     "before the default fork index 4: 3"),
    (["--trace", "error.json"], "the default fork index 4 is the run's terminal metadata step"),
    (["-P", "--out", "parent.json"], "--out must differ from --trace"),
    (["--out", "traces/example-trace.json"], "--out must differ from the parent traces/example-trace.json"),
    (["-P", "--mode", "prompt", "--prompt", "Hi", "--mutation-step", "3"], "--mutation-step changes a tool result"),
    (["-P", "--mode", "prompt", "--prompt", "Hi", "--payload-json", "1"], "--payload-json changes a tool result"),
    (["--prompt", "Hi"], "--prompt is for --mode prompt"),
    ([], "no cassette to fork: the demo's traces/example-trace.json is not here; run `blackbox demo` first"),
])
def test_every_demo_fork_message_names_only_the_flags_typed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch, command: list[str],
                                                           args: list[str], message: str) -> None:
    """Where the user left an option to its default, the message says "the default …", never its flag (which
    would read as a value they typed); `blackbox fork`'s original form says the same.  (`-P`: --trace parent.json)"""
    from tests.cli_helpers import run_cli

    save(record_success(clock=frozen(0)), tmp_path / "parent.json")
    save(record_error(clock=frozen(0)), tmp_path / "error.json")
    monkeypatch.chdir(tmp_path)
    if "--out" in args:  # the default parent is there only for the case that names it
        save(record_success(clock=frozen(0)), tmp_path / "traces" / "example-trace.json")
    typed = [a for arg in args for a in (["--trace", "parent.json"] if arg == "-P" else [arg])]
    code, _out, err = run_cli(capsys, *command, *typed)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    for flag in set(_DEMO_FLAGS) - set(typed):  # a flag not typed is at most a remedy ("--fork-index N")
        assert not re.search(rf"{flag} (-?\d|must|is\b|changes)", err), (flag, err)
    assert not list(tmp_path.rglob("*fork*.json"))


def test_cli_unwritable_out_exits_1(parent: Path, tmp_path: Path) -> None:
    exit_code, _, err = _cli("--trace", str(parent), "--out", str(parent / "child.json"))
    assert exit_code == 1
    assert err.startswith("error: cannot write ") and "Not a directory; nothing was written" in err
    assert err.count("\n") == 1 and "None" not in err


def test_cli_missing_parent_exits_2(tmp_path: Path) -> None:
    exit_code, _, err = _cli("--trace", str(tmp_path / "none.json"), "--out", str(tmp_path / "f.json"))
    assert exit_code == 2
    assert err.startswith("error: ") and "no such file" in err and err.count("\n") == 1


def test_demo_pair_verifies_and_diverges_at_the_changed_result(tmp_path: Path) -> None:
    from blackbox.format.diff import diff
    from blackbox.format.verify import verify

    parent, fork = demo_pair(tmp_path)
    assert verify(parent).ok and verify(fork).ok
    report = diff(load(parent), load(fork))
    assert report.first_divergence == 3 and report.shared_prefix == 3
