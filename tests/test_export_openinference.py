"""`blackbox export`'s OpenInference attributes, beside the GenAI ones, which Arize Phoenix reads for its span kinds
and its Input and Output columns: `openinference.span.kind` on the root and tool spans (AGENT, TOOL; a chat span
has none, so MLflow keeps its CHAT_MODEL type and Phoenix derives LLM from gen_ai.*); with --content each
span's `input.value` / `output.value` (`application/json`), the very JSON text of its GenAI content, so redacted by
the policy in force and key-masked the same; without --content none.  Blackbox's own import still reads such a
trace by its GenAI attributes (its OpenInference reading restates only spans that have none)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from blackbox.importers.otel_openinference import genai_spans
from blackbox.importers.otel_spans import Span, read_spans
from tests.cli_helpers import run_cli
from tests.test_export_otlp import KEY, rich_cassette

EMAIL = "grace@example.com"
# each span kind's GenAI content attribute that its input.value and output.value restate
SOURCES = {"AGENT": ("gen_ai.input.messages", "gen_ai.output.messages"),
           None: ("gen_ai.input.messages", "gen_ai.output.messages"),
           "TOOL": ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")}


def _export(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[list[Span], str]:
    out = tmp_path / f"trace{''.join(flags)}.json"
    code, _, err = run_cli(capsys, "export", tmp_path / "run.json", "--to", "otlp-json", "--out", out, *flags)
    assert code == 0, err
    return read_spans(out), out.read_text()


@pytest.fixture
def email_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy in force redacts e-mail addresses (and no other BLACKBOX_ setting applies)."""
    for name in [n for n in os.environ if n.startswith("BLACKBOX_")]:
        monkeypatch.delenv(name)
    policy = tmp_path / "policy.toml"
    policy.write_text('detectors = ["email"]\n')
    monkeypatch.setenv("BLACKBOX_POLICY", str(policy))


@pytest.mark.usefixtures("email_policy")
def test_with_content_each_span_carries_its_kind_input_and_output_redacted_as_its_genai_content(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json", result=f"sunny {KEY}, ask {EMAIL}")
    spans, text = _export(tmp_path, capsys, "--content")
    assert [s.attributes.get("openinference.span.kind") for s in spans] == ["AGENT", None, "TOOL", "TOOL", None]
    root, chat1, tool1, tool2, chat2 = (s.attributes for s in spans)
    for span in spans:
        a = span.attributes
        for side, source in zip(("input", "output"), SOURCES[a.get("openinference.span.kind")], strict=True):
            assert a[f"{side}.value"] == a[source], (span.name, side)  # the same text, encoded once
            assert a[f"{side}.mime_type"] == "application/json"
    # the run's first request and its final answer on the agent span; a model call's messages; a tool's I/O
    assert json.loads(root["input.value"]) == [{"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}]
    [answer] = json.loads(root["output.value"])
    assert root["output.value"] == chat2["output.value"] and [p["type"] for p in answer["parts"]] == ["text"]
    assert [p["type"] for p in json.loads(chat1["output.value"])[0]["parts"]] == ["text", "tool_call", "tool_call"]
    assert json.loads(tool1["input.value"]) == {"city": "Paris"}
    assert json.loads(tool2["output.value"]) == {"error": "boom"}
    # redacted and masked as the GenAI content is: the key and the e-mail address never leave, in any attribute
    shown = json.loads(tool1["output.value"])
    assert shown.startswith("sunny [redacted], ask [redacted:email:") and EMAIL not in shown
    response = json.loads(chat2["input.value"])[2]["parts"][0]["response"]
    assert response == shown
    assert KEY not in text and EMAIL not in text
    # Blackbox's import reads its own trace by the GenAI attributes, as before: its OpenInference reading restates
    # none of these spans (tests/test_import_otel.py imports such an export back as the same steps)
    assert genai_spans(spans) == spans


def test_without_content_only_the_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rich_cassette(tmp_path / "run.json", result="sunny")
    spans, text = _export(tmp_path, capsys)
    assert [s.attributes.get("openinference.span.kind") for s in spans] == ["AGENT", None, "TOOL", "TOOL", None]
    assert not [k for s in spans for k in s.attributes if k.startswith(("input.", "output."))]
    assert "Paris" not in text and "sunny" not in text
