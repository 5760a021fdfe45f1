"""The one key check every writer of a cassette makes (`secrets.KeySearch`, docs/format.md "Writing a
cassette"): a key or any 20-character piece of it, also across line ends, spaces, zero-width characters and JSON
escapes, never reaches a cassette or a journal: recording (through the launcher and the real SDK), what-if,
redact and recover, each refused in one line with nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from blackbox.cli import app
from blackbox.demo import demo_pair
from blackbox.format.cassette import Cassette, load
from blackbox.format.secrets import KEY_PIECE, KeySearch, squeezed
from blackbox.format.writing import dumps
from blackbox.importers.codex import import_codex
from blackbox.importers.common import check_writable
from blackbox.live.recorder import JOURNAL_SUFFIX, rescue_journal
from fuzz.planted import PLANTED_KEY, SENTENCES, key_forms, near_misses, planted
from tests.agents.hostile_agent import KEY as CLIENT_KEY
from tests.cli_helpers import invoke
from tests.conftest import FIXTURES
from tests.fakeapi import FakeAPI, anthropic_message, turn_brain
from tests.waiting import HANG_GUARD

pytest_plugins = ["tests.conftest_fakeapi"]

ROOT = Path(__file__).parent.parent
WRAPPED = dict(key_forms())["wrapped-every-7"]
NO_KEYS = {"ANTHROPIC_API_KEY": None, "OPENAI_API_KEY": None, "NO_COLOR": "1"}


def holds_a_piece(data: bytes | str, key: str) -> bool:
    """Written apart from KeySearch: every whitespace, control or non-ASCII character and backslash escape
    letter dropped, then a plain search for each piece."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    for escape in ("\\n", "\\r", "\\t", "\\u200b", "\\ufeff", "\\u00a0"):
        text = text.replace(escape, "")
    flat = "".join(c for c in text if " " < c < "\x7f")
    return any(key[i:i + KEY_PIECE] in flat for i in range(len(key) - KEY_PIECE + 1))


# ---------------------------------------------------------------------------------------------------------
# the search itself


@pytest.mark.parametrize(("form", "value"), key_forms())
def test_every_form_of_the_key_is_found_in_json_and_in_json_inside_json(form: str, value: str) -> None:
    search = KeySearch([PLANTED_KEY])
    once = json.dumps({"text": value}).encode()
    twice = json.dumps({"text": json.dumps({"inner": value})}).encode()
    raw = json.dumps({"text": value}, ensure_ascii=False).encode()
    assert search.found_in(once) and search.found_in(twice) and search.found_in(raw)


@pytest.mark.parametrize("value", near_misses())
def test_19_characters_are_no_piece(value: str) -> None:
    search = KeySearch([PLANTED_KEY])
    assert not search.found_in(json.dumps({"text": value}).encode())
    assert not search.found_in(json.dumps({"a": PLANTED_KEY[:19], "b": PLANTED_KEY[19:38]}).encode())


def test_a_piece_across_the_border_of_two_windows_of_a_long_text_is_found() -> None:
    search = KeySearch([PLANTED_KEY])
    for shift in range(-40, 8, 3):
        head = b"x" * ((1 << 22) + shift)
        assert search.found_in(head + b"\\n".join(PLANTED_KEY[i:i + 3].encode() for i in range(0, 51, 3)))
        assert search.found_in(head + b"\\u00" + b"\\u0073k-proj" + PLANTED_KEY[8:30].encode())


def test_the_written_layout_search_and_the_plain_one_agree_and_name_the_step(tmp_path: Path) -> None:
    sentence, levels = SENTENCES["import/codex-tax.jsonl"]
    data = (FIXTURES / "import/codex-tax.jsonl").read_bytes()
    search = KeySearch([PLANTED_KEY])
    clean = import_codex(FIXTURES / "import/codex-tax.jsonl", "t")
    assert not search.in_written(dumps(clean)) and search.step_holding(clean, dumps(clean)) is None
    for _, value in key_forms():
        cassette = _import_bytes(tmp_path, planted(data, sentence, value, levels))
        written = dumps(cassette)
        assert search.in_written(written) and search.found_in(written)
        assert search.step_holding(cassette, written) == "step 0"  # the prompt: the first model_input


def _import_bytes(folder: Path, data: bytes) -> Cassette:
    path = folder / "rollout-x.jsonl"
    path.write_bytes(data)
    return import_codex(path, "t")


def test_the_environment_search_leaves_out_replay_placeholders_and_short_values() -> None:
    assert not KeySearch.of_environment({"OPENAI_API_KEY": "blackbox-replay-placeholder", "GEMINI_API_KEY": "short"})
    found = KeySearch.of_environment({"ANTHROPIC_API_KEY": PLANTED_KEY, "PATH": "x" * 40})
    assert found.keys == (PLANTED_KEY,)
    assert squeezed(b"a \\n\\u200bb\xe2\x80\x8bc\\u0064") == b"abcd"


# ---------------------------------------------------------------------------------------------------------
# recording, through the launcher and the real anthropic SDK


