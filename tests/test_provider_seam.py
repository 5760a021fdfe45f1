"""The provider seam: one Request value, the registry, keys from every place an SDK or a gateway sends them,
Azure OpenAI end to end, and tools called positionally (real SDKs against the fake API on 127.0.0.1)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.errors import ReplayDivergenceError, SessionError
from blackbox.format.cassette import load
from blackbox.format.secrets import KEY_VARIABLES, PLACEHOLDER_KEYS, Secrets
from blackbox.format.verify import verify
from blackbox.live.wrapping import tool_input
from blackbox.providers import PROVIDERS, by_name, for_model, route
from blackbox.wire import Request
from tests.agents.loops import anthropic_agent, get_weather, openai_agent
from tests.fakeapi import FakeAPI, anthropic_message, chat_completion, weather_brain

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "sk-ant-api03-recording-test-key-0123456789"
SECRET = "zq9-internal-gateway-secret-5521"  # shaped like no credential: only where it was sent says it is a key


def test_a_request_never_shows_its_headers_query_or_body() -> None:
    request = Request.post("https://h.example/v1/messages?key=" + SECRET, SECRET.encode(), (("X-Api-Key", SECRET),))
    assert SECRET not in repr(request) and SECRET not in request.url
    assert request.param("key") == SECRET and request.header("x-api-key") == SECRET


def test_the_registry_names_every_provider_once_and_infers_by_model() -> None:
    names = [provider.name for provider in PROVIDERS]
    assert len(names) == len(set(names))
    assert all(by_name(name) is provider for name, provider in zip(names, PROVIDERS, strict=True))
    assert for_model("claude-sonnet-4-6").name == "anthropic"  # type: ignore[union-attr]
    assert for_model("openrouter/openai/gpt-5.1").name == "openai"  # type: ignore[union-attr]
    assert for_model("llama3.3") is None and for_model(None) is None
    assert route(Request("GET", "u", "h", "/v1/messages")) is None  # a model call is a POST


def test_placeholder_keys_cover_every_api_variable() -> None:
    assert set(PLACEHOLDER_KEYS) == set(KEY_VARIABLES)
    assert {"AZURE_OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"} <= set(KEY_VARIABLES)


@pytest.mark.parametrize(("headers", "query"), [
    ({"x-goog-api-key": SECRET}, {}),
    ({}, {"key": SECRET}),
    ({"api-key": SECRET}, {}),
    ({"x-portkey-api-key": SECRET}, {}),
    ({"Ocp-Apim-Subscription-Key": SECRET}, {}),
    ({"cf-aig-authorization": f"Bearer {SECRET}"}, {}),
    ({"helicone-auth": f"Bearer {SECRET}"}, {}),
    ({"x-team-token": "sk-" + "q" * 40}, {}),  # any header whose whole value is a credential by its shape
], ids=["x-goog-api-key", "query-key", "api-key", "portkey", "apim", "cloudflare", "helicone", "shaped"])
def test_a_key_from_any_place_is_learned_masked_and_refused_in_the_cassette(
        fake_api: FakeAPI, tmp_path: Path, headers: dict[str, str], query: dict[str, str]) -> None:
    import anthropic

    secret = next(iter({**headers, **query}.values())).removeprefix("Bearer ")
    fake_api.queue(anthropic_message(tool_uses=[("lookup", {})]), anthropic_message(text="done"))
    bb = blackbox.session("record", out=tmp_path / "leak.json")
    client = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake_api.url, api_key=KEY, max_retries=0,
                                 default_headers=headers, default_query=query)
    tools = bb.tools({"lookup": lambda: {"token": secret}})
    anthropic_agent(client, tools, "What is the token?",
                    tool_defs=[{"name": "lookup", "description": "", "input_schema": {"type": "object"}}])
    assert bb.mask(f"a {secret} b") == "a [redacted] b"
    with pytest.raises(SessionError, match="contains the API key") as caught:
        bb.finish()
    assert secret not in str(caught.value)
    kept = tmp_path / "leak.refused.json"  # only the run before the refused step, without the key
    assert list(tmp_path.iterdir()) == [kept] and secret not in kept.read_text()


def test_an_ordinary_header_is_not_taken_for_a_key() -> None:
    secrets = Secrets({})
    secrets.note_request(Request.post("https://h.example/v1/messages?beta=true", b"{}", (
        ("User-Agent", "Anthropic/Python 2.15.0"), ("x-stainless-retry-count", "0"))))
    assert secrets.values() == ()


# ---------------------------------------------------------------------------------------------------------
# Azure OpenAI, with the real SDK


def _azure(bb: blackbox.Session, fake: FakeAPI, **kwargs: Any) -> Any:
    import openai

    return openai.AzureOpenAI(http_client=bb.http_client(), azure_endpoint=fake.url, api_key="azure-key-0123456789",
                              api_version="2024-10-21", max_retries=0, **kwargs)


def test_azure_records_the_deployment_as_the_model_and_replays_without_a_key(fake_api: FakeAPI,
                                                                             tmp_path: Path) -> None:
    fake_api.brain = weather_brain("openai")
    out = tmp_path / "azure.json"
    with blackbox.session("record", out=out) as bb:
        answer = openai_agent(_azure(bb, fake_api, azure_deployment="prod-gpt"), bb.tools(
            {"get_weather": get_weather}), "Weather in Paris?")
    assert answer.startswith("Weather:")
    sent = fake_api.requests[0]
    assert sent.path.startswith("/openai/deployments/prod-gpt/chat/completions?api-version=2024-10-21")
    assert sent.header("api-key") == "azure-key-0123456789"
    cassette = load(out)
    assert verify(cassette).ok
    assert cassette.steps[0].payload["model"] == "prod-gpt"
    assert "azure-key-0123456789" not in out.read_text()

    fake_api.reset()
    with blackbox.session("replay", cassette=out) as bb:  # answered from the cassette: no request reaches the API
        client = _azure(bb, fake_api, azure_deployment="prod-gpt")
        assert openai_agent(client, bb.tools({"get_weather": get_weather}), "Weather in Paris?") == answer
    assert fake_api.requests == []


def test_azure_v1_paths_and_a_changed_prompt_diverges_at_step_0(fake_api: FakeAPI, tmp_path: Path) -> None:
    import openai

    fake_api.queue(chat_completion(content="hello"))
    out = tmp_path / "v1.json"
    with blackbox.session("record", out=out) as bb:
        client = openai.OpenAI(http_client=bb.http_client(), base_url=fake_api.url + "/openai/v1/",
                               api_key="azure-key-0123456789", default_headers={"api-key": "azure-key-0123456789"},
                               max_retries=0)
        assert openai_agent(client, {}, "hi", model="my-deployment") == "hello"
    assert fake_api.requests[0].path == "/openai/v1/chat/completions"
    assert load(out).steps[0].payload["model"] == "my-deployment"
    bb = blackbox.session("replay", cassette=out)
    client = openai.OpenAI(http_client=bb.http_client(), base_url=fake_api.url + "/openai/v1/",
                           api_key="placeholder", max_retries=0)
    with pytest.raises(openai.BadRequestError, match=r"step 0, messages\[0\]\.content"):
        openai_agent(client, {}, "hello there", model="my-deployment")
    with pytest.raises(ReplayDivergenceError, match="step 0"):
        bb.finish()


def test_a_what_if_continues_an_azure_run_through_its_provider(fake_api: FakeAPI, tmp_path: Path) -> None:
    from blackbox.fork.whatif import LiveModel, what_if

    fake_api.brain = weather_brain("openai")
    out = tmp_path / "azure.json"
    with blackbox.session("record", out=out) as bb:
        openai_agent(_azure(bb, fake_api, azure_deployment="prod-gpt"), bb.tools({"get_weather": get_weather}),
                     "Weather in Paris?")
    fake_api.reset()
    fake_api.brain = weather_brain("openai")
    env = {"AZURE_OPENAI_API_KEY": "azure-key-0123456789", "AZURE_OPENAI_ENDPOINT": fake_api.url}
    fork, reason = what_if(load(out), 3, {"city": "Paris", "temp_c": -5}, LiveModel("azure", env=env),
                           trace_id="whatif")
    assert reason == "final answer" and "-5" in fork.steps[-1].payload["result"]
    sent = fake_api.requests[0]
    assert sent.path == "/openai/deployments/prod-gpt/chat/completions?api-version=2024-10-21"
    assert sent.header("api-key") == "azure-key-0123456789" and sent.header("authorization") is None
    assert verify(fork).ok


# ---------------------------------------------------------------------------------------------------------
# tools called positionally (the OpenAI Agents SDK calls get_weather("Paris"))


def test_positional_arguments_are_bound_to_the_parameter_names() -> None:
    def weather(city: str, unit: str = "C", *more: str, **extra: Any) -> None: ...

    assert tool_input(weather, ("Paris",), {}) == {"city": "Paris"}  # defaults are not invented
    assert tool_input(weather, ("Paris", "F", "x"), {"hourly": True}) == {
        "city": "Paris", "unit": "F", "more": ["x"], "hourly": True}
    assert tool_input(weather, ({"city": "Paris"},), {}) == {"city": "Paris"}  # one dict stays the dict
    assert tool_input(weather, (), {"city": "Oslo"}) == {"city": "Oslo"}
    assert tool_input(len, ("abc",), {}) == "abc" or inspect.signature(len)  # no bindable signature: the value


def test_a_positional_call_records_what_the_model_asked(fake_api: FakeAPI, tmp_path: Path) -> None:
    import anthropic

    fake_api.brain = weather_brain("anthropic")
    out = tmp_path / "p.json"
    with blackbox.session("record", out=out) as bb:
        wrapped = bb.tool("get_weather", get_weather)
        client = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake_api.url, api_key=KEY, max_retries=0)
        anthropic_agent(client, {"get_weather": lambda city: wrapped(city)}, "Weather in Paris?")
    steps = load(out).steps
    asked = next(s.payload["calls"][0]["toolInput"] for s in steps if s.type == "model_output")
    ran = next(s.payload["toolInput"] for s in steps if s.type == "tool_call")
    assert ran == asked == {"city": "Paris"}
    assert json.loads(out.read_text())["steps"][3]["type"] == "tool_result"
