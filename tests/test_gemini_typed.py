"""Gemini's typed fast path reads a request exactly as the dict codec does: the same `model_input` (key order
included), the same `CallIds` bindings, the same refusal; and the common shapes do take it."""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from blackbox.errors import BlackboxError
from blackbox.providers import gemini_typed
from blackbox.providers.base import CodecProvider
from blackbox.providers.gemini import PROVIDER as GEMINI
from blackbox.providers.neutral import CallIds
from blackbox.wire import Request

PATHS = ("/v1beta/models/gemini-2.5-flash:generateContent",
         "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
         "/v1beta/models/m:streamGenerateContent")

names = st.sampled_from(["f", "g", "f", "g", ""])
small = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.5, 1.0, -2.25])
                     | st.text(max_size=4), lambda inner: st.lists(inner, max_size=2)
                     | st.dictionaries(st.sampled_from(["x", "y", "city"]), inner, max_size=2), max_leaves=4)
ids_ = st.sampled_from(["", "id-1", "id-2", "call-0", "call-1"])
flags = st.sampled_from([{}, {}, {}, {"thought": True}, {"thought": False}, {"thoughtSignature": "sig"},
                         {"thought": True, "thoughtSignature": "s"}])
args = st.dictionaries(st.sampled_from(["city", "x"]), small, max_size=2)


def text_part() -> Any:
    return st.builds(lambda text, flag: {"text": text, **flag}, st.sampled_from(["", "hi", "Paris"]), flags)


def call_part() -> Any:
    call = st.fixed_dictionaries({"name": names}, optional={"args": st.none() | args, "id": ids_})
    return st.builds(lambda c, flag: {"functionCall": c, **flag}, call, flags)


def response_part() -> Any:
    response = st.fixed_dictionaries({"name": names}, optional={"id": ids_, "response": small})
    return st.builds(lambda r, flag: {"functionResponse": r, **flag}, response, flags)


#: Values that are wrong, or right but not of the common shape, put in place of a part, a field or a value.
ODD = st.sampled_from([None, 5, "x", [], {}, {"thought": True}, {"thoughtSignature": "s"}, {"partMetadata": {}},
                       {"inlineData": {"data": ""}}, {"text": "a", "functionCall": {"name": "f"}},
                       {"text": "a", "inlineData": None}, {"text": None}, {"text": 3}, {"functionCall": None},
                       {"functionCall": {"args": {}}}, {"functionCall": {"name": "f", "args": [1]}},
                       {"functionCall": {"name": "f", "willContinue": True}}, {"functionResponse": 3},
                       {"functionResponse": {"name": "f", "scheduling": "SILENT"}}, {"cachedContent": "c"},
                       {"googleSearch": {}}, {"functionDeclarations": {"name": "f"}}, {"candidateCount": 2},
                       {"responseModalities": ["TEXT"]}, {"speechConfig": {}}, {"topK": None},
                       {"behavior": "BLOCKING"}, {"role": 3}, {"parts": None}, {"parts": "x"}])


@st.composite
def conversation(draw: st.DrawFn) -> list[Any]:
    """Alternating user and model turns (now and then two of one role in a row): the shapes agents send."""
    contents: list[Any] = []
    model_turn = False
    for _ in range(draw(st.integers(1, 5))):
        if model_turn:
            found = draw(st.lists(st.one_of(text_part(), call_part(), call_part()), min_size=0, max_size=3))
        elif contents and draw(st.booleans()):
            found = draw(st.lists(response_part(), min_size=1, max_size=3))
            if draw(st.integers(0, 3)) == 0:  # text beside the responses: the dict codec refuses it
                found.insert(draw(st.integers(0, len(found))), draw(text_part()))
        else:
            found = draw(st.lists(text_part(), min_size=0, max_size=2))
        content: dict[str, Any] = {"parts": found}
        role = "model" if model_turn else draw(st.sampled_from(["user", "user", None, "function"]))
        if role is not None:
            content["role"] = role
        contents.append(content)
        model_turn = not model_turn if draw(st.integers(0, 5)) else model_turn
    return contents


