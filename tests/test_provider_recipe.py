"""docs/architecture.md's recipe "add a provider", for a dialect, done as a contributor would: one module (written
here into a temporary package, outside the repository) holding a subclass of the chat provider with data only,
and one line, its entry in `providers.PROVIDERS` — no other file.  The dialect (an OpenAI-compatible server that
takes a request control and a message field of its own and sends its reasoning in a field of its own) is then
routed, found by name, and records, verifies and replays calls through the real `openai` SDK against the fake
API, streamed and not; the same server reached as plain OpenAI keeps none of it."""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import blackbox
import blackbox.providers
from blackbox.format.cassette import load
from blackbox.format.secrets import PLACEHOLDER_KEYS
from blackbox.format.verify import verify
from blackbox.providers import OPENAI_CHAT, by_name, route
from blackbox.providers.base import CodecProvider
from blackbox.wire import Request
from tests import test_compat_servers as compat
from tests.fakeapi import FakeAPI
from tests.fakeapi_compat import Dialect
from tests.test_compat_servers import KEY

pytest_plugins = ["tests.conftest_fakeapi"]

ACME = '''
    """Acme's OpenAI-compatible server (a throwaway dialect): `acme_mode` changes its answers, a message may say
    which `persona` speaks, and its reasoning comes in `acme_thinking`."""

    from blackbox.providers.openai_chat import OpenAIChat


    class AcmeChat(OpenAIChat):
        name = "acme"
        label = "Acme Chat Completions"
        path_prefixes = ("/acme/v1",)
        kept_params = {**OpenAIChat.kept_params, "acme_mode": "acmeMode"}
        message_fields = {**OpenAIChat.message_fields, "persona": "persona"}
        reasoning_fields = ("acme_thinking",)


    PROVIDER = AcmeChat()
'''

#: The server, reached at Acme's base path and at another one (where the OpenAI provider takes it).
SERVER = Dialect(name="acme", base_path="/acme/v1", model="acme-large", reasoning_field="acme_thinking",
                 request_extra={"acme_mode": "careful", "acme_trace": "t-18"}, kept={"acmeMode": "careful"})
ELSEWHERE = Dialect(**{**SERVER.__dict__, "base_path": "/other/v1"})


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The recipe: the dialect's module in a temporary package, then its line in `PROVIDERS` (for the test only:
    before the provider it specializes, since the first that matches a request takes it)."""
    root = tmp_path / "throwaway"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "acme.py").write_text(textwrap.dedent(ACME))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("throwaway.acme")
    monkeypatch.setattr(blackbox.providers, "PROVIDERS", (module.PROVIDER, *blackbox.providers.PROVIDERS))
    yield module
    for name in [name for name in sys.modules if name == "throwaway" or name.startswith("throwaway.")]:
        del sys.modules[name]


PERSONA = {"persona": "traveller"}  # the dialect's message field, on the agent's user message


def record(fake: FakeAPI, server: Dialect, out: Path, *, stream: bool) -> tuple[str, list[str]]:
    """`test_compat_servers`' weather agent, recorded through the real SDK; it sent the server's own fields."""
    answer, seen = compat.record(fake, server, out, stream=stream, user_extra=PERSONA)
    sent = fake.requests[0].body
    assert sent["acme_mode"] == "careful" and sent["messages"][1]["persona"] == "traveller"
    return answer, seen


def chat_request(path: str) -> Request:
    return Request("POST", f"http://127.0.0.1{path}", "127.0.0.1", path, body=b"{}")


def test_a_dialect_is_a_subclass_with_data_and_one_line(acme: Any) -> None:
    cls = type(acme.PROVIDER)
    own = {name: value for name, value in vars(cls).items() if not name.startswith("__")}
    assert own and not any(inspect.isfunction(value) or isinstance(value, (staticmethod, classmethod, property))
                           for value in own.values()), "a dialect holds data, no code"
    assert isinstance(acme.PROVIDER, CodecProvider) and by_name("acme") is acme.PROVIDER
    assert route(chat_request("/acme/v1/chat/completions")) is acme.PROVIDER
    assert route(chat_request("/v1/chat/completions")) is OPENAI_CHAT  # every other chat server stays OpenAI's
    assert route(chat_request("/acme/v1/models")) is None


def test_hosts_narrow_a_dialect_to_its_servers(acme: Any) -> None:
    """`hosts` names a host or the domain its subdomains share; the port and other hosts are not it."""
    hosted = type("HostedAcme", (type(acme.PROVIDER),), {"name": "hosted", "hosts": ("acme.example",),
                                                          "path_prefixes": ()})()

    def at(host: str, path: str = "/v1/chat/completions") -> Request:
        return Request("POST", f"https://{host}{path}", host, path, body=b"{}")

    assert hosted.matches(at("acme.example")) and hosted.matches(at("eu.acme.example"))
    assert not hosted.matches(at("notacme.example")) and not hosted.matches(at("acme.example.org"))
    assert not hosted.matches(at("acme.example", "/v1/embeddings"))
    assert hosted.matches_shape(at("eu.acme.example")) is True  # decided by the shape: `route` remembers it


def test_the_registry_forgets_a_dialect_taken_out(acme: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`route` remembers what a request's shape decided; a changed registry is asked again."""
    request = chat_request("/acme/v1/chat/completions")
    assert route(request) is acme.PROVIDER
    monkeypatch.setattr(blackbox.providers, "PROVIDERS", blackbox.providers.PROVIDERS[1:])
    assert route(request) is OPENAI_CHAT