def test_a_recording_whose_tool_returns_the_client_key_wrapped_writes_nothing_anywhere(
        fake_api: FakeAPI, tmp_path: Path) -> None:
    fake_api.brain = turn_brain([anthropic_message(tool_uses=[("get_weather", {"city": "Paris"})]),
                                 anthropic_message(text="Done.")])
    out = tmp_path / "wrapped.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLACKBOX_", "ANTHROPIC_", "OPENAI_"))}
    result = subprocess.run([sys.executable, "-m", "blackbox", "record", "--out", str(out), "--", sys.executable,
                             "-m", "tests.agents.hostile_agent", "early_wrapped"], cwd=ROOT, input="go\n",
                            env={**env, "FAKE_URL": fake_api.url, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
                            text=True, capture_output=True, timeout=HANG_GUARD, check=False)
    assert result.returncode == 1, result.stderr
    assert ("nothing was recorded: refusing to write the cassette: step 1 contains the API key sent with the "
            "requests (or a long piece of it, also split by spaces, line ends or escapes)") in result.stderr
    assert not out.exists()
    for text in (result.stdout, result.stderr, *(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())):
        assert not holds_a_piece(text, CLIENT_KEY)


# ---------------------------------------------------------------------------------------------------------
# what-if, redact, recover


def test_what_if_refuses_a_set_value_holding_the_key_split_by_line_ends(tmp_path: Path) -> None:
    parent, _ = demo_pair(tmp_path)
    replies = tmp_path / "replies.json"
    replies.write_text('[{"type": "final_answer", "text": "Nothing to book."}]', encoding="utf-8")
    out = tmp_path / "whatif.json"
    args = ["what-if", parent, "--at", "3", "--set", json.dumps({"token": WRAPPED}), "--out", out, "--script",
            replies]
    result = invoke(app, args, env={**NO_KEYS, "OPENAI_API_KEY": PLANTED_KEY})
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "error: the what-if continuation stopped: refusing to write the fork: step 3 holds an API key from the "
        "environment (or a piece of it, also split by spaces, line ends or escapes); nothing was written")
    assert not out.exists() and not holds_a_piece(result.stdout + result.stderr, PLANTED_KEY)
    assert invoke(app, args, env=NO_KEYS).exit_code == 0  # without the key in the environment: just text


def _cassette_holding_the_wrapped_key(tmp_path: Path) -> Path:
    sentence, levels = SENTENCES["import/codex-tax.jsonl"]
    source = tmp_path / "rollout-x.jsonl"
    source.write_bytes(planted((FIXTURES / "import/codex-tax.jsonl").read_bytes(), sentence, WRAPPED, levels))
    path = tmp_path / "holding.json"
    path.write_bytes(check_writable(import_codex(source, "holding"), env={}))  # no key known: it is text
    return path


def test_redact_refuses_to_write_a_key_its_policy_leaves_in_the_clear(tmp_path: Path) -> None:
    cassette = _cassette_holding_the_wrapped_key(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text('detectors = ["cloud-key"]\n')
    out = tmp_path / "shared.json"
    env = {**NO_KEYS, "OPENAI_API_KEY": PLANTED_KEY, "BLACKBOX_REDACT_KEY": "a test key of thirty-two chars!"}
    result = invoke(app, ["redact", cassette, "--out", out, "--policy", policy], env=env)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert ("step 0 of the redacted cassette still holds an API key from the environment (or a piece of it); add a "
            "rule that masks it to the policy; nothing was written") in result.stderr
    assert not out.exists() and not holds_a_piece(result.stdout + result.stderr, PLANTED_KEY)


def _journal_of(cassette: Path) -> Path:
    loaded = load(cassette, js_floats=False)
    journal = cassette.with_name("run.json" + JOURNAL_SUFFIX)
    header = json.dumps({"blackboxJournal": 1, "id": "run", "createdAt": loaded.createdAt}).encode()
    journal.write_bytes(b"\n".join([header, *(msgspec.json.encode(s) for s in loaded.steps)]) + b"\n")
    cassette.unlink()
    return journal


def test_recover_refuses_a_journal_holding_the_key_and_keeps_it(tmp_path: Path) -> None:
    journal = _journal_of(_cassette_holding_the_wrapped_key(tmp_path))
    result = invoke(app, ["recover", journal], env={**NO_KEYS, "OPENAI_API_KEY": PLANTED_KEY})
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "error: the recovered run cannot be written: step 0 holds an API key from the environment (or a piece of "
        "one, also split by spaces, line ends or escapes); remove it from the journal first; nothing was written")
    assert journal.exists() and [p.name for p in tmp_path.iterdir() if p.suffix == ".json"] == []


def test_the_rescue_before_a_recording_sets_a_journal_holding_the_key_aside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    journal = _journal_of(_cassette_holding_the_wrapped_key(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    assert rescue_journal(tmp_path / "run.json") is None
    assert not journal.exists() and (tmp_path / f"run.json{JOURNAL_SUFFIX}.unrecoverable").exists()
    assert "step 0 holds an API key from the environment" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.json"))