declaration = st.fixed_dictionaries({"name": st.sampled_from(["f", "g", ""])}, optional={
    "description": st.none() | st.text(max_size=3), "parametersJsonSchema": small,
    "parameters_json_schema": small, "parameters": small})
config = st.dictionaries(st.sampled_from(["maxOutputTokens", "temperature", "topP", "stopSequences",
                                          "thinkingConfig", "seed"]), small, max_size=3)


@st.composite
def bodies(draw: st.DrawFn) -> Any:
    body: dict[str, Any] = {"contents": draw(conversation())}
    if draw(st.booleans()):
        body["systemInstruction"] = draw(st.sampled_from([{"role": "user"}, {"parts": None}]) if draw(
            st.integers(0, 5)) == 0 else st.builds(lambda found: {"parts": found, "role": "user"},
                                                   st.lists(text_part(), max_size=2)))
    if draw(st.booleans()):
        body["tools"] = [{"functionDeclarations": draw(st.lists(declaration, max_size=2))}]
    if draw(st.booleans()):
        body["generationConfig"] = draw(config)
    for name in ("toolConfig", "safetySettings"):
        if draw(st.integers(0, 4)) == 0:
            body[name] = draw(small)
    if draw(st.integers(0, 2)) == 0:  # one thing odd: a part, a content, a field or a whole value
        _spoil(draw, body)
    return body


def _spoil(draw: st.DrawFn, body: dict[str, Any]) -> None:
    odd = draw(ODD)
    where = draw(st.sampled_from(["part", "part", "part", "content", "body", "system", "tool", "config",
                                  "field"]))
    contents = body["contents"]
    if where == "part" and any(c["parts"] for c in contents):
        content = draw(st.sampled_from([c for c in contents if c["parts"]]))
        content["parts"][draw(st.integers(0, len(content["parts"]) - 1))] = odd
    elif where == "content":
        contents[draw(st.integers(0, len(contents) - 1))] = odd
    elif where == "body":
        body["contents"] = odd
    elif where == "system":
        body["systemInstruction"] = draw(st.sampled_from(["be brief", odd, {"role": "user"}, {"parts": [odd]}]))
    elif where == "tool":
        body["tools"] = draw(st.sampled_from([odd, [odd], {}]))
    elif where == "config":
        body["generationConfig"] = odd if draw(st.booleans()) else {**body.get("generationConfig", {}),
                                                                      **(odd if isinstance(odd, dict) else {})}
    elif isinstance(odd, dict):
        body.update(odd)


#: key order kept, and a `JSFloat` told apart from a float (the hash reads its text)
_EXACT = msgspec.json.Encoder(enc_hook=lambda value: {"JSFloat": repr(value)})


def _read(provider_read: Any, request: Request, ids: CallIds) -> Any:
    try:
        body, model_input = provider_read(request, ids)
    except BlackboxError as exc:
        return ("refused", type(exc).__name__, str(exc))
    return ("read", {"model": body["model"], "stream": GEMINI.is_stream(body)}, _EXACT.encode(model_input))


def _state(ids: CallIds) -> Any:
    return ids._by_provider, ids._names, ids.next_index


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(history=[{"contents": [], "systemInstruction": {"role": "user"}}], path=PATHS[0], pretty=False,
         duplicate=False)
@example(history=[{"contents": [], "systemInstruction": {"parts": [{"thought": True}, {"text": None}]}}],
         path=PATHS[0], pretty=False, duplicate=False)
@example(history=[{"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f"}}]},
                                {"parts": [{"text": "and"}, {"functionResponse": {"name": "f"}}]}]}],
         path=PATHS[0], pretty=False, duplicate=False)
@example(history=[{"contents": [{"role": "user", "parts": [{"text": "go"}]},
                                {"role": "model", "parts": [{"text": "musing", "thought": True}]}]}],
         path=PATHS[0], pretty=False, duplicate=False)
