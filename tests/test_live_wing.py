"""The live wing's interfaces: the provider registry, settings ↔ BLACKBOX_*, the typed report, the secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox.errors import BlackboxUnsupportedError
from blackbox.format.canonical import decode_json
from blackbox.format.payloads import ModelOutput
from blackbox.format.secrets import PLACEHOLDER_KEYS, KeySearch, Secrets
from blackbox.live.report import ReportSettings, SessionReport, read_report, write_report
from blackbox.live.settings import Settings, resolve_settings
from blackbox.providers import ANTHROPIC, OPENAI_CHAT, PROVIDERS, RESPONSES, CallIds, route
from blackbox.wire import Request


@pytest.mark.parametrize(("path", "name"), [
    ("/v1/messages", "anthropic"), ("/v1/messages/", "anthropic"), ("/v1/messages?beta=true", "anthropic"),
    ("/v1/chat/completions", "openai"), ("/openai/deployments/x/chat/completions", "azure"),
    ("/openai/v1/chat/completions", "openai"), ("/v1/responses", "responses"),
    ("/openai/responses?api-version=preview", "azure-responses"),
    ("https://res.openai.azure.com/openai/v1/chat/completions", "azure"),
])
def test_route_names_the_provider(path: str, name: str) -> None:
    provider = route(Request.post(path))
    assert provider is not None and provider.name == name


@pytest.mark.parametrize("path", ["/v1/models", "/v1/messages/count_tokens", "/"])
def test_route_leaves_other_paths_alone(path: str) -> None:
    assert route(Request.post(path)) is None


def test_every_provider_keeps_its_params_and_knows_a_stream_request() -> None:
    assert ANTHROPIC.kept_params["max_tokens"] == "maxTokens"
    assert OPENAI_CHAT.kept_params["max_completion_tokens"] == "maxTokens"
    for provider in PROVIDERS:
        assert provider.is_stream({"stream": True}) and not provider.is_stream({})
        assert provider.error_body("no")  # an error shape for every route


def test_the_responses_provider_refuses_server_state_before_sending() -> None:
    ids = CallIds()
    with pytest.raises(BlackboxUnsupportedError, match=r"previous_response_id .* is not supported yet"):
        RESPONSES.normalize_request({"model": "m", "input": "hi", "previous_response_id": "resp_1"}, ids)
    assert RESPONSES.normalize_request({"model": "m", "input": "hi"}, ids)["messages"] == [
        {"role": "user", "content": "hi"}]
    assert RESPONSES.error_body("x") == OPENAI_CHAT.error_body("x")


def test_one_synthesize_signature_for_every_provider() -> None:
    output: ModelOutput = {"type": "final_answer", "text": "ok"}
    for provider in (ANTHROPIC, OPENAI_CHAT):
        body = provider.synthesize_response(output, step_index=2, timestamp_ms=5000, model="m")
        assert body["id"] == "blackbox-replay-2" and body["model"] == "m"


def test_settings_round_trip_through_the_environment() -> None:
    fork = Settings(mode="fork", cassette="p.json", out="f.json", fork_at=3, fork_set={"t": 1.5},
                    has_fork_set=True, continue_with="script", script="r.json", match="sequence")
    env = fork.to_env()
    assert env == {"BLACKBOX_MODE": "fork", "BLACKBOX_CASSETTE": "p.json", "BLACKBOX_OUT": "f.json",
                   "BLACKBOX_FORK_AT": "3", "BLACKBOX_FORK_SET": '{"t":1.5}', "BLACKBOX_CONTINUE": "script",
                   "BLACKBOX_SCRIPT": "r.json", "BLACKBOX_MATCH": "sequence"}
    back = Settings.from_env(env)
    assert (back.mode, back.cassette, back.out, back.fork_at, back.fork_set, back.continue_with, back.script,
            back.match) == ("fork", "p.json", "f.json", 3, {"t": 1.5}, "script", "r.json", "sequence")


def test_record_settings_set_no_match() -> None:
    assert Settings(mode="record", out="run.json").to_env() == {"BLACKBOX_MODE": "record", "BLACKBOX_OUT": "run.json"}


def test_arguments_beat_the_given_environment() -> None:
    s = resolve_settings("replay", cassette="mine.json", env={"BLACKBOX_MODE": "record", "BLACKBOX_OUT": "x.json"})
    assert (s.mode, s.cassette, s.out) == ("replay", "mine.json", "x.json")


def test_the_report_is_written_and_read_typed(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    settings = Settings(mode="fork", cassette="p.json", out="f.json", fork_at=3, fork_set=[1],
                        has_fork_set=True, continue_with="live")
    report = SessionReport(mode="fork", path="f.json", steps=9, status="success", finished=True, written=True,
                           settings=ReportSettings.of(settings), pid=42)
    write_report(str(path), report)
    raw = decode_json(path.read_bytes())
    assert raw["settings"]["continue"] == "live" and raw["settings"]["forkSet"] == [1] and raw["error"] is None
    assert read_report(path) == report


def test_a_missing_or_foreign_report_reads_as_none(tmp_path: Path) -> None:
    assert read_report(tmp_path / "none.json") is None
    (tmp_path / "bad.json").write_text('["not", "a", "report"]')
    assert read_report(tmp_path / "bad.json") is None


def test_secrets_learn_keys_but_not_placeholders() -> None:
    placeholder = PLACEHOLDER_KEYS["OPENAI_API_KEY"]
    secrets = Secrets({"ANTHROPIC_API_KEY": "sk-env-key-123456", "OPENAI_API_KEY": placeholder})
    secrets.note_headers([("authorization", "Bearer header-key-abcdef"), ("x-other", "nope")])
    assert set(secrets.values()) == {"sk-env-key-123456", "header-key-abcdef"}
    assert secrets.mask("a header-key-abcdef b") == "a [redacted] b"
    assert secrets.search().found_in(b'{"x":"header-key-abcdef"}')
    assert not KeySearch(["short"])  # too short to be a key: never searched for
