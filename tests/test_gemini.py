"""Gemini with the real google-genai SDK against the fake API's Gemini dialect: record → verify → replay offline
with no key → a changed prompt diverges → fork; streamed and unstreamed recordings hold the same steps; chats
with automatic function calling; id-less calls, thought parts and signatures carried through replay; keys in
`x-goog-api-key` and `?key=`; bad input from the API; the async client guard (aiohttp installed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import blackbox
from blackbox.errors import ReplayDivergenceError
from blackbox.format.cassette import load
from blackbox.format.secrets import PLACEHOLDER_KEYS
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, Reply, error_reply, json_reply, stream_reply
from tests.fakeapi_gemini import frame_bytes, gemini_frames, gemini_response, gemini_turns, last_function_responses

genai = pytest.importorskip("google.genai")
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types  # noqa: E402

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "AIzaSyFAKE-gemini-test-key-0123456789"
MODEL = "gemini-2.5-flash"
SIG_CALL, SIG_TEXT = "c2lnbmF0dXJlLWNhbGw=", "c2lnbmF0dXJlLXRleHQ="
WEATHER = types.FunctionDeclaration(
    name="get_weather", description="The weather in a city.",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def brain() -> Any:
    """Two parallel id-less calls with a thought and a signature, then the answer built from their results."""
    def final(body: dict[str, Any]) -> dict[str, Any]:
        results = [value.get("result") for value in last_function_responses(body)]
        return gemini_response(text="Weather: " + "; ".join(map(str, results)), signature=SIG_TEXT)
    return gemini_turns([gemini_response(calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
                                         thought="I should look both up.", signature=SIG_CALL), final])


def client(bb: blackbox.Session, fake: FakeAPI, **kwargs: Any) -> Any:
    kwargs.setdefault("api_key", KEY)
    return genai.Client(**kwargs, http_options=bb.genai_http_options(base_url=fake.url))


def config() -> Any:
    return types.GenerateContentConfig(system_instruction="Be brief.", temperature=0.3, max_output_tokens=200,
                                       tools=[types.Tool(function_declarations=[WEATHER])])


def turn_answer(parts: list[Any], weather: Any) -> Any:
    """The model's text when it called nothing, else the user turn with the function responses."""
    calls = [part.function_call for part in parts if part.function_call]
    if not calls:
        return "".join(part.text or "" for part in parts if part.text and not part.thought)
    return types.Content(role="user", parts=[
        types.Part.from_function_response(name=call.name, response={"result": weather(**call.args)})
        for call in calls])


def run(bb: blackbox.Session, fake: FakeAPI, *, stream: bool = False, prompt: str = "Weather in Paris and Rome?",
        **kwargs: Any) -> str:
    """A manual function-calling loop over `models.generate_content(_stream)`."""
    weather = bb.tool("get_weather", lambda city: f"sunny in {city}")
    models = client(bb, fake, **kwargs).models
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=prompt)])]
    while True:
        if stream:
            chunks = list(models.generate_content_stream(model=MODEL, contents=contents, config=config()))
            parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts or []]
            contents += [chunk.candidates[0].content for chunk in chunks]
        else:
            response = models.generate_content(model=MODEL, contents=contents, config=config())
            parts = response.candidates[0].content.parts
            contents.append(response.candidates[0].content)
        answer = turn_answer(parts, weather)
        if isinstance(answer, str):
            return answer
        contents.append(answer)


async def arun(bb: blackbox.Session, fake: FakeAPI, *, stream: bool = False) -> str:
    """The same loop on the async client (`client.aio`)."""
    weather = bb.tool("get_weather", lambda city: f"sunny in {city}")
    options = bb.genai_http_options(base_url=fake.url)
    try:
        async with genai.Client(api_key=KEY, http_options=options).aio as aio:
            return await _aloop(aio.models, weather, stream=stream)
    finally:  # the SDK leaves the clients it was given open: closed here, the async one in its own loop
        await options.httpx_async_client.aclose()
        options.httpx_client.close()


