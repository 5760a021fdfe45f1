"""The per-call fast paths give exactly what the plain paths give (bench/README.md, bench_session_ab.py and
bench_gemini.py say why each exists): the request value decoded on first read, keys learned from the header
pairs that changed, a typed view converted into its tag's member, JSON decoded outside the reading room,
replay's equality test on the plain encoding, a replayed body written plainly and a replayed response built
already read."""

from __future__ import annotations

import json
import sys
from typing import Any

import httpx
import httpx2
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackbox.format.canonical import MAX_NESTING, JSFloat, canonical_text, decode_json, reading_room
from blackbox.format.firstdiff import first_difference, json_equal
from blackbox.format.secrets import Secrets
from blackbox.format.typed import _SHAPES, _TAGS, Odd, _where, view_of
from blackbox.live.engines import _body_bytes
from blackbox.live.transport import _answers_read, _read_answer, _request
from blackbox.providers import PROVIDERS, route
from blackbox.wire import Request

KEY_ONE = "sk-ant-api03-first-key-of-the-run-0000000000"
KEY_TWO = "zq9-second-client-secret-5521"


# ---------------------------------------------------------------------------------------------------------
# the request value


def _sent(url: str, headers: list[tuple[str, str]], body: bytes = b"{}") -> Request:
    return _request(httpx2.Request("POST", url, headers=headers, content=body), body)


def test_a_sent_request_reads_as_the_same_request_built_whole() -> None:
    headers = [("X-Api-Key", KEY_ONE), ("Content-Type", "application/json"), ("x-goog-api-key", KEY_TWO)]
    lazy = _sent("https://h.example:8443/v1beta/models/m:generateContent?alt=sse&key=k%20v", headers)
    whole = Request.post("https://h.example:8443/v1beta/models/m:generateContent?alt=sse&key=k%20v", b"{}",
                         [*headers, ("Host", "h.example:8443"), ("Content-Length", "2")])
    assert (lazy.method, lazy.url, lazy.host, lazy.path, lazy.route) == \
        (whole.method, whole.url, whole.host, whole.path, whole.route)
    assert sorted(lazy.headers) == sorted(whole.headers) and dict(lazy.query) == dict(whole.query)
    for name in ("x-api-key", "x-goog-api-key", "content-type", "api-key", "X-Api-Key"):
        assert lazy.header(name) == whole.header(name)
    assert lazy.param("alt") == "sse" and lazy.param("key") == "k v" and lazy.param("nope") is None
    assert lazy.has_query and not _sent("http://h/v1/messages", []).has_query
    assert KEY_ONE not in repr(lazy) and KEY_TWO not in repr(lazy) and "k%20v" not in repr(lazy)


def test_keys_are_learned_from_every_pair_that_changed_and_only_those_are_judged() -> None:
    secrets = Secrets({})

    def send(*headers: tuple[str, str], url: str = "http://h/v1/messages") -> tuple[str, ...]:
        secrets.note_request(_sent(url, list(headers)))
        return tuple(sorted(secrets.values()))

    assert send(("authorization", f"Bearer {KEY_ONE}"), ("x-n", "1")) == (KEY_ONE,)
    assert send(("authorization", f"Bearer {KEY_ONE}"), ("x-n", "2")) == (KEY_ONE,)
    # the same place, another value: a second client of the same session
    assert send(("authorization", f"Bearer {KEY_TWO}"), ("x-n", "2")) == tuple(sorted((KEY_ONE, KEY_TWO)))
    shaped = "sk-" + "q" * 40
    assert send(("x-team-token", shaped), ("x-n", "2")) == tuple(sorted((KEY_ONE, KEY_TWO, shaped)))
    longer = send(("x-n", "3"), ("x-n", "4"), ("helicone-auth", "Bearer helicone-secret-000"))
    assert "helicone-secret-000" in longer
    assert "query-secret-00000" in send(("x-n", "3"), url="http://h/v1beta/models/m:generateContent?key=query-secret-00000")
    assert send(("x-n", "3"), ("user-agent", "Anthropic/Python 2.16.0")) == send(("x-n", "5"))  # nothing new


# ---------------------------------------------------------------------------------------------------------
# typed views


