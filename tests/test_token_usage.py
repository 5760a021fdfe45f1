"""Token usage kept at record time (docs/format.md, "Token usage"), with the real SDKs against the fake API.

Every provider's usage object, unstreamed and streamed, becomes the same neutral `tokens` beside the model
output step: not hashed, so the cassette verifies by the original's rules (which walk every key), replays,
diffs and forks as before, and its payloads still hold no `usage`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.tokens import Tokens
from blackbox.format.verify import neutrality_problem, verify
from tests.fakeapi import FakeAPI, anthropic_message, chat_completion, response_object
from tests.fakeapi_gemini import gemini_response

pytest_plugins = ["tests.conftest_fakeapi"]

ANTHROPIC_USAGE = {"input_tokens": 50, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 30,
                   "output_tokens": 17, "service_tier": "standard"}
CHAT_USAGE = {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99,
              "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
              "completion_tokens_details": {"reasoning_tokens": 5, "audio_tokens": 0}}
RESPONSES_USAGE = {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 24},
                   "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 52}
GEMINI_USAGE = {"promptTokenCount": 12, "cachedContentTokenCount": 8, "candidatesTokenCount": 7,
                "thoughtsTokenCount": 3, "totalTokenCount": 22}

#: What each provider's usage above means, neutrally: input with the cache, output with the reasoning.
EXPECTED = {
    "anthropic": Tokens(input=100, output=17, cacheRead=30, cacheWrite=20),
    "openai": Tokens(input=82, output=17, cacheRead=64, reasoning=5),
    "azure": Tokens(input=82, output=17, cacheRead=64, reasoning=5),
    "responses": Tokens(input=40, output=12, cacheRead=24, reasoning=4),
    "azure-responses": Tokens(input=40, output=12, cacheRead=24, reasoning=4),
    "gemini": Tokens(input=12, output=10, cacheRead=8, reasoning=3),
}
PROVIDERS = tuple(EXPECTED)


def _answer(provider: str) -> dict[str, Any]:
    if provider == "anthropic":
        return anthropic_message(text="Paris.", usage=ANTHROPIC_USAGE)
    if provider in ("openai", "azure"):
        return chat_completion(content="Paris.", usage=CHAT_USAGE)
    if provider == "gemini":
        return {**gemini_response(text="Paris."), "usageMetadata": GEMINI_USAGE}
    return response_object(text="Paris.", usage=RESPONSES_USAGE)


def _one_call(provider: str, bb: blackbox.Session, fake: FakeAPI, *, stream: bool) -> str:
    """One model call through the provider's own SDK, read to its end; the answer's text."""
    import anthropic
    import openai

    question = "Capital of France?"
    if provider == "anthropic":
        claude = anthropic.Anthropic(api_key="test-key", base_url=fake.url, http_client=bb.http_client(),
                                     max_retries=0)
        kwargs: dict[str, Any] = {"model": "claude-sonnet-4-6", "max_tokens": 100,
                                  "messages": [{"role": "user", "content": question}]}
        if stream:
            with claude.messages.stream(**kwargs) as s:
                message = s.get_final_message()
        else:
            message = claude.messages.create(**kwargs)
        return "".join(block.text for block in message.content if block.type == "text")
    if provider == "gemini":
        from google import genai

        models = genai.Client(api_key="AIzaSyFAKE-gemini-test-key-0123456789",
                              http_options=bb.genai_http_options(base_url=fake.url)).models
        if stream:
            return "".join(chunk.text or "" for chunk in models.generate_content_stream(
                model="gemini-2.5-flash", contents=question))
        return models.generate_content(model="gemini-2.5-flash", contents=question).text or ""
    common: dict[str, Any] = {"http_client": bb.http_client(), "max_retries": 0}
    if provider.startswith("azure"):
        sdk: Any = openai.AzureOpenAI(azure_endpoint=fake.url, api_key="azure-key-0123456789",
                                      api_version="2024-10-21", azure_deployment="prod-gpt", **common)
    else:
        sdk = openai.OpenAI(api_key="test-key", base_url=fake.openai_url, **common)
    if provider in ("openai", "azure"):
        messages: Any = [{"role": "user", "content": question}]
        if stream:
            chunks = sdk.chat.completions.create(model="gpt-5.1", messages=messages, stream=True,
                                                 stream_options={"include_usage": True})
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        return sdk.chat.completions.create(model="gpt-5.1", messages=messages).choices[0].message.content or ""
    if stream:
        with sdk.responses.stream(model="gpt-5.1", input=question) as s:
            return str(s.get_final_response().output_text)
    return str(sdk.responses.create(model="gpt-5.1", input=question).output_text)


def _record(provider: str, fake: FakeAPI, out: Path, *, stream: bool) -> None:
    fake.reset()
    fake.queue(_answer(provider))
    with blackbox.session("record", out=out) as bb:
        assert _one_call(provider, bb, fake, stream=stream) == "Paris."
    assert [bool(r.body.get("stream")) or "streamGenerateContent" in r.path for r in fake.requests] == [stream]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_provider_keeps_its_usage_as_the_same_tokens_streamed_or_not(
        fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    plain, streamed = tmp_path / "plain.json", tmp_path / "streamed.json"
    _record(provider, fake_api, plain, stream=False)
    _record(provider, fake_api, streamed, stream=True)
    for path in (plain, streamed):
        cassette = load(path)
        output = cassette.steps[1]
        assert output.type == "model_output" and output.tokens == EXPECTED[provider]
        assert [step.tokens for step in cassette.steps if step is not output] == [None] * (len(cassette.steps) - 1)
        assert verify(path).ok
        raw = json.loads(path.read_text(encoding="utf-8"))
        assert list(raw["steps"][1])[-2:] == ["hash", "tokens"]  # the layout: after the hash
        assert "usage" not in json.dumps([step["payload"] for step in raw["steps"]])
        # The original's neutrality check walks the whole file, keys included: nothing in `tokens` is flagged.
        assert neutrality_problem(raw, []) is None
    assert [(s.type, s.payload) for s in load(plain).steps] == [(s.type, s.payload) for s in load(streamed).steps]