async def _aloop(models: Any, weather: Any, *, stream: bool) -> str:
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="Weather in Paris and Rome?")])]
    while True:
        if stream:
            chunks = [chunk async for chunk in await models.generate_content_stream(model=MODEL, contents=contents,
                                                                                  config=config())]
            parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts or []]
            contents += [chunk.candidates[0].content for chunk in chunks]
        else:
            response = await models.generate_content(model=MODEL, contents=contents, config=config())
            parts = response.candidates[0].content.parts
            contents.append(response.candidates[0].content)
        answer = turn_answer(parts, weather)
        if isinstance(answer, str):
            return answer
        contents.append(answer)


def record(fake: FakeAPI, out: Path, *, stream: bool = False, asynchronous: bool = False) -> str:
    fake.reset()
    fake.brain = brain()
    bb = blackbox.session("record", out=out)
    result = asyncio.run(arun(bb, fake, stream=stream)) if asynchronous else run(bb, fake, stream=stream)
    bb.finish(result=result)
    assert [":streamGenerateContent?alt=sse" in r.path for r in fake.requests] == [stream, stream]
    return result


def steps_of(path: Path) -> list[tuple[str, Any]]:
    return [(step.type, step.payload) for step in load(path).steps]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_record_verify_replay_offline_both_ways_and_streamed_equals_unstreamed(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asynchronous: bool) -> None:
    streamed, plain = tmp_path / "streamed.json", tmp_path / "plain.json"
    answer = record(fake_api, streamed, stream=True, asynchronous=asynchronous)
    assert answer == "Weather: sunny in Paris; sunny in Rome"
    assert record(fake_api, plain, asynchronous=asynchronous) == answer
    assert steps_of(streamed) == steps_of(plain)
    steps = steps_of(plain)
    assert [kind for kind, _ in steps] == ["model_input", "model_output", "tool_call", "tool_result", "tool_call",
                                           "tool_result", "model_input", "model_output", "metadata"]
    first_in, first_out = steps[0][1], steps[1][1]
    assert first_in["systemPrompt"] == "Be brief." and first_in["model"] == MODEL
    assert first_in["params"] == {"temperature": 0.3, "maxTokens": 200}
    assert first_in["tools"][0]["inputSchema"]["required"] == ["city"]
    assert first_out == {"type": "tool_calls",
                         "calls": [{"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}},
                                   {"toolCallId": "call-1", "toolName": "get_weather", "toolInput": {"city": "Rome"}}],
                         "thoughts": [{"text": "I should look both up."}], "signatures": {"call-0": SIG_CALL}}
    history = steps[6][1]["messages"]
    assert [part["toolCallId"] for part in history[1]["content"]] == ["call-0", "call-1"]
    assert [(part["toolCallId"], part["result"]) for part in history[2]["content"]] == [
        ("call-0", {"result": "sunny in Paris"}), ("call-1", {"result": "sunny in Rome"})]
    for path in (streamed, plain):
        assert verify(load(path)).ok
        text = path.read_text()
        for leak in (KEY, "usageMetadata", "finishReason", "fake-response-id"):
            assert leak not in text, leak

    # replay: no key in the environment but the placeholder, no request sent, both ways
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", PLACEHOLDER_KEYS["GEMINI_API_KEY"])
    for path in (streamed, plain):
        for stream in (True, False):
            fake_api.reset()
            bb = blackbox.session("replay", cassette=path)
            result = (asyncio.run(arun(bb, fake_api, stream=stream)) if asynchronous
                      else run(bb, fake_api, stream=stream, api_key=None))
            assert result == answer
            assert bb.finish().status == "success"
            assert fake_api.requests == []


def test_replay_hands_back_the_signatures_and_thoughts_the_real_api_needs(fake_api: FakeAPI, tmp_path: Path) -> None:
    """The fork's first live request carries the recorded thought signature on the replayed call."""
    parent = tmp_path / "parent.json"
    record(fake_api, parent)
    fake_api.reset()
    fake_api.brain = brain()
    bb = blackbox.session("fork", cassette=parent, out=tmp_path / "live.json", fork_at=3, fork_set="snowy",
                          continue_with="live")
    assert run(bb, fake_api) == "Weather: snowy; sunny in Rome"
    bb.finish()
    (request,) = fake_api.requests
    model_turn = request.body["contents"][1]
    assert model_turn["parts"][0] == {"text": "I should look both up.", "thought": True}
    assert model_turn["parts"][1]["thoughtSignature"] == SIG_CALL
    assert model_turn["parts"][1]["functionCall"]["name"] == "get_weather"
    live = load(tmp_path / "live.json")
    assert verify(live).ok and live.steps[3].payload["result"] == "snowy"
    assert live.steps[-2].payload == {"type": "final_answer", "text": "Weather: snowy; sunny in Rome",
                                      "signatures": {"text": SIG_TEXT}}


def test_a_changed_prompt_diverges_at_step_0_and_a_scripted_fork_continues(fake_api: FakeAPI, tmp_path: Path) -> None:
    parent = tmp_path / "parent.json"
    record(fake_api, parent, stream=True)
    fake_api.reset()
    bb = blackbox.session("replay", cassette=parent)
    with pytest.raises(genai_errors.ClientError) as caught:
        run(bb, fake_api, prompt="Weather in Oslo?")
    assert caught.value.code == 400 and "replay diverged at step 0" in str(caught.value)
    with pytest.raises(ReplayDivergenceError) as diverged:
        bb.finish()
    assert (diverged.value.step, diverged.value.path) == (0, "messages[0].content")

    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "final_answer", "text": "Snow in Paris."}]))
    bb = blackbox.session("fork", cassette=parent, out=tmp_path / "scripted.json", fork_at=3, fork_set="snowy",
                          continue_with="script", script=script)
    assert run(bb, fake_api, stream=True) == "Snow in Paris."
    bb.finish()
    assert fake_api.requests == []
    child = load(tmp_path / "scripted.json")
    assert verify(child).ok and child.parentId == load(parent).id
    assert child.steps[3].payload["result"] == "snowy"
    assert child.steps[-2].payload == {"type": "final_answer", "text": "Snow in Paris."}


