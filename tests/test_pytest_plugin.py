"""The pytest plugin, driven by `pytester`: real SDK agents recorded against the fake API, then replayed with no
key and no network; missing, tampered and diverging cassettes; bypasses; record modes; async; xdist."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic  # noqa: F401  (imported here: an in-process run drops the modules it imported itself)
import httpcore2  # noqa: F401  (httpx2 imports it at the first request; a second copy's errors go unmapped)
import httpx  # noqa: F401
import httpx2
import openai  # noqa: F401
import pytest
import requests.adapters

import tests.agents.loops
import tests.agents.stream_agent  # noqa: F401
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, anthropic_message, weather_brain

pytest_plugins = ["pytester", "tests.conftest_fakeapi"]

ROOT = Path(__file__).resolve().parent.parent
# Plugins the inner runs do not need (the snapshot plugin shares a temp folder with the outer run).
NO_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:syrupy", "-p", "no:hypothesispytest",
              "-o", "asyncio_default_fixture_loop_scope=function")
KEY = "sk-ant-api03-plugin-test-key-0123456789abcdef"

AGENT_TEST = '''
import os
import anthropic
import pytest
from tests.agents.loops import anthropic_agent, get_weather, book_hotel

URL = os.environ["FAKE_URL"]
PROMPT = "What is the weather in Paris?"


def test_weather(blackbox):
    client = anthropic.Anthropic(http_client=blackbox.http_client(), base_url=URL, max_retries=0)
    answer = anthropic_agent(client, blackbox.tools({"get_weather": get_weather, "book_hotel": book_hotel}), PROMPT)
    assert answer.startswith("Weather:")
    blackbox.assert_outcome(status="success", tools=["get_weather"])
'''

CASSETTE = Path("cassettes/test_agent/test_weather.json")


def provider_of(body: dict[str, Any]) -> str:
    """Which API a request body is for: Anthropic's always has max_tokens (these OpenAI ones do not), a
    Responses one has `input` and no `messages`."""
    if "messages" not in body:
        return "responses"
    return "anthropic" if "max_tokens" in body else "openai"


def brain(body: dict[str, Any]) -> Any:
    """The weather agent for every API."""
    return weather_brain(provider_of(body))(body)


@pytest.fixture
def api(fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    """The fake API with the weather brain; its URL in FAKE_URL; a key for recording; no BLACKBOX_* or CI."""
    fake_api.brain = brain
    monkeypatch.setenv("FAKE_URL", fake_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "k" * 40)
    for name in [n for n in os.environ if n.startswith("BLACKBOX_")] + ["CI"]:
        monkeypatch.delenv(name, raising=False)
    yield fake_api


def offline(api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, and a server that fails the test if it is reached at all."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    api.reset()


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(*NO_PLUGINS, *args)


def record(pytester: pytest.Pytester, api: FakeAPI, *args: str) -> pytest.RunResult:
    result = run(pytester, "--blackbox-record", *args)
    result.assert_outcomes(passed=1)
    assert api.requests, "recording reached the fake API"
    return result


def lines(result: pytest.RunResult) -> str:
    return "\n".join(result.outlines)


def says_err(result: pytest.RunResult, *snippets: str) -> None:
    text = "\n".join(result.errlines)
    for snippet in snippets:
        assert snippet in text, f"not in stderr: {snippet!r}\n{text}"


def says(result: pytest.RunResult, *snippets: str) -> None:
    """Each snippet is in the output, in this order (plain text: the messages are full of brackets)."""
    text, at = lines(result), 0
    for snippet in snippets:
        found = text.find(snippet, at)
        assert found >= 0, f"not in the output (after offset {at}): {snippet!r}\n{text}"
        at = found + len(snippet)


# ---------------------------------------------------------------------------------------------------------
# record, replay, missing

FIXTURE_CLIENT = AGENT_TEST.replace(
    "def test_weather(blackbox):\n    client = anthropic.Anthropic(",
    "@pytest.fixture\ndef client(blackbox):\n    return anthropic.Anthropic(",
).replace(
    "max_retries=0)\n    answer",
    "max_retries=0)\n\n\ndef test_weather(blackbox, client):\n    answer",
)


def test_a_client_built_in_a_fixture_records_and_replays(pytester: pytest.Pytester, api: FakeAPI,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The recording starts while the fixture runs: the network guard must not come back on for the test."""
    assert "def client(blackbox)" in FIXTURE_CLIENT and "def test_weather(blackbox, client)" in FIXTURE_CLIENT
    pytester.makepyfile(test_agent=FIXTURE_CLIENT)
    record(pytester, api)
    offline(api, monkeypatch)
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert api.requests == []