@pytest.mark.parametrize("stream", [False, True], ids=["unstreamed", "streamed"])
def test_the_dialect_records_and_replays_through_the_sdk(acme: Any, fake_api: FakeAPI, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    out = tmp_path / "acme.json"
    answer, seen = record(fake_api, SERVER, out, stream=stream)
    assert answer == "Weather: sunny in Paris" and seen == ["The user wants Paris: call get_weather.",
                                                            "I have the forecast."]
    cassette = load(out)
    assert verify(cassette).ok and KEY not in out.read_text() and "t-18" not in out.read_text()
    first, output = cassette.steps[0], cassette.steps[1]
    # its data at work: its control kept (its trace id dropped), its message field kept, its reasoning aside
    assert first.payload["params"] == {"temperature": 0.2, "acmeMode": "careful"}
    assert first.payload["messages"] == [{"role": "user", "content": "Weather in Paris?", "persona": "traveller"}]
    assert first.payload["systemPrompt"] == "Be brief."
    assert output.payload["thoughts"] == [{"text": seen[0], "field": "acme_thinking"}]
    assert output.origin is not None and output.origin.api == "acme"

    # replay, offline and with no key: the agent sees the reasoning in the dialect's own field again
    monkeypatch.setenv("OPENAI_API_KEY", PLACEHOLDER_KEYS["OPENAI_API_KEY"])
    for replayed in (False, True):
        fake_api.reset()
        bb = blackbox.session("replay", cassette=out)
        assert compat.agent(bb, fake_api, SERVER, stream=replayed, user_extra=PERSONA) == (answer, seen)
        assert bb.finish().status == "success" and fake_api.requests == []


def test_the_same_server_as_plain_openai_keeps_none_of_it(acme: Any, fake_api: FakeAPI, tmp_path: Path) -> None:
    """The dialect's data is its own: at another base path the OpenAI provider records the server, and drops
    its control, its message field and its reasoning field, as it drops any field it does not name."""
    out = tmp_path / "plain.json"
    record(fake_api, ELSEWHERE, out, stream=False)
    cassette = load(out)
    assert cassette.steps[0].payload["params"] == {"temperature": 0.2}
    assert cassette.steps[0].payload["messages"] == [{"role": "user", "content": "Weather in Paris?"}]
    assert "thoughts" not in cassette.steps[1].payload
    assert cassette.steps[1].origin is not None and cassette.steps[1].origin.api == "openai"


EXTRA_FIELD = {  # each API's path and minimal request, with one field its provider does not keep
    "anthropic": ("/v1/messages", {"model": "claude-x", "max_tokens": 5,
                                   "messages": [{"role": "user", "content": "Hi"}], "x_extra": 1}),
    "openai": ("/v1/chat/completions", {"model": "gpt-x", "messages": [{"role": "user", "content": "Hi"}],
                                        "x_extra": 1}),
    "responses": ("/v1/responses", {"model": "gpt-x", "input": "Hi", "x_extra": 1}),
    "gemini": ("/v1beta/models/gemini-x:generateContent",
               {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}], "generationConfig": {"x_extra": 1}}),
}


@pytest.mark.parametrize("name", sorted(EXTRA_FIELD))
def test_every_provider_reads_its_kept_params_from_its_class(name: str) -> None:
    """A subclass that keeps one more control keeps it when recording (the session's way in, `read_request`:
    Gemini's typed path included) and sends it back in the what-if: the codec reads the class's `kept_params`
    (and the `sent_fields` derived from it), not a module's table."""
    from blackbox.providers.neutral import CallIds

    base = by_name(name)
    assert base is not None
    path, body = EXTRA_FIELD[name]
    sent = Request("POST", f"https://api.example{path}", "api.example", path, body=json.dumps(body).encode())
    assert base.read_request(sent, CallIds())[1].get("params", {}).get("xExtra") is None
    wider = type(f"Wider{type(base).__name__}", (type(base),),
                 {"name": f"wider-{name}", "kept_params": {**base.kept_params, "x_extra": "xExtra"}})()
    if name == "gemini":  # its common body is read in one typed pass, never by the dict codec, with the same table
        wider.normalize_request = lambda body, ids: pytest.fail("the typed pass refused a kept field")
    payload = wider.read_request(sent, CallIds())[1]
    assert payload["params"]["xExtra"] == 1
    built = wider.build_request(payload)
    assert (built["generationConfig"] if name == "gemini" else built)["x_extra"] == 1