@pytest.mark.parametrize("stream", [False, True], ids=["unstreamed", "streamed"])
def test_chats_with_automatic_function_calling_record_and_replay(fake_api: FakeAPI, tmp_path: Path,
                                                                 stream: bool) -> None:
    fake_api.brain = gemini_turns([gemini_response(calls=[("get_weather", {"city": "Paris"})], with_ids=True),
                                   gemini_response(text="Sunny in Paris.")])
    out = tmp_path / "chat.json"

    def chat_run(bb: blackbox.Session) -> str:
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return f"sunny in {city}"
        chat = client(bb, fake_api).chats.create(model=MODEL, config=types.GenerateContentConfig(
            tools=[bb.tool("get_weather", get_weather)]))
        if stream:  # the SDK runs the function itself only unstreamed
            return "".join(chunk.text or "" for chunk in chat.send_message_stream("Hello")) + "|" + "".join(
                chunk.text or "" for chunk in chat.send_message_stream("Weather in Paris?"))
        return str(chat.send_message("Weather in Paris?").text)

    if stream:
        fake_api.brain = gemini_turns([gemini_response(text="Hi there."), gemini_response(text="Sunny in Paris.")])
    bb = blackbox.session("record", out=out)
    answer = chat_run(bb)
    bb.finish(result=answer)
    assert answer == ("Hi there.|Sunny in Paris." if stream else "Sunny in Paris.")
    assert verify(load(out)).ok and "fc-0" not in out.read_text()
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    replayed = chat_run(bb)
    assert replayed == answer
    assert bb.finish(result=replayed).status == "success" and fake_api.requests == []


