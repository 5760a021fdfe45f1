"""The Gemini codec alone: routing from the path, id-less call numbering, the stream assembler's rules, the
what-if direction and the placeholder keys replay sets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from blackbox.errors import BlackboxUnsupportedError
from blackbox.format.secrets import PLACEHOLDER_KEYS
from blackbox.providers import by_name, for_model, route
from blackbox.providers.gemini import PROVIDER as GEMINI
from blackbox.providers.neutral import CallIds
from blackbox.providers.stream import StreamStatus
from blackbox.wire import Request
from tests.fakeapi_gemini import frame_bytes, gemini_frames, gemini_response

PATH = "/v1beta/models/gemini-2.5-flash:generateContent"


def request(body: Any, path: str = PATH) -> Request:
    return Request.post(f"https://generativelanguage.googleapis.com{path}", json.dumps(body).encode())


def test_routing_reads_the_model_and_the_stream_flag_from_the_path() -> None:
    plain = request({"contents": []})
    assert route(plain) is GEMINI and GEMINI.body_of(plain)["model"] == "gemini-2.5-flash"
    streamed = request({"contents": []}, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse")
    assert GEMINI.is_stream(GEMINI.body_of(streamed))
    vertex = request({"contents": []}, "/v1/projects/p/locations/us/publishers/google/models/g:generateContent")
    assert route(vertex) is GEMINI
    with pytest.raises(BlackboxUnsupportedError, match="without alt=sse"):
        GEMINI.body_of(request({}, "/v1beta/models/m:streamGenerateContent"))
    with pytest.raises(BlackboxUnsupportedError, match="Interactions API"):
        GEMINI.body_of(request({}, "/v1beta/interactions"))
    assert route(request({}, "/v1beta/models/m:countTokens")) is None  # refused by the session as unknown
    assert for_model("gemini-2.5-flash") is GEMINI and by_name("gemini") is GEMINI
    assert {"GEMINI_API_KEY", "GOOGLE_API_KEY"} <= set(PLACEHOLDER_KEYS)


def test_id_less_calls_keep_their_numbers_through_the_history_and_a_replayed_response() -> None:
    ids = CallIds()
    response = gemini_response(calls=[("f", {"x": 1}), ("f", {"x": 1}), ("g", {})])
    output = GEMINI.normalize_response(response, ids)
    assert [c["toolCallId"] for c in output["calls"]] == ["call-0", "call-1", "call-2"]  # type: ignore[typeddict-item]
    history = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}, response["candidates"][0]["content"],
                            {"role": "user", "parts": [{"functionResponse": {"name": "g", "response": {}}},
                                                       {"functionResponse": {"name": "f", "response": {"r": 1}}},
                                                       {"functionResponse": {"name": "f", "response": {"r": 2}}}]}]}
    model_input = GEMINI.normalize_request(history, ids)
    results = model_input["messages"][2]["content"]
    assert [(r["toolCallId"], r["toolName"]) for r in results] == [  # type: ignore[index]
        ("call-2", "g"), ("call-0", "f"), ("call-1", "f")]
    # the same calls as a replay hands them out (ids call-N) normalize to the same payload
    replayed = GEMINI.synthesize_response(output, step_index=1, model="m")
    ids2 = CallIds()
    for n in range(3):
        ids2.bind(f"call-{n}", f"call-{n}")
    history["contents"][1] = replayed["candidates"][0]["content"]
    assert GEMINI.normalize_request(history, ids2) == model_input
    # a later identical call is a new one
    again = GEMINI.normalize_response(gemini_response(calls=[("f", {"x": 1})]), ids)
    assert again["calls"][0]["toolCallId"] == "call-3"  # type: ignore[typeddict-item]


def test_a_refused_request_leaves_the_numbering_as_it_was() -> None:
    ids = CallIds()
    body = {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                         {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": ""}}]}]}
    with pytest.raises(BlackboxUnsupportedError, match="inline data"):
        GEMINI.normalize_request(body, ids)
    assert ids.next_index == 0


def feed(chunks: list[bytes]) -> Any:
    assembler = GEMINI.stream.assembler()
    for chunk in chunks:
        if assembler.feed(chunk) is not None:
            break
    return assembler.finish()


def test_the_stream_is_complete_at_the_finish_reason_frame_and_equals_the_unstreamed_body() -> None:
    body = gemini_response(text="Sunny and warm today.", thought="Think.", signature="c2ln")
    frames = [frame_bytes(frame) for frame in gemini_frames(body, piece=4)]
    assembler = GEMINI.stream.assembler()
    results = [assembler.feed(chunk) for chunk in frames]
    assert results[:-1] == [None] * (len(frames) - 1) and results[-1] is not None
    assert results[-1].status is StreamStatus.COMPLETE
    assert GEMINI.normalize_response(results[-1].body, CallIds()) == GEMINI.normalize_response(body, CallIds())
    # bytes cut one by one assemble the same
    one_by_one = [bytes([b]) for b in b"".join(frames)]
    assert feed(one_by_one).body == results[-1].body


@pytest.mark.parametrize("tail, status", [
    (lambda frames: frames[:-1], StreamStatus.ENDED_EARLY),  # ended cleanly between frames, no finishReason
    (lambda frames: [*frames[:-1], frames[-1][:20]], StreamStatus.ENDED_EARLY),  # cut mid-frame
    (lambda frames: [frames[0], b"data: {oops\r\n\r\n"], StreamStatus.ERROR),
    (lambda frames: [frames[0], frame_bytes({"error": {"code": 500, "message": "x", "status": "INTERNAL"}})],
     StreamStatus.ERROR),
])
def test_a_stream_without_its_final_frame_is_never_complete(tail: Any, status: StreamStatus) -> None:
    frames = [frame_bytes(frame) for frame in gemini_frames(gemini_response(text="Sunny and warm."), piece=4)]
    assert feed(tail(frames)).status is status


def test_the_synthesized_stream_assembles_to_the_synthesized_body() -> None:
    output = {"type": "tool_calls", "text": "Looking.", "thoughts": [{"text": "Hm.", "signature": "dA=="}],
              "signatures": {"call-0": "c2ln"},
              "calls": [{"toolCallId": "call-0", "toolName": "f", "toolInput": {"a": 1}}]}
    body = GEMINI.synthesize_response(output, step_index=3, model="gemini-2.5-flash")  # type: ignore[arg-type]
    for size in (None, 2):
        result = feed(GEMINI.stream.synthesize(body, piece_size=size))
        assert result.status is StreamStatus.COMPLETE
        assert GEMINI.normalize_response(result.body, CallIds()) == output


def test_build_request_for_the_what_if() -> None:
    model_input = {
        "messages": [{"role": "user", "content": "hi"},
                     {"role": "assistant", "content": [{"type": "tool_use", "toolCallId": "call-0", "toolName": "f",
                                                        "toolInput": {"a": 1}}]},
                     {"role": "user", "content": [{"type": "tool_result", "toolCallId": "call-0", "toolName": "f",
                                                   "result": "ok"}]}],
        "tools": [{"name": "f", "description": "d", "inputSchema": {"type": "OBJECT"}}],
        "systemPrompt": "s", "model": "gemini-2.5-flash",
        "params": {"maxTokens": 5, "generationConfig": {"mediaResolution": "LOW"}, "toolConfig": {"x": 1},
                   "toolChoice": "auto"}}
    body = GEMINI.build_request(model_input)
    assert body["generationConfig"] == {"maxOutputTokens": 5, "mediaResolution": "LOW"}  # toolChoice: not Gemini's
    assert body["toolConfig"] == {"x": 1}
    assert body["tools"] == [{"functionDeclarations": [{"name": "f", "description": "d",
                                                        "parameters": {"type": "OBJECT"}}]}]
    assert body["contents"][2]["parts"][0]["functionResponse"]["response"] == {"result": "ok"}
    assert GEMINI.normalize_request({**body, "model": "gemini-2.5-flash"}, CallIds())["params"] == {
        "maxTokens": 5, "generationConfig": {"mediaResolution": "LOW"}, "toolConfig": {"x": 1}}
    assert GEMINI.endpoint("https://generativelanguage.googleapis.com", "m") == \
        "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent"
    assert GEMINI.auth_headers("k") == {"x-goog-api-key": "k"}