def _view_by_union(step_type: str, payload: Any) -> Any:
    """The view as the whole shape (the union of tagged members) gives it: what `view_of` must equal."""
    try:
        return msgspec.convert(payload, _SHAPES[step_type], from_attributes=False)
    except (msgspec.ValidationError, UnicodeEncodeError) as exc:
        key = _TAGS.get(step_type)
        tag = payload.get(key) if key is not None and isinstance(payload, dict) else None
        why = _where(exc) if isinstance(exc, msgspec.ValidationError) else "holds a lone surrogate"
        return Odd(tag if isinstance(tag, str) else None, why)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)
TAG = st.sampled_from(["final_answer", "tool_calls", "tool_call", "run_completed", "run_failed", "other"]) | JSON
CALL = st.fixed_dictionaries({"toolCallId": st.text(max_size=4) | JSON, "toolName": st.text(max_size=4) | JSON},
                             optional={"toolInput": JSON})
PAYLOAD = st.fixed_dictionaries({}, optional={
    "type": TAG, "event": TAG, "text": st.text(max_size=5) | JSON, "stop": st.text(max_size=5) | JSON,
    "calls": st.lists(CALL, max_size=2) | JSON, "toolCallId": st.text(max_size=4) | JSON,
    "toolName": st.text(max_size=4) | JSON, "status": st.text(max_size=4) | JSON, "reason": JSON,
    "exitCode": st.integers() | JSON}) | JSON


@settings(max_examples=400, deadline=None)
@given(step_type=st.sampled_from(["model_output", "metadata"]), payload=PAYLOAD)
def test_a_view_by_its_tags_member_equals_the_view_by_the_union(step_type: str, payload: Any) -> None:
    assert view_of(step_type, payload) == _view_by_union(step_type, payload)


def test_a_view_of_an_odd_payload_under_a_known_tag_keeps_the_unions_reason() -> None:
    for payload in ({"type": "final_answer", "text": 7}, {"type": "tool_calls", "calls": [{"toolName": 1}]},
                    {"event": "run_failed", "exitCode": "x"}, {"type": ["final_answer"]}, {"type": "final_answer"},
                    {"type": "final_answer", "text": "", "\ud800": 1}):
        step_type = "metadata" if "event" in payload else "model_output"
        found = view_of(step_type, payload)
        assert isinstance(found, Odd) and found == _view_by_union(step_type, payload), payload


# ---------------------------------------------------------------------------------------------------------
# decoding outside the reading room


def _deepest(decode: Any) -> int:
    low, high = 1, 2 * MAX_NESTING
    while low < high:
        mid = (low + high + 1) // 2
        try:
            decode(b"[" * mid + b"]" * mid)
        except (msgspec.DecodeError, RecursionError):
            high = mid - 1
        else:
            low = mid
    return low


def _in_the_room(data: bytes) -> Any:
    from blackbox.format.canonical import _DECODER

    with reading_room():
        return _DECODER.decode(data)


def _deep_stack(depth: int, then: Any) -> Any:
    return then() if depth == 0 else _deep_stack(depth - 1, then)


@pytest.mark.parametrize("limit", [None, MAX_NESTING, 4 * MAX_NESTING])
def test_decoding_accepts_and_refuses_the_depths_the_reading_room_does(limit: int | None) -> None:
    before = sys.getrecursionlimit()
    if limit is not None:
        sys.setrecursionlimit(limit)
    try:
        assert _deepest(decode_json) == _deepest(_in_the_room)
        frames = min(500, sys.getrecursionlimit() // 3)
        deep = _deep_stack(frames, lambda: (_deepest(decode_json), _deepest(_in_the_room)))
        assert deep[0] == deep[1]
    finally:
        sys.setrecursionlimit(before)
    text = b'{"a": [1, 2.5, {"b": "\\u00e9"}], "a": 3}'
    assert decode_json(text) == _in_the_room(text) == {"a": 3}


# ---------------------------------------------------------------------------------------------------------
# replay's equality test, and what replay sends


NUMBERS = st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) | st.booleans()
VALUES = st.recursive(st.none() | NUMBERS | st.text(max_size=3), lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=2), inner, max_size=3), max_leaves=10)