@pytest.mark.parametrize("where", ["header", "query"])
def test_a_key_in_the_header_or_the_query_is_learned_and_a_tool_returning_it_is_refused(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    secret = f"AIzaSyLEARNED-{where}-key-0123456789abcdef"
    fake_api.queue(gemini_response(calls=[("leak", {})]))
    out = tmp_path / "leak.json"
    bb = blackbox.session("record", out=out)
    leak = bb.tool("leak", lambda: secret)
    tools = [types.Tool(function_declarations=[types.FunctionDeclaration(name="leak", description="")])]
    if where == "header":
        response = client(bb, fake_api, api_key=secret).models.generate_content(
            model=MODEL, contents="hi", config=types.GenerateContentConfig(tools=tools))
        assert response.function_calls[0].name == "leak"
        assert fake_api.requests[0].header("x-goog-api-key") == secret
    else:  # a REST agent that puts the key in the URL, as Google's curl samples do
        with bb.http_client() as http:
            reply = http.post(f"{fake_api.url}/v1beta/models/{MODEL}:generateContent?key={secret}",
                              json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                                    "tools": [{"functionDeclarations": [{"name": "leak", "description": ""}]}]})
        assert reply.status_code == 200 and "?key=" in fake_api.requests[0].path
    assert leak() == secret  # the agent gets its tool's result; the recording refuses to keep it
    with pytest.raises(blackbox.BlackboxError) as caught:
        bb.finish()
    assert secret not in str(caught.value)
    assert not out.exists() or secret not in out.read_text()


# ---------------------------------------------------------------------------------------------------------
# bad input from the API: the agent gets what it would without Blackbox; no half step, no traceback


def _one_call(bb: blackbox.Session, fake: FakeAPI, *, stream: bool) -> Any:
    models = client(bb, fake).models
    if stream:
        return [chunk for chunk in models.generate_content_stream(model=MODEL, contents="hi")]
    return models.generate_content(model=MODEL, contents="hi")


@pytest.mark.parametrize("stream", [False, True], ids=["unstreamed", "streamed"])
def test_an_error_body_reaches_the_agent_as_the_sdks_error_and_records_nothing(
        fake_api: FakeAPI, tmp_path: Path, stream: bool) -> None:
    fake_api.queue(error_reply("gemini", 429, "Resource has been exhausted"))
    bb = blackbox.session("record", out=tmp_path / "e.json")
    with pytest.raises(genai_errors.ClientError) as caught:
        _one_call(bb, fake_api, stream=stream)
    assert caught.value.code == 429 and caught.value.status == "RESOURCE_EXHAUSTED"
    assert "Resource has been exhausted" in str(caught.value)
    bb.finish()
    assert all(step.type not in ("model_input", "model_output") for step in load(tmp_path / "e.json").steps)