@example(history=[{"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "id": "id-1"}},
                                                            {"functionCall": {"name": "f", "id": "id-2",
                                                                              "args": {"x": 1}}}]},
                                {"parts": [{"functionResponse": {"name": "f", "id": "id-2"}},
                                           {"functionResponse": {"name": "f", "id": "id-1"}}]}]}],
         path=PATHS[0], pretty=False, duplicate=False)
@given(history=st.lists(bodies(), min_size=1, max_size=3), path=st.sampled_from(PATHS),
       pretty=st.booleans(), duplicate=st.booleans())
def test_the_typed_path_reads_every_request_as_the_dict_codec_does(history: list[Any], path: str, pretty: bool,
                                                                    duplicate: bool) -> None:
    fast_ids, slow_ids = CallIds(), CallIds()
    for body in history:  # a conversation's requests, one after the other, through one id map each
        raw = json.dumps(body, indent=1 if pretty else None).encode()
        if duplicate and raw.startswith(b"{") and len(raw) > 2:
            raw = b'{"contents": 1, ' + raw[1:]  # a duplicate key: the last one wins in both
        request = Request.post(f"https://generativelanguage.googleapis.com{path}", raw)
        fast = _read(GEMINI.read_request, request, fast_ids)
        slow = _read(lambda r, i: CodecProvider.read_request(GEMINI, r, i), request, slow_ids)
        assert fast == slow
        assert _state(fast_ids) == _state(slow_ids)


def test_the_common_shapes_take_the_typed_path() -> None:
    ids = CallIds()
    body = {"contents": [{"role": "user", "parts": [{"text": "weather in Paris?"}]},
                         {"role": "model", "parts": [{"text": "thinking", "thought": True},
                                                     {"functionCall": {"name": "get_weather", "args": {"city": "P"}},
                                                      "thoughtSignature": "c2ln"}]},
                         {"role": "user", "parts": [{"functionResponse": {"name": "get_weather",
                                                                          "response": {"t": 21.5}}}]}],
            "systemInstruction": {"role": "user", "parts": [{"text": "be brief"}]},
            "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "d",
                                                 "parameters_json_schema": {"type": "object"}}]}],
            "generationConfig": {"maxOutputTokens": 512, "temperature": 0.2}, "toolConfig": {"x": 1}}
    typed = gemini_typed.decode(json.dumps(body).encode())
    assert typed is not None
    payload = gemini_typed.normalize(typed, ids, {})
    messages, tools, system = payload["messages"], payload["tools"], payload.get("systemPrompt")
    assert system == "be brief" and tools == [{"name": "get_weather", "description": "d",
                                               "inputSchema": {"type": "object"}}]
    assert messages[1]["content"] == [{"type": "tool_use", "toolCallId": "call-0", "toolName": "get_weather",
                                       "toolInput": {"city": "P"}}]
    assert messages[2]["content"][0]["result"] == {"t": 21.5}
    # and what it reads equals the dict codec's, byte for byte
    request = Request.post("https://generativelanguage.googleapis.com/v1beta/models/m:generateContent",
                           json.dumps(body).encode())
    assert _read(GEMINI.read_request, request, CallIds()) == _read(
        lambda r, i: CodecProvider.read_request(GEMINI, r, i), request, CallIds())


def test_an_unusual_body_leaves_the_ids_untouched_for_the_dict_codec() -> None:
    ids = CallIds()
    ids.neutral("earlier")
    before = copy.deepcopy(_state(ids))
    body = {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "id": "x"}}]},
                         {"role": "user", "parts": [{"functionResponse": {"name": "nobody"}}]}]}
    typed = gemini_typed.decode(json.dumps(body).encode())
    assert typed is not None
    try:
        gemini_typed.normalize(typed, ids, {})  # no undo around it: the ids learn nothing until all is read
    except gemini_typed.Unusual:
        pass
    else:
        raise AssertionError("a response with no call before it is the dict codec's to refuse")
    assert _state(ids) == before