KEPT_CLIENT = AGENT_TEST.replace(
    "    answer = anthropic_agent", "    KEPT.append(client)\n    answer = anthropic_agent",
).replace("PROMPT = ", "KEPT = []\nPROMPT = ") + """

def test_the_client_was_closed():
    (client,) = KEPT
    assert client._client.is_closed, "the fixture closes the test's clients as it ends"
"""


def test_the_fixtures_clients_are_closed_as_the_test_ends(pytester: pytest.Pytester, api: FakeAPI,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A test need not close the client it gave the SDK: its kept-alive connection would otherwise be freed by
    the garbage collector later, as a ResourceWarning in whatever test runs then."""
    pytester.makepyfile(test_agent=KEPT_CLIENT)
    run(pytester, "--blackbox-record", "-p", "no:randomly").assert_outcomes(passed=2)
    offline(api, monkeypatch)
    run(pytester, "-p", "no:randomly").assert_outcomes(passed=2)


def test_a_pace_in_the_environment_is_not_the_plugins(pytester: pytest.Pytester, api: FakeAPI,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """BLACKBOX_* set for `blackbox replay -- cmd` sessions (here a bad pace) do not reach the plugin's."""
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    monkeypatch.setenv("BLACKBOX_PACE", "bogus")
    run(pytester).assert_outcomes(passed=1)



def test_record_then_replay_offline(pytester: pytest.Pytester, api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    result = record(pytester, api)
    says(result, "cassettes: 0 replayed, 1 recorded, 0 missing, 0 diverged")
    path = pytester.path / CASSETTE
    cassette = load(path)
    assert verify(cassette).ok
    assert cassette.id == "test_weather"
    assert [s.type for s in cassette.steps][:3] == ["model_input", "model_output", "tool_call"]
    assert KEY not in path.read_text()
    assert not [p.name for p in path.parent.iterdir() if p.name != path.name], "no temp file or journal is left"

    offline(api, monkeypatch)
    result = run(pytester)
    result.assert_outcomes(passed=1)
    says(result, "cassettes: 1 replayed, 0 recorded, 0 missing, 0 diverged")
    assert api.requests == []
    assert "ANTHROPIC_API_KEY" not in os.environ


def test_missing_cassette_fails_with_the_record_command(pytester: pytest.Pytester, api: FakeAPI) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    says(
        result,
        f"[blackbox] no cassette at {CASSETTE}; this test replays it and never calls a live API.",
        "record it: pytest test_agent.py::test_weather --blackbox-record",
        "cassettes: 0 replayed, 0 recorded, 1 missing, 0 diverged",
    )
    assert api.requests == []
    assert not (pytester.path / CASSETTE).exists()


def test_record_new_keeps_existing_and_all_rerecords(pytester: pytest.Pytester, api: FakeAPI) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    path = pytester.path / CASSETTE
    first = path.read_bytes()
    api.reset()
    api.brain = brain
    result = run(pytester, "--blackbox-record")  # new: the cassette exists, so it replays
    result.assert_outcomes(passed=1)
    assert api.requests == [] and path.read_bytes() == first
    result = run(pytester, "--blackbox-record=all")
    result.assert_outcomes(passed=1)
    assert api.requests and path.read_bytes() != first  # new timestamps
    assert verify(path).ok


def test_a_failing_test_keeps_the_old_cassette(pytester: pytest.Pytester, api: FakeAPI) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    path = pytester.path / CASSETTE
    before = path.read_bytes()
    pytester.makepyfile(test_agent=AGENT_TEST.replace('assert answer.startswith("Weather:")', "assert answer == 'x'"))
    result = run(pytester, "--blackbox-record=all")
    result.assert_outcomes(failed=1)
    assert path.read_bytes() == before
    says(
        result,
        "cassettes: 0 replayed, 0 recorded, 0 missing, 0 diverged, 1 not re-recorded",
        f"{CASSETTE}: not re-recorded: the test failed, the old cassette is kept",
    )
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_failing_test_under_record_new_writes_nothing(pytester: pytest.Pytester, api: FakeAPI) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST.replace('assert answer.startswith("Weather:")', "assert 0"))
    result = run(pytester, "--blackbox-record")
    result.assert_outcomes(failed=1)
    assert not (pytester.path / CASSETTE).exists()
    says(result, f"{CASSETTE}: not recorded: the test failed")


# ---------------------------------------------------------------------------------------------------------
# divergence


def test_a_changed_prompt_fails_with_the_replay_report(pytester: pytest.Pytester, api: FakeAPI,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    pytester.makepyfile(test_agent=AGENT_TEST.replace("in Paris?", "in Paris today?"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    says(
        result,
        f"[blackbox] {CASSETTE}: replay diverged at step 0, messages[0].content",
        '  recorded: "What is the weather in Paris?"',
        '  actual:   "What is the weather in Paris today?"',
        "the agent sent a different request than the one recorded",
        "--match sequence",
        "if the change is intended, re-record: pytest test_agent.py::test_weather --blackbox-record=all",
        "cassettes: 0 replayed, 0 recorded, 0 missing, 1 diverged",  # counted once
    )
    text = lines(result)
    for sdk in ("_base_client", "BadRequestError", "Error code: 400", "During handling"):
        assert sdk not in text, f"no traceback through the SDK: {sdk}"
    assert api.requests == []

    result = run(pytester, "--blackbox-match", "sequence")
    result.assert_outcomes(passed=1)


ORDER_TEST = '''
import os
import anthropic

URL = os.environ["FAKE_URL"]
QUESTIONS = ["Name a red fruit, please, in one word", "Name a large grey animal with a trunk"]


def test_order(blackbox):
    client = anthropic.Anthropic(http_client=blackbox.http_client(), base_url=URL, max_retries=0)
    for question in QUESTIONS:
        client.messages.create(model="claude-sonnet-4-6", max_tokens=64,
                               messages=[{"role": "user", "content": question}])
'''


def test_reordered_calls_name_the_nearest_recorded_request(pytester: pytest.Pytester, api: FakeAPI,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    api.brain = lambda body: anthropic_message(text="an answer")
    pytester.makepyfile(test_order=ORDER_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    pytester.makepyfile(test_order=ORDER_TEST.replace("QUESTIONS = [", "QUESTIONS = [*reversed([").replace(
        'trunk"]', 'trunk"])]'))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    says(
        result,
        "replay diverged at step 0, messages[0].content",
        "nearest recorded request: step 2 (",
        "% of its text matches the request the agent sent, step 0 ",
        "%); did the order of the calls change?",
    )


def test_fewer_calls_than_recorded_fail_at_the_end(pytester: pytest.Pytester, api: FakeAPI,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    api.brain = lambda body: anthropic_message(text="an answer")
    pytester.makepyfile(test_order=ORDER_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    pytester.makepyfile(test_order=ORDER_TEST.replace("for question in QUESTIONS:", "for question in QUESTIONS[:1]:"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    says(result, "replay diverged at step 2, end of run", "recorded: 1 more model call")


# ---------------------------------------------------------------------------------------------------------
# verify before replay


def test_a_tampered_cassette_fails_with_verify_s_line(pytester: pytest.Pytester, api: FakeAPI,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    path = pytester.path / CASSETTE
    original = path.read_text()
    data = json.loads(original)
    data["steps"][3]["payload"]["result"]["temp_c"] = 35  # the tool result
    path.write_text(json.dumps(data))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    says(
        result,
        f"[blackbox] {CASSETTE}: hash_chain failed at step 3: ",
        "; the file changed after it was recorded",
        "re-record it: pytest test_agent.py::test_weather --blackbox-record=all",
        "1 broken",
    )
    path.write_text(original[: len(original) // 2])  # truncated
    result = run(pytester)
    result.assert_outcomes(failed=1)
    says(result, f"[blackbox] {CASSETTE}: ")
    assert "Traceback" not in lines(result)
    assert api.requests == []


# ---------------------------------------------------------------------------------------------------------
# nothing goes around Blackbox


BYPASS_TEST = '''
import os
import socket
import anthropic
import httpx
import httpx2
import pytest
import requests

URL = os.environ["FAKE_URL"]


def call_sdk(client):
    client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "hi"}])


@pytest.mark.blackbox("cassettes/test_agent/test_weather.json")
def test_sdk_without_blackbox(blackbox):
    blackbox.http_client()
    call_sdk(anthropic.Anthropic(base_url=URL, http_client=httpx2.Client()))


@pytest.mark.blackbox("cassettes/test_agent/test_weather.json")
def test_swallowed(blackbox):
    blackbox.http_client()
    try:
        httpx.get(URL + "/health")
    except BaseException:
        pass


@pytest.mark.blackbox("cassettes/test_agent/test_weather.json")
def test_requests(blackbox):
    requests.get(URL + "/health", timeout=1)


@pytest.mark.blackbox("cassettes/test_agent/test_weather.json")
def test_raw_socket(blackbox):
    host, port = URL.removeprefix("http://").split(":")
    with socket.socket() as sock:  # closed even when refused (create_connection's is not)
        sock.settimeout(600)  # a hang guard: the guard refuses before any connection is tried
        sock.connect((host, int(port)))


@pytest.mark.blackbox("cassettes/test_agent/test_weather.json", allow_hosts=["localhost", "127.0.0.1"])
def test_allowed(blackbox):
    assert httpx2.get(URL + "/health").status_code == 404
    host, port = URL.removeprefix("http://").split(":")
    socket.create_connection((host, int(port)), timeout=600).close()
'''


def test_requests_around_blackbox_fail_naming_the_url(pytester: pytest.Pytester, api: FakeAPI,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    pytester.makepyfile(test_bypass=BYPASS_TEST)
    originals = (socket.socket.connect, httpx2.HTTPTransport.handle_request, requests.adapters.HTTPAdapter.send)
    result = run(pytester, "test_bypass.py")
    result.assert_outcomes(failed=4, passed=1)
    url = api.url
    says(
        result,
        f"[blackbox] a request went around Blackbox: httpx2 POST {url}/v1/messages",
        "nothing else may use the network",
        "allow_hosts",
    )
    text = lines(result)
    assert f"the test made requests around Blackbox (caught and swallowed): httpx GET {url}/health" in text
    assert f"around Blackbox: requests GET {url}/health" in text
    assert f"around Blackbox: a socket connection to {url.removeprefix('http://')}" in text
    assert "4 bypassed Blackbox" in text
    assert [r.path for r in api.requests] == ["/health"], "only the allowed test reached the server"
    assert (socket.socket.connect, httpx2.HTTPTransport.handle_request, requests.adapters.HTTPAdapter.send) == \
        originals, "every patch is undone after the test"


def test_the_ini_setting_allows_hosts(pytester: pytest.Pytester, api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    pytester.makeini("[pytest]\nblackbox_allow_hosts = 127.0.0.1\n")
    pytester.makepyfile(test_bypass=BYPASS_TEST)
    result = run(pytester, "test_bypass.py", "-k", "requests or raw_socket")
    result.assert_outcomes(passed=2)


# ---------------------------------------------------------------------------------------------------------
# both SDKs, async, several cassettes, parametrized names


OPENAI_AND_ASYNC_TEST = '''
import os
import anthropic
import openai
import pytest
from tests.agents.loops import (async_anthropic_agent, async_openai_agent, aget_weather, abook_hotel, openai_agent,
                                get_weather, book_hotel)

URL = os.environ["FAKE_URL"]


def test_openai(blackbox):
    with openai.OpenAI(http_client=blackbox.http_client(), base_url=URL + "/v1", max_retries=0) as client:
        answer = openai_agent(client, blackbox.tools({"get_weather": get_weather, "book_hotel": book_hotel}), "Paris?")
    assert answer.startswith("Weather:")
    blackbox.assert_outcome(status="success", tools=["get_weather"], final_answer=answer)


@pytest.mark.asyncio
async def test_async_anthropic(blackbox):
    tools = blackbox.tools({"get_weather": aget_weather, "book_hotel": abook_hotel})
    async with anthropic.AsyncAnthropic(http_client=blackbox.async_http_client(), base_url=URL,
                                        max_retries=0) as client:
        assert (await async_anthropic_agent(client, tools, "Paris?")).startswith("Weather:")


@pytest.mark.anyio
async def test_anyio_openai(blackbox):
    tools = blackbox.tools({"get_weather": aget_weather, "book_hotel": abook_hotel})
    async with openai.AsyncOpenAI(http_client=blackbox.async_http_client(), base_url=URL + "/v1",
                                  max_retries=0) as client:
        assert (await async_openai_agent(client, tools, "Paris?")).startswith("Weather:")


@pytest.mark.parametrize("city", ["Paris", "Oslo/Nord"])
def test_two_agents(blackbox, city):
    planner = blackbox.session("planner")
    from tests.agents.loops import anthropic_agent
    with anthropic.Anthropic(http_client=blackbox.http_client(), base_url=URL, max_retries=0) as a:
        anthropic_agent(a, blackbox.tools({"get_weather": get_weather}), city)
    with openai.OpenAI(http_client=planner.http_client(), base_url=URL + "/v1", max_retries=0) as o:
        openai_agent(o, planner.tools({"get_weather": get_weather}), city)
    planner.assert_outcome(status="success")
'''


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_openai_async_and_several_cassettes(pytester: pytest.Pytester, api: FakeAPI,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_more=OPENAI_AND_ASYNC_TEST)
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef anyio_backend():\n    return 'asyncio'\n")
    result = run(pytester, "--blackbox-record")
    result.assert_outcomes(passed=5)
    folder = pytester.path / "cassettes" / "test_more"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["test_anyio_openai.json", "test_async_anthropic.json", "test_openai.json",
                     "test_two_agents-Oslo-Nord-" + names[3].split("-")[-1], "test_two_agents-Oslo-Nord-"
                     + names[4].split("-", 3)[-1], "test_two_agents-Paris.json", "test_two_agents-Paris.planner.json"]
    assert all(verify(folder / name).ok for name in names)
    offline(api, monkeypatch)
    result = run(pytester)
    result.assert_outcomes(passed=5)
    says(result, "cassettes: 7 replayed, 0 recorded, 0 missing, 0 diverged")
    assert api.requests == []


def test_assert_outcome_failure_names_the_expectation(pytester: pytest.Pytester, api: FakeAPI) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST.replace('tools=["get_weather"]', 'tools=["book_hotel"]'))
    result = run(pytester, "--blackbox-record")
    result.assert_outcomes(failed=1)
    says(
        result,
        "[blackbox] assert_outcome failed for",
        "test_weather.json:",
        "tools: expected 'book_hotel', found 'get_weather'",
    )


# ---------------------------------------------------------------------------------------------------------
# CI, xdist


def test_blackbox_record_is_refused_under_ci(pytester: pytest.Pytester, api: FakeAPI,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("BLACKBOX_RECORD", "all")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    says_err(result, "BLACKBOX_RECORD=all is set under CI", "BLACKBOX_RECORD_IN_CI=1")
    assert api.requests == []
    monkeypatch.setenv("BLACKBOX_RECORD_IN_CI", "1")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    monkeypatch.delenv("CI")
    monkeypatch.setenv("BLACKBOX_RECORD", "sometimes")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR


XDIST_TEST = '''
import os
import anthropic
import pytest
from tests.agents.loops import anthropic_agent, get_weather

URL = os.environ["FAKE_URL"]


@pytest.mark.parametrize("city", ["Paris", "Oslo", "Lisbon", "Rome"])
def test_city(blackbox, city):
    client = anthropic.Anthropic(http_client=blackbox.http_client(), base_url=URL, max_retries=0)
    anthropic_agent(client, blackbox.tools({"get_weather": get_weather}), f"Weather in {city}?")
    blackbox.assert_outcome(status="success", tools=["get_weather"])
'''


def test_xdist_workers_record_their_own_cassettes(pytester: pytest.Pytester, api: FakeAPI,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    pytester.makepyfile(test_many=XDIST_TEST)
    result = pytester.runpytest_subprocess(*NO_PLUGINS, "-n", "2", "-v", "--blackbox-record")
    result.assert_outcomes(passed=4)
    says(result, "[gw0]", "PASSED")
    says(result, "[gw1]", "PASSED")  # both workers recorded
    says(result, "cassettes: 0 replayed, 4 recorded, 0 missing, 0 diverged")
    folder = pytester.path / "cassettes" / "test_many"
    files = sorted(folder.iterdir())
    assert [p.name for p in files] == [f"test_city-{c}.json" for c in ("Lisbon", "Oslo", "Paris", "Rome")]
    for path, city in zip(files, ("Lisbon", "Oslo", "Paris", "Rome"), strict=True):
        cassette = load(path)
        assert verify(cassette).ok and cassette.id == path.stem
        assert cassette.steps[0].payload["messages"][0]["content"] == f"Weather in {city}?"
    offline(api, monkeypatch)
    result = run(pytester)  # (in this process: a second xdist run would add seconds and show nothing new)
    result.assert_outcomes(passed=4)
    says(result, "cassettes: 4 replayed, 0 recorded, 0 missing, 0 diverged")
    assert api.requests == []


def readme_tests() -> dict[str, str]:
    """The README's example test files: python blocks that start with `# tests/<name>.py`."""
    text = (ROOT / "README.md").read_text()
    found = {}
    for block in text.split("```python\n")[1:]:
        code = block.split("```", 1)[0]
        first = code.splitlines()[0]
        if first.startswith("# tests/test_"):
            found[first.removeprefix("# ")] = code
    return found


# The Agents SDK example leaves its client in the SDK's global: closed as the test ends, in the test's loop.
CLOSE_THE_GLOBAL_CLIENT = """
import pytest_asyncio
from agents.models import _openai_shared


@pytest_asyncio.fixture(autouse=True)
async def _the_global_client_closed():
    yield
    client, _openai_shared._default_openai_client = _openai_shared._default_openai_client, None
    if client is not None:
        await client.close()
"""


def test_the_readme_examples_record_and_replay(pytester: pytest.Pytester, api: FakeAPI,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.models import _openai_shared

    examples = readme_tests()
    assert sorted(examples) == ["tests/test_travel_agent.py", "tests/test_travel_agent_agents_sdk.py",
                                "tests/test_travel_agent_openai.py"]
    for name, code in examples.items():
        pytester.path.joinpath(name).parent.mkdir(exist_ok=True)
        pytester.path.joinpath(name).write_text(code)
    pytester.path.joinpath("tests/conftest.py").write_text(CLOSE_THE_GLOBAL_CLIENT)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("OPENAI_BASE_URL", api.openai_url)
    try:
        result = run(pytester, "tests", "--blackbox-record")
        result.assert_outcomes(passed=3)
        assert {request.path for request in api.requests} == {"/v1/messages", "/v1/chat/completions",
                                                              "/v1/responses"}
        for name in ("test_travel_agent", "test_travel_agent_openai", "test_travel_agent_agents_sdk"):
            cassette = pytester.path / "tests/cassettes" / name / "test_weather_agent.json"
            assert verify(cassette).ok, name
        offline(api, monkeypatch)
        monkeypatch.delenv("ANTHROPIC_BASE_URL")
        monkeypatch.delenv("OPENAI_BASE_URL")
        result = run(pytester, "tests")
        result.assert_outcomes(passed=3)
        assert api.requests == []
    finally:
        _openai_shared._default_openai_client = None  # the example sets a global; later tests must not see it


def test_the_plugin_is_registered_by_its_entry_point() -> None:
    from importlib.metadata import entry_points

    assert [e.value for e in entry_points(group="pytest11") if e.name == "blackbox"] == ["blackbox.plugin.plugin"]
    assert sys.modules.get("blackbox.plugin.plugin") is not None


def test_cassette_names_are_safe_and_distinct() -> None:
    from blackbox.plugin.cassettes import safe_name as _safe

    assert _safe("test_x") == "test_x"
    assert _safe("test_x[anthropic-1]") == "test_x-anthropic-1"
    slash, colon = _safe("test_x[a/b]"), _safe("test_x[a:b]")
    assert slash.startswith("test_x-a-b-") and colon.startswith("test_x-a-b-") and slash != colon
    assert _safe("test_é[ü]") != _safe("test_e[u]")
    long = _safe("test_" + "x" * 300)
    assert len(long) <= 100 and long != _safe("test_" + "x" * 301)
    assert "/" not in _safe("test[../../etc/passwd]") and not _safe("test[../../x]").startswith(".")


SKIP_AND_SEQUENCE_TEST = AGENT_TEST + '''

@pytest.mark.blackbox("cassettes/test_agent/test_weather.json", match="sequence")
def test_sequence(blackbox):
    client = anthropic.Anthropic(http_client=blackbox.http_client(), base_url=URL, max_retries=0)
    tools = blackbox.tools({"get_weather": get_weather, "book_hotel": book_hotel})
    assert anthropic_agent(client, tools, PROMPT + " (asked differently)").startswith("Weather:")


@pytest.mark.blackbox("cassettes/test_agent/test_weather.json")
def test_skipped(blackbox):
    blackbox.http_client()
    pytest.skip("not today")
'''


def test_the_marker_s_match_and_a_skipped_test(pytester: pytest.Pytester, api: FakeAPI,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    pytester.makepyfile(test_agent=SKIP_AND_SEQUENCE_TEST)
    result = run(pytester)
    result.assert_outcomes(passed=2, skipped=1)
    says(result, "cassettes: 3 replayed, 0 recorded, 0 missing, 0 diverged")
    assert api.requests == []


# ---------------------------------------------------------------------------------------------------------
# streamed calls, the Responses API, the OpenAI Agents SDK, pydantic-ai


STREAM_AND_FRAMEWORKS_TEST = '''
import asyncio
import os

import agents
import pytest
from agents.models import _openai_shared
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from tests.agents import weather
from tests.agents.stream_agent import Address

URL = os.environ["FAKE_URL"]
ANSWER = "Weather: sunny in Paris; sunny in Rome"


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


@pytest.mark.parametrize("provider", ["anthropic", "openai", "responses"])
def test_streamed(blackbox, provider):
    # messages.stream(), chat.completions.stream(), responses.stream(): a two-turn agent with parallel tools
    assert weather.run(provider, blackbox, Address(URL), stream=True) == ANSWER
    blackbox.assert_outcome(status="success", tools=["get_weather", "get_weather"], final_answer=ANSWER)


@pytest.mark.asyncio
async def test_responses_async(blackbox):
    assert await weather.arun("responses", blackbox, Address(URL), stream=False) == ANSWER
    blackbox.assert_outcome(status="success", tools=["get_weather", "get_weather"])


@pytest.fixture
def agents_sdk():
    agents.set_tracing_disabled(True)  # its trace uploads would go around Blackbox
    yield agents
    _openai_shared._default_openai_client = None


@pytest.mark.asyncio
async def test_openai_agents_sdk(blackbox, agents_sdk):
    client = AsyncOpenAI(base_url=URL + "/v1", http_client=blackbox.async_http_client(), max_retries=0)
    agents_sdk.set_default_openai_client(client)
    agents_sdk.set_default_openai_api("responses")
    tool = agents_sdk.function_tool(blackbox.tool("get_weather", get_weather))
    agent = agents_sdk.Agent(name="weather", instructions="Be brief.", model="gpt-5.1", tools=[tool])
    async with client:
        result = await agents_sdk.Runner.run(agent, "Weather in Paris and Rome?")
    assert result.final_output == ANSWER
    blackbox.assert_outcome(status="success", tools=["get_weather", "get_weather"])


def test_pydantic_ai(blackbox):
    client = AsyncAnthropic(base_url=URL, http_client=blackbox.async_http_client(), max_retries=0)
    model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model, instructions="Be brief.", tools=[blackbox.tool("get_weather", get_weather)])

    async def run():
        async with client:
            return await agent.run("Weather in Paris and Rome?")

    assert asyncio.run(run()).output == ANSWER
    blackbox.assert_outcome(status="success", tools=["get_weather", "get_weather"])
'''


def two_city_brain(body: dict[str, Any]) -> Any:
    """The two-city weather agent for Anthropic (max_tokens), Responses (input, no messages) and chat."""
    return weather_brain(provider_of(body), cities=("Paris", "Rome"), text=None)(body)


def test_streamed_calls_and_frameworks_record_then_replay_offline(pytester: pytest.Pytester, api: FakeAPI,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Imported out here, once: each in-process run drops the modules it imported (seconds for these two).
    import agents  # noqa: F401
    import pydantic_ai.models.anthropic  # noqa: F401

    api.brain = two_city_brain
    pytester.makepyfile(test_frameworks=STREAM_AND_FRAMEWORKS_TEST)
    result = run(pytester, "--blackbox-record")
    result.assert_outcomes(passed=6)
    says(result, "cassettes: 0 replayed, 6 recorded, 0 missing, 0 diverged")
    streamed = [request.body.get("stream", False) for request in api.requests]
    assert streamed.count(True) >= 6 and streamed.count(False) >= 4, "three streamed agents, two unstreamed"
    folder = pytester.path / "cassettes" / "test_frameworks"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["test_openai_agents_sdk.json", "test_pydantic_ai.json", "test_responses_async.json",
                     "test_streamed-anthropic.json", "test_streamed-openai.json", "test_streamed-responses.json"]
    for name in names:
        cassette = load(folder / name)
        assert verify(cassette).ok
        kinds = [step.type for step in cassette.steps]
        assert kinds.count("model_input") == 2 and kinds.count("tool_call") == 2, (name, kinds)
        assert KEY not in (folder / name).read_text()

    offline(api, monkeypatch)
    result = run(pytester)
    result.assert_outcomes(passed=6)
    says(result, "cassettes: 6 replayed, 0 recorded, 0 missing, 0 diverged")
    assert api.requests == []

    # a changed question fails the streamed and the framework tests with the replay report, offline
    pytester.makepyfile(test_frameworks=STREAM_AND_FRAMEWORKS_TEST.replace(
        'agent.run("Weather in Paris and Rome?")', 'agent.run("Weather in Oslo?")').replace(
        'Runner.run(agent, "Weather in Paris and Rome?")', 'Runner.run(agent, "Weather in Oslo?")'))
    result = run(pytester, "-k", "agents_sdk or pydantic")
    result.assert_outcomes(failed=2)
    says(result, "test_openai_agents_sdk.json: replay diverged at step 0", '"Weather in Oslo?"')
    says(result, "test_pydantic_ai.json: replay diverged at step 0", '"Weather in Oslo?"')
    assert api.requests == []