def _twin(value: Any, data: st.DataObject) -> Any:
    """`value` with its keys reordered and some integral numbers turned into floats (still JSON-equal)."""
    if isinstance(value, dict):
        keys = data.draw(st.permutations(list(value)))
        return {key: _twin(value[key], data) for key in keys}
    if isinstance(value, list):
        return [_twin(item, data) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**52 and data.draw(st.booleans()):
        return JSFloat(value)
    return value


@settings(max_examples=300, deadline=None)
@given(a=VALUES, other=VALUES, data=st.data())
def test_replays_equality_test_agrees_with_json_equality(a: Any, other: Any, data: st.DataObject) -> None:
    twin = _twin(a, data)
    assert first_difference(a, twin) is None
    assert (first_difference(a, other) is None) == json_equal(a, other)
    assert first_difference([True], [1]) is not None and first_difference({"x": 1}, {"x": 1.0}) is None


def test_a_replayed_body_is_plain_json_or_canonical_where_a_lone_surrogate_needs_it() -> None:
    body = {"content": [{"type": "text", "text": "Belém \u2028"}], "usage": {"input_tokens": 3}, "t": JSFloat(0.5)}
    assert json.loads(_body_bytes(body)) == json.loads(canonical_text(body))
    lone = {"text": "half \ud800 pair"}
    assert _body_bytes(lone) == canonical_text(lone).encode()


@pytest.mark.parametrize("http", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_a_replayed_response_is_built_read_exactly_as_content_builds_it(http: Any) -> None:
    assert _answers_read(http)  # else every replayed call would pay the reading pass again
    request = http.Request("POST", "http://h.example/v1/messages")
    for body in (b'{"id": "msg_1"}', b""):
        headers = [("content-type", "application/json"), ("x-should-retry", "false")]
        fast = _read_answer(http, 200, headers, body, request)
        slow = http.Response(200, headers=headers, content=body, request=request)
        assert fast.headers.raw == slow.headers.raw and fast.read() == slow.read() == body
        assert (fast.is_closed, fast.is_stream_consumed, fast.json() if body else None) == \
            (slow.is_closed, slow.is_stream_consumed, slow.json() if body else None)
        assert list(fast.iter_bytes()) == list(slow.iter_bytes())


# ---------------------------------------------------------------------------------------------------------
# routing by the request's shape


def _asked_in_turn(request: Request) -> Any:
    return next((provider for provider in PROVIDERS if provider.matches(request)), None)


ROUTED = [
    ("POST", "http://bench.invalid/v1/messages", []),
    ("POST", "http://bench.invalid/v1/chat/completions", []),
    ("POST", "http://bench.invalid/v1/chat/completions", [("api-key", KEY_TWO)]),  # the same shape, Azure's key
    ("POST", "http://bench.invalid/v1/chat/completions/", []),
    ("POST", "https://r.openai.azure.com/openai/v1/chat/completions", []),
    ("POST", "http://h/openai/deployments/prod/chat/completions?api-version=2024-10-21", []),
    ("POST", "http://h/openai/responses?api-version=preview", []),
    ("POST", "http://h/v1/responses", []),
    ("POST", "http://h/v1/responses", [("Api-Key", KEY_TWO)]),
    ("POST", "http://h/v1beta/models/gemini-2.5-flash:generateContent", []),
    ("POST", "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", []),
    ("POST", "http://h/v1beta/interactions", []),
    ("POST", "http://h/v1beta/interactions", [("x-goog-api-key", KEY_TWO)]),
    ("POST", "https://generativelanguage.googleapis.com/v1beta/interactions", []),
    ("GET", "http://bench.invalid/v1/messages", []),
    ("POST", "http://bench.invalid/v1/models", []),
]


def test_routing_by_shape_names_the_provider_asking_each_in_turn_names() -> None:
    requests = [_request(httpx2.Request(method, url, headers=headers, content=b"{}"), b"{}")
                for method, url, headers in ROUTED]
    requests += [Request.post(url, b"{}", headers) for method, url, headers in ROUTED if method == "POST"]
    for request in [*requests, *reversed(requests), *requests]:  # each shape seen with and without its headers
        assert route(request) is _asked_in_turn(request), request
