"""Azure OpenAI's own answers through the real `openai.AzureOpenAI` against the fake API: its error bodies (a
missing deployment, a content-filter refusal of the prompt) reach the agent as the SDK raises them and record
nothing; its content-filter annotations on a good answer (`prompt_filter_results`, `content_filter_results`,
the stream's opening chunk with no choices) are dropped, streamed and unstreamed alike; an answer the filter
stopped is refused with one line, never a half step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

import blackbox
from blackbox.format.cassette import load
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI, Reply, chat_completion, json_reply

pytest_plugins = ["tests.conftest_fakeapi"]

KEY = "azure-key-0123456789abcdef"
FILTERED = {"hate": {"filtered": False, "severity": "safe"}, "self_harm": {"filtered": False, "severity": "safe"},
            "sexual": {"filtered": False, "severity": "safe"}, "violence": {"filtered": False, "severity": "safe"}}
NOT_FOUND = {"error": {"code": "DeploymentNotFound",
                       "message": "The API deployment for this resource does not exist."}}
PROMPT_FILTERED = {"error": {
    "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
    "type": None, "param": "prompt", "code": "content_filter", "status": 400,
    "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {
        **FILTERED, "violence": {"filtered": True, "severity": "medium"}}}}}


def azure(bb: blackbox.Session, fake: FakeAPI) -> openai.AzureOpenAI:
    return fake.closes(openai.AzureOpenAI(http_client=bb.http_client(), azure_endpoint=fake.url, api_key=KEY,
                                          api_version="2024-10-21", max_retries=0))


def ask(client: openai.AzureOpenAI, *, stream: bool) -> str:
    kwargs: dict[str, Any] = {"model": "prod-gpt", "messages": [{"role": "user", "content": "Hi"}]}
    if not stream:
        return client.chat.completions.create(**kwargs).choices[0].message.content or ""
    return "".join(choice.delta.content or "" for chunk in client.chat.completions.create(stream=True, **kwargs)
                   for choice in chunk.choices)


def azure_completion(text: str, finish: str = "stop") -> dict[str, Any]:
    """A chat completion as Azure sends it: the prompt's and the answer's filter results beside the usual."""
    body = chat_completion(content=text, finish_reason=finish, model="gpt-4o-2024-11-20")
    body["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": FILTERED}]
    body["choices"][0]["content_filter_results"] = FILTERED
    return body


def azure_stream(body: dict[str, Any]) -> Reply:
    """Azure's stream: a first chunk with no choices and the prompt's filter results, the deltas with theirs."""
    top = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"],
           "system_fingerprint": body["system_fingerprint"]}
    text, finish = body["choices"][0]["message"]["content"], body["choices"][0]["finish_reason"]

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None,
                  "content_filter_results": {} if finish_reason else FILTERED}
        return "data: " + json.dumps({**top, "choices": [choice]}) + "\n\n"

    lines = ["data: " + json.dumps({"choices": [], "created": 0, "id": "", "model": "", "object": "",
                                    "prompt_filter_results": body["prompt_filter_results"]}) + "\n\n",
             chunk({"role": "assistant", "content": "", "refusal": None})]
    lines += [chunk({"content": text[i:i + 5]}) for i in range(0, len(text), 5)]
    lines += [chunk({}, finish), "data: [DONE]\n\n"]
    return Reply(content_type="text/event-stream", chunks=[line.encode() for line in lines])


@pytest.mark.parametrize("stream", [False, True], ids=["unstreamed", "streamed"])
@pytest.mark.parametrize(("body", "status", "raised"), [
    (NOT_FOUND, 404, openai.NotFoundError), (PROMPT_FILTERED, 400, openai.BadRequestError)],
    ids=["deployment-not-found", "prompt-filtered"])
def test_an_azure_error_body_reaches_the_agent_and_records_nothing(
        fake_api: FakeAPI, tmp_path: Path, body: dict[str, Any], status: int, raised: type[Exception],
        stream: bool) -> None:
    fake_api.queue(json_reply(body, status))
    out = tmp_path / "error.json"
    bb = blackbox.session("record", out=out)
    with pytest.raises(raised) as caught:
        ask(azure(bb, fake_api), stream=stream)
    assert "[blackbox]" not in str(caught.value) and body["error"]["message"] in str(caught.value)
    bb.finish(error=caught.value)
    cassette = load(out)
    assert verify(cassette).ok and [step.type for step in cassette.steps] == ["metadata"]


def test_azure_filter_annotations_are_dropped_streamed_or_not(fake_api: FakeAPI, tmp_path: Path) -> None:
    paths = []
    for stream in (False, True):
        body = azure_completion("Hello from Azure.")
        fake_api.queue(azure_stream(body) if stream else json_reply(body))
        out = tmp_path / f"{stream}.json"
        bb = blackbox.session("record", out=out)
        assert ask(azure(bb, fake_api), stream=stream) == "Hello from Azure."
        bb.finish(result="Hello from Azure.")
        assert verify(load(out)).ok and "filter" not in out.read_text()
        paths.append(out)
    plain, streamed = ([(s.type, s.payload) for s in load(path).steps] for path in paths)
    assert plain == streamed and plain[1] == ("model_output", {"type": "final_answer", "text": "Hello from Azure."})
    fake_api.reset()
    for path in paths:
        for stream in (False, True):
            bb = blackbox.session("replay", cassette=path)
            assert ask(azure(bb, fake_api), stream=stream) == "Hello from Azure."
            bb.finish()
    assert fake_api.requests == []


@pytest.mark.parametrize("stream", [False, True], ids=["unstreamed", "streamed"])
def test_an_answer_the_filter_stopped_is_refused_with_one_line(fake_api: FakeAPI, tmp_path: Path,
                                                               stream: bool) -> None:
    body = azure_completion("Partial", finish="content_filter")
    fake_api.queue(azure_stream(body) if stream else json_reply(body))
    out = tmp_path / "filtered.json"
    bb = blackbox.session("record", out=out)
    if stream:  # the stream reaches the agent as it came; the call is not recorded, so the run fails
        assert ask(azure(bb, fake_api), stream=True) == "Partial"
    else:
        with pytest.raises(openai.BadRequestError, match=r"\[blackbox\].*content filter"):
            ask(azure(bb, fake_api), stream=False)
    with pytest.raises(blackbox.BlackboxError) as caught:
        bb.finish()
    assert "content filter" in str(caught.value) and "\n" not in str(caught.value).strip()
    assert all(step.type != "model_output" for step in load(out).steps)
