"""Text from a cassette reaches the terminal inert: escape sequences and bidi controls are shown, never
obeyed, in every text output of the reading commands (rows, one step, diff, list, verify, assert)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blackbox.cli import app
from blackbox.format.canonical import js_stringify
from blackbox.format.cassette import StepChain, save
from tests.cli_helpers import invoke

EVIL = "ok\x1b]0;pwned\x07 \x1b[2J\u202eevil\x9b31m" + "x" * 100  # long: the summary is clipped after inert


def _evil(tmp_path: Path, name: str, answer: str) -> Path:
    chain = StepChain(f"id\x1b[31m-{name}")
    chain.append("model_output", 0, {"type": "final_answer", "text": answer})
    chain.append("tool_result", 1, {"toolCallId": "call-0", "toolName": "t\x1b[1m", "error": answer})
    chain.append("metadata", 2, {"event": "run_completed", "status": "success", "result": answer})
    path = tmp_path / f"{name}.json"
    save(chain.cassette(0), path)
    return path


@pytest.mark.parametrize("args", [["inspect", "A"], ["inspect", "A", "--step", "1"], ["diff", "A", "B"],
                                  ["diff", "A", "B", "--format", "markdown"], ["list", "DIR"], ["verify", "A"],
                                  ["assert", "A", "--expect-final-answer", "nope"]])
def test_reading_commands_print_cassette_text_inert(tmp_path: Path, args: list[str]) -> None:
    a, b = _evil(tmp_path, "a", EVIL), _evil(tmp_path, "b", EVIL + "!")
    argv = [str({"A": a, "B": b, "DIR": tmp_path}.get(x, x)) for x in args]
    result = invoke(app, argv, env={"NO_COLOR": "1"})
    assert result.exit_code in (0, 1), result.stderr
    shown = result.stdout + result.stderr
    for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert raw not in shown, (raw, shown)
    assert "␛" in shown or "\\u001b" in shown


def test_a_json_text_that_stringify_prints_like_json_dumps() -> None:
    assert js_stringify({"b": [1, 2.5, None, True], "a": "x\u2028"}) == '{"b":[1,2.5,null,true],"a":"x\u2028"}'


_KEYS = st.text(min_size=1, max_size=5).filter(lambda k: not k.isdigit())
_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=8),
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
                       max_leaves=20)


@given(_VALUES)
def test_stringify_agrees_with_json_dumps_where_python_and_javascript_print_alike(value: object) -> None:
    """No floats and no integer-like keys: JSON.stringify's text is json.dumps' compact text (keys in
    insertion order), lone surrogates aside."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return
    assert js_stringify(value) == text
