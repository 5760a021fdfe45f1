"""One exit-code rule for every command (README, "Exit codes"): 2 when the question cannot be asked (a usage
mistake, a path that is not there, a file the command needs as a cassette that is not one or whose chain is
broken), 1 when the answer is no (a check failed: verify and assert judge the file itself), each as one line.

One table below, one row per command and kind of bad input; the README's table says the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blackbox.demo.clock import frozen
from blackbox.demo.scenarios import record_success
from blackbox.format.cassette import save
from tests.cli_helpers import run_cli

# {f}: the file under test.  Every other input is sound: a policy, scripted replies, a cassette to compare with.
COMMANDS: dict[str, list[str]] = {
    "verify": ["verify", "{f}"],
    "assert": ["assert", "{f}", "--expect-status", "success"],
    "inspect": ["inspect", "{f}"],
    "diff (left)": ["diff", "{f}", "good.json"],
    "diff (right)": ["diff", "good.json", "{f}"],
    "replay": ["replay", "{f}"],
    "replay -- cmd": ["replay", "{f}", "--", "true"],
    "what-if": ["what-if", "{f}", "--at", "3", "--set", "1", "--out", "out.json", "--script", "replies.json"],
    "fork": ["fork", "{f}", "--at", "3", "--set", "1", "--out", "out.json", "--script", "replies.json", "--",
             "true"],
    "fork --model-only": ["fork", "{f}", "--at", "3", "--set", "1", "--out", "out.json", "--model-only",
                          "--script", "replies.json"],
    "demo fork": ["demo", "fork", "--trace", "{f}", "--out", "out.json"],
    "fork (demo form)": ["fork", "--trace", "{f}", "--out", "out.json"],
    "export": ["export", "{f}", "--to", "otlp-json", "--out", "out.json"],
    "redact": ["redact", "{f}", "--out", "out.json", "--policy", "policy.toml"],
    "scan": ["scan", "{f}"],
    "tui": ["tui", "{f}"],
    "recover": ["recover", "{f}", "--out", "out.json"],
    "import": ["import", "--from", "chat-json", "--in", "{f}", "--out", "out.json"],
    "import (folder)": ["import", "--from", "codex", "--in", "{f}"],
    "list": ["list", "{f}"],
    "drift": ["drift", "{f}", "--live"],  # a folder's command given a file (or nothing)
    "record": ["record", "--out", "out.json", "--policy", "{f}", "--", "true"],
}

# (command, input) → exit code.  Missing is 2 for all; not a cassette / tampered where the command reads one.
EXPECTED: dict[tuple[str, str], int] = {
    **{(name, "missing"): 2 for name in COMMANDS},
    **{(name, "unreadable"): 2 for name in ("inspect", "diff (left)", "diff (right)", "replay -- cmd", "what-if",
                                             "fork", "fork --model-only", "demo fork", "fork (demo form)",
                                             "export", "redact", "tui", "recover", "record")},
    **{(name, "tampered"): 2 for name in ("diff (left)", "diff (right)", "replay -- cmd", "what-if", "fork",
                                           "fork --model-only", "demo fork", "fork (demo form)", "export",
                                           "redact")},
    # the commands whose question is the file itself: a file that is not a sound cassette is a "no"
    **{(name, kind): 1 for name in ("verify", "assert", "replay") for kind in ("unreadable", "tampered")},
    ("import", "unreadable"): 1,  # a transcript the importer refuses (README: "an import was refused")
    ("import (folder)", "unreadable"): 2,  # a file where a folder of sessions is needed: a usage mistake
    **{("drift", kind): 2 for kind in ("unreadable", "tampered")},  # a file where a folder is needed
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    save(record_success(clock=frozen(0)), tmp_path / "good.json")
    document = json.loads((tmp_path / "good.json").read_text())
    document["steps"][3]["payload"]["result"] = "edited"  # the hash no longer matches
    (tmp_path / "tampered.json").write_text(json.dumps(document))
    (tmp_path / "unreadable.json").write_text("{not json")
    (tmp_path / "replies.json").write_text('[{"type": "final_answer", "text": "Done."}]')
    (tmp_path / "policy.toml").write_text("[tool.blackbox.redact]\nrules = []\n")
    return tmp_path


@pytest.mark.parametrize(("name", "kind"), sorted(EXPECTED))
def test_every_command_follows_the_one_exit_code_rule(folder: Path, capsys: pytest.CaptureFixture[str],
                                                       name: str, kind: str) -> None:
    args = [a.replace("{f}", f"{kind}.json") for a in COMMANDS[name]]
    code, _out, err = run_cli(capsys, *args)
    assert code == EXPECTED[name, kind], (args, err)
    if name not in ("verify", "assert", "replay") or kind == "missing":  # those three print a report instead
        assert [line for line in err.splitlines() if not line.startswith("note:")] == [err.splitlines()[-1]]
        assert err.startswith("error:") or err.splitlines()[-1].startswith("error:"), err
    assert not (folder / "out.json").exists()