def _cut_stream(fake: FakeAPI, how: str) -> Reply:
    frames = [frame_bytes(frame) for frame in gemini_frames(gemini_response(text="Sunny and warm in Paris."))]
    if how == "cut":
        chunks = [*frames[:2], frames[2][:len(frames[2]) // 2]]
    elif how == "not-json":
        chunks = [*frames[:2], b"data: {not json\r\n\r\n", *frames[2:]]
    else:  # an error frame mid-stream
        chunks = [*frames[:2], frame_bytes({"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}})]
    return Reply(content_type="text/event-stream", chunks=chunks, drop=how == "cut")


@pytest.mark.parametrize("how", ["cut", "not-json", "error-frame"])
def test_a_broken_stream_reaches_the_agent_as_it_came_and_records_no_half_step(
        fake_api: FakeAPI, tmp_path: Path, how: str) -> None:
    # what the SDK does with this stream without Blackbox
    fake_api.queue(_cut_stream(fake_api, how))
    plain = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=fake_api.url))
    with pytest.raises(Exception) as without:
        list(plain.models.generate_content_stream(model=MODEL, contents="hi"))

    fake_api.queue(_cut_stream(fake_api, how))
    bb = blackbox.session("record", out=tmp_path / "s.json")
    with pytest.raises(type(without.value)) as caught:
        _one_call(bb, fake_api, stream=True)
    assert type(caught.value) is type(without.value)
    bb.finish()
    assert all(step.type not in ("model_input", "model_output") for step in load(tmp_path / "s.json").steps)


@pytest.mark.parametrize("part", [{"functionCall": {"args": {"city": "Paris"}}}, {"futurePart": {"x": 1}},
                                  {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}],
                         ids=["call-without-name", "unknown-part", "inline-data"])
@pytest.mark.parametrize("stream", [False, True], ids=["unstreamed", "streamed"])
def test_a_response_that_cannot_be_replayed_is_refused_with_one_line(
        fake_api: FakeAPI, tmp_path: Path, part: dict[str, Any], stream: bool) -> None:
    body = gemini_response(text="x")
    body["candidates"][0]["content"]["parts"] = [part]
    fake_api.queue(stream_reply(body) if stream else json_reply(body))
    bb = blackbox.session("record", out=tmp_path / "r.json")
    if stream:  # the stream reaches the agent as it came; the call is refused, so the run ends in a failure
        _one_call(bb, fake_api, stream=True)
    else:
        with pytest.raises(genai_errors.ClientError) as refused:
            _one_call(bb, fake_api, stream=False)
        assert "[blackbox]" in str(refused.value) and "is not supported yet" in str(refused.value)
    with pytest.raises(blackbox.BlackboxError) as caught:
        bb.finish()
    message = str(caught.value)
    assert "is not supported yet" in message and "\n" not in message.strip()
    assert all(step.type != "model_output" for step in load(tmp_path / "r.json").steps)


@pytest.mark.parametrize("config_kwargs, what", [
    ({"candidate_count": 2}, "candidateCount=2"),
    ({"tools": [types.Tool(google_search=types.GoogleSearch())]}, "Google Search grounding"),
    ({"tools": [types.Tool(code_execution=types.ToolCodeExecution())]}, "code execution"),
    ({"cached_content": "cachedContents/abc"}, "cachedContent"),
])
def test_what_cannot_be_recorded_faithfully_is_refused_before_it_is_sent(
        fake_api: FakeAPI, tmp_path: Path, config_kwargs: dict[str, Any], what: str) -> None:
    bb = blackbox.session("record", out=tmp_path / "x.json")
    with pytest.raises(genai_errors.ClientError) as caught:
        client(bb, fake_api).models.generate_content(model=MODEL, contents="hi",
                                                     config=types.GenerateContentConfig(**config_kwargs))
    assert what in str(caught.value) and "[blackbox]" in str(caught.value)
    assert fake_api.requests == []
    with pytest.raises(blackbox.BlackboxError):
        bb.finish()


def test_inline_data_in_the_request_is_refused(fake_api: FakeAPI, tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "x.json")
    image = types.Part.from_bytes(data=b"\x89PNG....", mime_type="image/png")
    with pytest.raises(genai_errors.ClientError) as caught:
        client(bb, fake_api).models.generate_content(model=MODEL, contents=[image, "what is this?"])
    assert "inline data" in str(caught.value) and fake_api.requests == []
    with pytest.raises(blackbox.BlackboxError):
        bb.finish()


def test_a_client_with_only_the_sync_client_is_refused_when_built(fake_api: FakeAPI, tmp_path: Path) -> None:
    import aiohttp  # noqa: F401  (installed: the SDK's async calls would take it)

    bb = blackbox.session("record", out=tmp_path / "x.json")
    with pytest.raises(blackbox.BlackboxError) as caught:
        genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=fake_api.url, httpx_client=bb.http_client()))
    assert "through aiohttp, around Blackbox" in str(caught.value)
    assert "bb.genai_http_options()" in str(caught.value)
    # with both (the helper), the async client is Blackbox's and aiohttp is never used
    built = client(bb, fake_api)
    assert built._api_client._use_aiohttp() is False
    bb.finish()


# ---------------------------------------------------------------------------------------------------------
# what-if (fork --model-only): Blackbox continues a Gemini run itself


def test_what_if_continues_a_gemini_run_scripted_and_live(fake_api: FakeAPI, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from blackbox.fork.whatif import LiveModel, ScriptedModel, choose_provider, what_if
    from blackbox.format.diff import diff

    parent_path = tmp_path / "parent.json"
    record(fake_api, parent_path)
    parent = load(parent_path)
    assert choose_provider(parent, None).name == "gemini"  # the recorded model names the provider

    fork, reason = what_if(parent, 3, "snowy", ScriptedModel([{"type": "final_answer", "text": "Snow."}]),
                           trace_id="scripted")
    assert reason == "final answer" and verify(fork).ok and diff(parent, fork).first_divergence == 3

    fake_api.reset()
    fake_api.queue(gemini_response(text="Snow in Paris, sun in Rome."))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_api.url)
    fork, reason = what_if(parent, 3, "snowy", LiveModel("gemini"), trace_id="live")
    assert reason == "final answer" and verify(fork).ok
    assert [s.hash for s in fork.steps[:3]] == [s.hash for s in parent.steps[:3]]
    (request,) = fake_api.requests
    assert request.path == f"/v1beta/models/{MODEL}:generateContent" and request.header("x-goog-api-key") == KEY
    body = request.body
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["generationConfig"] == {"temperature": 0.3, "maxOutputTokens": 200}
    calls = [part for part in body["contents"][1]["parts"] if "functionCall" in part]
    assert [call["functionCall"]["id"] for call in calls] == ["call-0", "call-1"]
    assert calls[0]["thoughtSignature"] == SIG_CALL and "thoughtSignature" not in calls[1]  # as the API gave it
    assert body["contents"][1]["parts"][0] == {"text": "I should look both up.", "thought": True}
    responses = [part["functionResponse"] for part in body["contents"][2]["parts"]]
    assert responses[0] == {"id": "call-0", "name": "get_weather", "response": {"result": "snowy"}}
    assert fork.steps[-2].payload == {"type": "final_answer", "text": "Snow in Paris, sun in Rome."}
    assert KEY not in json.dumps([step.payload for step in fork.steps])


def test_fork_model_only_on_the_command_line(fake_api: FakeAPI, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from blackbox.cli import app

    parent = tmp_path / "parent.json"
    record(fake_api, parent)
    fake_api.reset()
    fake_api.queue(gemini_response(text="Snow."))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_api.url)
    out = tmp_path / "whatif.json"
    result = CliRunner().invoke(app, ["fork", str(parent), "--at", "3", "--set", '"snowy"', "--out", str(out),
                                      "--model-only", "--live", "--provider", "gemini"])
    assert result.exit_code == 0, result.stderr
    assert len(fake_api.requests) == 1 and verify(load(out)).ok


# ---------------------------------------------------------------------------------------------------------
# pydantic-ai's GoogleModel over Blackbox's client


def test_pydantic_ai_google_model_records_and_replays(fake_api: FakeAPI, tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai.models.google")
    from pydantic_ai import Agent
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    def run_agent(bb: blackbox.Session) -> str:
        options = bb.genai_http_options(base_url=fake_api.url)
        provider = GoogleProvider(client=genai.Client(api_key=KEY, http_options=options))
        agent = Agent(GoogleModel(MODEL, provider=provider), system_prompt="Be brief.")

        @agent.tool_plain
        @bb.tool("get_weather")
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return f"sunny in {city}"

        async def go() -> str:
            try:
                return str((await agent.run("Weather in Paris?")).output)
            finally:  # the SDK leaves the clients it was given open: the async one closed in its loop
                await options.httpx_async_client.aclose()
                options.httpx_client.close()

        return asyncio.run(go())

    fake_api.brain = gemini_turns([gemini_response(calls=[("get_weather", {"city": "Paris"})]),
                                   gemini_response(text="Sunny in Paris.")])
    out = tmp_path / "pai.json"
    bb = blackbox.session("record", out=out)
    assert run_agent(bb) == "Sunny in Paris."
    bb.finish()
    assert verify(load(out)).ok
    assert [s.type for s in load(out).steps][:4] == ["model_input", "model_output", "tool_call", "tool_result"]
    fake_api.reset()
    bb = blackbox.session("replay", cassette=out)
    assert run_agent(bb) == "Sunny in Paris."
    assert bb.finish().status == "success" and fake_api.requests == []
