"""Whole-valued floats a tool returned (`21.0`): the cassette's JSON writes them as JavaScript does (`21`), and
the result step's unhashed `origin.floats` says where they were, so replay and forks hand the agent the float
it got (a framework that tells the model `str(result)` or `json.dumps(result)` then tells it the same).  The
corpus (tests/test_corpus.py) runs the same through the Agents SDK, LangGraph and pydantic-ai."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from blackbox.format.canonical import canonical_text
from blackbox.format.cassette import load
from blackbox.format.whole_floats import restore_floats, whole_floats
from tests.cli_helpers import run_cli

AGENT = '''
import blackbox

bb = blackbox.session()
reading = bb.tool("reading", lambda city: {"t": 21.0, "list": [1.0, 2.5, -3], "a/b~c": 3.0, "city": city,
                                                 "z": -0.0})
count = bb.tool("count", lambda: 7.0)
seen = [reading("Paris"), count()]
print(repr(seen))
bb.finish(result=repr(seen))
'''
RECORDED = "[{'t': 21.0, 'list': [1.0, 2.5, -3], 'a/b~c': 3.0, 'city': 'Paris', 'z': -0.0}, 7.0]"


def test_pointers_name_every_whole_float_and_bring_them_back() -> None:
    value = {"t": 21.0, "n": 21, "f": 2.5, "l": [1.0, {"x/y~": -0.0}], "inf": float("inf"), "b": True}
    pointers = whole_floats(value, "/result")
    assert sorted(pointers) == sorted(["%2Fresult%2Ft", "%2Fresult%2Fl%2F0", "%2D%2Fresult%2Fl%2F1%2Fx%7E1y%7E0"])
    stored = {"t": 21, "n": 21, "f": 2.5, "l": [1, {"x/y~": 0}], "b": True}  # as the cassette reads them back
    back = restore_floats(stored, pointers, "/result")
    assert back == {"t": 21.0, "n": 21, "f": 2.5, "l": [1.0, {"x/y~": 0.0}], "b": True}
    assert [type(back[k]) for k in ("t", "n")] == [float, int] and type(back["l"][0]) is float
    assert math.copysign(1.0, back["l"][1]["x/y~"]) == -1.0  # -0.0 comes back negative (Python prints "-0.0")
    assert math.copysign(1.0, restore_floats(0, whole_floats(-0.0, "/result"), "/result")) == -1.0
    assert math.copysign(1.0, restore_floats([0], whole_floats([0.0], "/result"), "/result")[0]) == 1.0
    assert restore_floats(7, whole_floats(7.0, "/result"), "/result") == 7.0
    assert type(restore_floats(7, whole_floats(7.0, "/result"), "/result")) is float
    # a pointer that names no integer (a forked value of another shape, a hand edit) changes nothing
    assert restore_floats({"t": "warm"}, pointers, "/result") == {"t": "warm"}
    assert restore_floats([1], ("%2Fresult%2F5", "bad%zz"), "/result") == [1]


def test_record_replay_and_fork_hand_the_agent_the_floats_it_got(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    run, fork = tmp_path / "run.json", tmp_path / "fork.json"
    command = ["--", sys.executable, agent]

    assert run_cli(capsys, "record", "--out", run, *command)[0] == 0
    cassette = load(run)
    result = next(s for s in cassette.steps if s.type == "tool_result")
    assert '"t":21' in canonical_text(result.payload)  # the original's JSON: a whole number has no fraction
    assert cassette.steps[-1].payload["result"] == RECORDED
    assert run_cli(capsys, "verify", run)[0] == 0

    code, out, err = run_cli(capsys, "replay", run, *command)  # PASS: the same outcome, so the agent saw floats
    assert code == 0 and out.startswith("PASS"), out + err

    # a fork at the first result, its value written as the cassette holds it (`21`): still the tool's float
    value = {**result.payload["result"], "city": "Lyon"}
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "done"}]))
    code, out, err = run_cli(capsys, "fork", run, "--at", result.index, "--set", json.dumps(value), "--out", fork,
                             "--script", script, *command)
    assert code == 0, out + err
    # the cassette's key order
    forked = "[{'a/b~c': 3.0, 'city': 'Lyon', 'list': [1.0, 2.5, -3], 't': 21.0, 'z': -0.0}, 7.0]"
    assert load(fork).steps[-1].payload["result"] == forked
    kept = load(fork).steps[result.index].origin  # whatever number text the file holds, the places are kept
    assert kept is not None and set(kept.floats or ()) == set(result.origin.floats if result.origin else ()) != set()
    code, out, err = run_cli(capsys, "replay", fork, *command)  # the fork's own result step keeps the places
    assert code == 0 and out.startswith("PASS"), out + err
