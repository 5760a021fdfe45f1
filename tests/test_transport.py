"""The transports: the right HTTP module, errors that reach the agent once and unretried, the original response
handed back, a user's own transport and proxy mounts wrapped, strict SDK validation of replayed answers."""

from __future__ import annotations

import asyncio
import gc
import warnings
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest

import blackbox
from blackbox.errors import ReplayDivergenceError
from blackbox.format.cassette import load
from tests.agents.loops import anthropic_agent, get_weather, openai_agent
from tests.fakeapi import FakeAPI, anthropic_message, json_reply, weather_brain

pytest_plugins = ["tests.conftest_fakeapi"]

HI = [{"role": "user", "content": "hi"}]


def test_http_client_flavors(tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "x.json")
    assert isinstance(bb.http_client(), httpx2.Client)
    assert isinstance(bb.async_http_client(), httpx2.AsyncClient)
    assert isinstance(bb.http_client(flavor="httpx"), httpx.Client)
    assert isinstance(bb.async_http_client(flavor="httpx"), httpx.AsyncClient)
    with pytest.raises(ValueError, match="flavor"):
        bb.http_client(flavor="requests")


def test_an_httpx_client_records_an_openai_agent(fake_api: FakeAPI, tmp_path: Path) -> None:
    import openai

    fake_api.brain = weather_brain("openai")
    out = tmp_path / "httpx.json"
    for mode in ("record", "replay"):
        bb = blackbox.session(mode, out=out if mode == "record" else None, cassette=out if mode == "replay" else None)
        client = openai.OpenAI(http_client=bb.http_client(flavor="httpx"), base_url=fake_api.openai_url,
                               api_key="k" * 12, max_retries=0)
        assert openai_agent(client, {"get_weather": bb.tool("get_weather", get_weather)}, "Paris?").startswith(
            "Weather:")
        bb.finish()
    assert len(fake_api.requests) == 2 and len(load(out).steps) == 7


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_blackbox_errors_reach_the_agent_once_unretried(fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    """A divergence inside an SDK call with retries on: one attempt, a `[blackbox]` message, the typed error from
    finish()."""
    import anthropic
    import openai

    fake_api.queue(anthropic_message(text="hello") if provider == "anthropic" else
                   json_reply({"id": "chatcmpl-abcdefghijk", "object": "chat.completion", "created": 1,
                               "model": "m", "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                   "role": "assistant", "content": "hello"}}]}))
    out = tmp_path / f"{provider}.json"
    attempts: list[str] = []
    hooks = {"request": [lambda request: attempts.append(request.url.path)]}

    def client(bb: blackbox.Session) -> Any:
        if provider == "anthropic":
            return anthropic.Anthropic(http_client=bb.http_client(event_hooks=hooks), base_url=fake_api.url,
                                       api_key="k" * 12, max_retries=3)
        return openai.OpenAI(http_client=bb.http_client(event_hooks=hooks), base_url=fake_api.openai_url,
                             api_key="k" * 12, max_retries=3)

    def ask(c: Any, text: str) -> Any:
        messages = [{"role": "user", "content": text}]
        if provider == "anthropic":
            return c.messages.create(model="m", max_tokens=8, messages=messages)
        return c.chat.completions.create(model="m", messages=messages)

    bb = blackbox.session("record", out=out)
    ask(client(bb), "hi")
    bb.finish()
    attempts.clear()

    bb = blackbox.session("replay", cassette=out)
    sdk_error = anthropic.BadRequestError if provider == "anthropic" else openai.BadRequestError
    with pytest.raises(sdk_error) as caught:
        ask(client(bb), "hello?")
    assert attempts == [attempts[0]]  # one request: the SDK did not retry
    body = caught.value.body
    message = (body["error"] if provider == "anthropic" else body)["message"]
    assert message.startswith("[blackbox] replay diverged at step 0, messages[0].content")
    assert blackbox.is_blackbox_error(caught.value)
    with pytest.raises(ReplayDivergenceError) as typed:
        bb.finish()
    assert blackbox.is_blackbox_error(typed.value) and typed.value.step == 0
    assert len(fake_api.requests) == 1


def test_the_agent_gets_the_original_response(fake_api: FakeAPI, tmp_path: Path) -> None:
    reply = json_reply(anthropic_message(text="Hello."), headers=[("request-id", "req_original")], encoding="gzip")
    fake_api.queue(reply)
    import anthropic

    bb = blackbox.session("record", out=tmp_path / "raw.json")
    client = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake_api.url, api_key="k" * 12,
                                 max_retries=0)
    raw = client.messages.with_raw_response.create(model="m", max_tokens=8, messages=HI)
    assert raw.headers["request-id"] == "req_original" and raw.headers["content-encoding"] == "gzip"
    assert raw.parse().id.startswith("msg_01")
    assert raw.elapsed.total_seconds() > 0  # read inside the transport, so the transport times it
    bb.finish()


def test_a_users_own_transport_is_wrapped(tmp_path: Path) -> None:
    import anthropic

    served: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        served.append(request.url.path)
        return httpx2.Response(200, json=anthropic_message(text="from my transport"))

    out = tmp_path / "mine.json"
    bb = blackbox.session("record", out=out)
    client = anthropic.Anthropic(http_client=bb.http_client(transport=httpx2.MockTransport(handler)),
                                 base_url="http://example.invalid", api_key="k" * 12, max_retries=0)
    assert anthropic_agent(client, {}, "hi") == "from my transport"
    bb.finish()
    assert served == ["/v1/messages"]
    assert load(out).steps[1].payload == {"type": "final_answer", "text": "from my transport"}


def test_proxy_mounts_from_the_environment_are_wrapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy variable mounts a proxy transport that would bypass the default one; replay still answers."""
    import anthropic

    cassette = tmp_path / "p.json"
    bb = blackbox.session("record", out=cassette)
    client = anthropic.Anthropic(
        http_client=bb.http_client(transport=httpx2.MockTransport(
            lambda r: httpx2.Response(200, json=anthropic_message(text="ok")))),
        base_url="http://api.example.invalid", api_key="k" * 12, max_retries=0)
    anthropic_agent(client, {}, "hi")
    bb.finish()

    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    bb = blackbox.session("replay", cassette=cassette)
    http_client = bb.http_client()
    mounted = [t for t in http_client._mounts.values() if t is not None]
    assert mounted and all(type(t).__name__ == "BlackboxTransport" for t in mounted)
    client = anthropic.Anthropic(http_client=http_client, base_url="http://api.example.invalid", api_key="k" * 12,
                                 max_retries=0)
    assert anthropic_agent(client, {}, "hi") == "ok"
    assert bb.finish().status == "success"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_replayed_answers_pass_strict_sdk_validation(fake_api: FakeAPI, tmp_path: Path, provider: str) -> None:
    import anthropic
    import openai

    fake_api.brain = weather_brain(provider, cities=["Paris", "Oslo"])
    out = tmp_path / f"strict-{provider}.json"
    answers = []
    for mode in ("record", "replay"):
        bb = blackbox.session(mode, out=out if mode == "record" else None, cassette=out if mode == "replay" else None)
        tools = bb.tools({"get_weather": get_weather})
        if provider == "anthropic":
            client = anthropic.Anthropic(http_client=bb.http_client(), base_url=fake_api.url, api_key="k" * 12,
                                         max_retries=0, _strict_response_validation=True)
            answers.append(anthropic_agent(client, tools, "Weather?"))
        else:
            client = openai.OpenAI(http_client=bb.http_client(), base_url=fake_api.openai_url, api_key="k" * 12,
                                   max_retries=0, _strict_response_validation=True)
            answers.append(openai_agent(client, tools, "Weather?"))
        bb.finish()
    assert answers[0] == answers[1] and len(fake_api.requests) == 2


def test_async_transport_network_errors_release_the_call(tmp_path: Path) -> None:
    """A connection failure is the SDK's to retry; the session is free for the next attempt."""
    import anthropic

    attempts = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        attempts.append(1)
        if len(attempts) == 1:
            raise httpx2.ConnectError("refused", request=request)
        return httpx2.Response(200, json=anthropic_message(text="second try"))

    async def run() -> str:
        bb = blackbox.session("record", out=tmp_path / "net.json")
        client = anthropic.AsyncAnthropic(
            http_client=bb.async_http_client(transport=httpx2.MockTransport(handler)),
            base_url="http://example.invalid", api_key="k" * 12, max_retries=1)
        reply = await client.messages.create(model="m", max_tokens=8, messages=HI)
        bb.finish()
        return reply.content[0].text

    assert asyncio.run(run()) == "second try" and len(attempts) == 2
    assert len(load(tmp_path / "net.json").steps) == 3


@pytest.mark.parametrize("flavor", ["httpx2", "httpx"])
def test_a_client_the_agent_never_closes_closes_its_connections_when_collected(
        fake_api: FakeAPI, tmp_path: Path, flavor: str) -> None:
    """`http_client()` replaces the SDK's default client, which closes its connections when it is collected:
    an agent that never closes its SDK client leaves no open socket behind (no `ResourceWarning`)."""
    import anthropic

    fake_api.queue(anthropic_message(text="hello"))
    bb = blackbox.session("record", out=tmp_path / "dropped.json")
    http = bb.http_client(flavor)
    if flavor == "httpx2":  # the SDK's client holds it (and sits in reference cycles, freed by the collector)
        sdk: Any = anthropic.Anthropic(http_client=http, base_url=fake_api.url, api_key="k" * 12, max_retries=0)
        sdk.messages.create(model="m", max_tokens=8, messages=HI)
    else:  # the SDKs have moved to httpx2: an httpx client is the agent's own
        sdk = None
        http.post(fake_api.url + "/v1/messages", json={"model": "m", "max_tokens": 8, "messages": HI})
    bb.finish()
    assert len(fake_api.requests) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        del http, sdk
        gc.collect()
    port = f", {fake_api.url.rsplit(':', 1)[1]})"  # a socket to the fake API: `raddr=('127.0.0.1', PORT)`
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning) and port in str(w.message)] == []
