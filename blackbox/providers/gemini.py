"""Gemini's `generateContent` API (google-genai, pydantic-ai's GoogleModel) ↔ neutral steps: the request side.

Gemini names the model and the stream flag in the path (`…/models/{model}:generateContent`,
`…:streamGenerateContent?alt=sse`), so `body_of` folds both into the body the codec reads.  Function calls may
carry no id: they are numbered by their name, arguments and occurrence (`gemini_calls.call_key`), and a
`functionResponse` is paired with its call by id, else by order and name.  Thought parts and `thoughtSignature`
are never part of a `model_input` (the agent sends back what the model said; the signature changes every run):
the response side keeps them in the `model_output` (`gemini_response`) so a replayed conversation carries them
back to the real API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from blackbox.apis import facts
from blackbox.format.payloads import ModelInput
from blackbox.providers import gemini_response, gemini_stream, gemini_typed, origins
from blackbox.providers import token_counts as counts
from blackbox.providers.base import CodecProvider
from blackbox.providers.gemini_calls import (
    KEPT_PARAMS,
    REST,
    TOP_PARAMS,
    call_id,
    call_key,
    check_part,
    error_body,
    is_thought,
)
from blackbox.providers.gemini_whatif import build_request
from blackbox.providers.neutral import CallIds, neutral_tool, unsupported
from blackbox.wire import Request

__all__ = ["KEPT_PARAMS", "PROVIDER", "Gemini", "build_request", "normalize_request"]

_CALL_PATH = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)$")
_GOOGLE_HOSTS = ("googleapis.com",)
_PATHS: dict[str, tuple[str, bool] | None] = {}  # route → (model, streamed) of its method call, or None
_REFUSED_FIELDS = {
    "cachedContent": ("cachedContent (a server-side context cache)", "send the whole conversation in contents"),
}
_REFUSED_TOOLS = {
    "googleSearch": "Google Search grounding", "googleSearchRetrieval": "Google Search grounding",
    "codeExecution": "code execution", "urlContext": "URL context", "retrieval": "retrieval",
    "fileSearch": "file search", "googleMaps": "Google Maps grounding", "computerUse": "computer use",
    "enterpriseWebSearch": "web search",
}


def _called(route: str) -> tuple[str, bool] | None:
    """The model and the stream flag a method-call path names, or None; remembered per path (an agent calls
    a few, on every request), for `matches` and `body_of` alike."""
    if route in _PATHS:
        return _PATHS[route]
    found = _CALL_PATH.search(route)
    called = (found.group(1), found.group(2) == "streamGenerateContent") if found is not None else None
    if len(_PATHS) < 1024:
        _PATHS[route] = called
    return called


def _method_call(request: Request) -> tuple[str, bool]:
    found = _called(request.route)
    if found is None:
        raise unsupported("Gemini's Interactions API (server-side conversation state)",
                          "use client.models.generate_content or chats, which send the whole conversation")
    return found


def _check_alt(request: Request, streamed: bool) -> None:
    if streamed and request.param("alt") != "sse":
        raise unsupported("a streamGenerateContent request without alt=sse (a JSON-array stream)",
                          "stream with the google-genai SDK, which asks for alt=sse")


def normalize_request(body: dict[str, Any], ids: CallIds, kept: Mapping[str, str] = KEPT_PARAMS) -> ModelInput:
    """The neutral `model_input` of a generateContent request; refuses what cannot be replayed faithfully
    (leaving `ids` as it was).  `kept` is the provider's `kept_params` (generationConfig field → neutral name)."""
    with ids.undo_on_error():
        return _normalize_request(body, ids, kept)


def _normalize_request(body: dict[str, Any], ids: CallIds, kept: Mapping[str, str]) -> ModelInput:
    for field, refusal in _REFUSED_FIELDS.items():
        if body.get(field):
            raise unsupported(*refusal)
    contents = body.get("contents")
    if isinstance(contents, dict):
        contents = [contents]
    if not isinstance(contents, list):
        raise unsupported("a generateContent request without a contents list", "send contents=[...]")
    payload: dict[str, Any] = {"messages": _messages(contents, ids), "tools": _tools(body.get("tools"))}
    system = body.get("systemInstruction")
    if system is not None:
        payload["systemPrompt"] = _system(system)
    if body.get("model") is not None:
        payload["model"] = body["model"]
    params = _params(body, kept)
    if params:
        payload["params"] = params
    return cast(ModelInput, payload)


def _params(body: dict[str, Any], kept: Mapping[str, str]) -> dict[str, Any]:
    config = body.get("generationConfig")
    if config is not None and not isinstance(config, dict):
        raise unsupported("a generationConfig that is not an object", "pass a GenerateContentConfig")
    params: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for name, value in (config or {}).items():
        if value is None:
            continue
        if name in kept:
            params[kept[name]] = value
        elif name == "candidateCount":
            if value != 1:
                raise unsupported(f"candidateCount={value}", "ask for one candidate (Blackbox records one answer a "
                                                             "call)")
        elif name == "responseModalities":
            if not isinstance(value, list) or any(str(m).upper() != "TEXT" for m in value):
                raise unsupported("responseModalities other than TEXT", "ask for text output only")
            rest[name] = value
        elif name == "speechConfig":
            raise unsupported("speechConfig (audio output)", "ask for text output only")
        else:
            rest[name] = value
    if rest:
        params[REST] = rest
    for name in TOP_PARAMS:
        if body.get(name) is not None:
            params[name] = body[name]
    return params


_NOTHING: Mapping[str, Any] = {}


def _typed_params(typed: gemini_typed.GenerateContent, kept: Mapping[str, str]) -> dict[str, Any]:
    """`_params` of a typed request whose generationConfig holds kept fields only (the common one); `Unusual`
    for any other field, which `_params` judges."""
    params: dict[str, Any] = {}
    for name, value in (typed.generationConfig or _NOTHING).items():
        if value is not None:
            neutral = kept.get(name)
            if neutral is None:
                raise gemini_typed.Unusual
            params[neutral] = value
    if typed.toolConfig is not None:
        params["toolConfig"] = typed.toolConfig
    if typed.safetySettings is not None:
        params["safetySettings"] = typed.safetySettings
    return params


def _system(system: Any) -> str:
    if isinstance(system, str):
        return system
    found = system.get("parts") if isinstance(system, dict) else None
    if not isinstance(found, list):
        raise unsupported("a systemInstruction that is not text content", "pass the system instruction as text")
    texts = []
    for part in found:
        if type(part) is dict and len(part) == 1 and type(text := part.get("text")) is str:  # a plain text part
            texts.append(text)
            continue
        kind = check_part(part, "the system instruction")
        if kind != "text":
            raise unsupported(f"a {kind!r} part in the system instruction", "use text parts only")
        texts.append(part.get("text") or "")
    return "\n\n".join(texts)


def _tools(tools: Any) -> list[dict[str, Any]]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise unsupported("a tools value that is not a list", "pass tools=[...]")
    out: list[dict[str, Any]] = []
    for tool in tools:
        if not isinstance(tool, dict):
            raise unsupported(f"a tool of type {type(tool).__name__}", "declare functions only")
        for key, value in tool.items():
            if key == "functionDeclarations":
                for declaration in value or []:  # each one read here: an agent declares many, on every request
                    if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
                        raise unsupported("a function declaration without a name", "give every function a name")
                    # the API takes both spellings, and google-genai sends the JSON-schema field in snake case
                    schema = declaration.get("parametersJsonSchema")
                    if schema is None:
                        schema = declaration.get("parameters_json_schema")
                    if schema is None:
                        schema = declaration.get("parameters")
                    out.append(neutral_tool(declaration["name"], declaration.get("description"), schema))
            elif value is not None:
                what = _REFUSED_TOOLS.get(key, f"the tool {key!r}")
                raise unsupported(what, "Blackbox records function declarations only; expose it as a function "
                                        "the agent runs")
    return out


def _messages(contents: list[Any], ids: CallIds) -> list[dict[str, Any]]:
    """Consecutive contents of one role are one message (a streamed chat keeps one model content per frame)."""
    turns: list[tuple[str, list[Any]]] = []
    for content in contents:
        if not isinstance(content, dict):
            raise unsupported(f"a content of type {type(content).__name__}", "send Content objects")
        role = "assistant" if content.get("role") == "model" else "user"
        found = content.get("parts") or []
        if not isinstance(found, list):
            raise unsupported("a content whose parts is not a list", "send parts=[...]")
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(found)
        else:
            turns.append((role, list(found)))
    seen: dict[str, int] = {}
    messages: list[dict[str, Any]] = []
    previous: list[dict[str, Any]] = []  # the calls of the last assistant turn, for the functionResponses after it
    for role, found in turns:
        if role == "assistant":
            message, previous = _assistant(found, ids, seen)
        else:
            message = _user(found, ids, previous)
        messages.append(message)
    return messages


def _assistant(found: list[Any], ids: CallIds, seen: dict[str, int]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """All answer text concatenated (a stream cuts it into parts), then the calls; thoughts dropped."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in found:
        if type(part) is dict and len(part) == 1 and type(text := part.get("text")) is str:  # a plain text part
            texts.append(text)
            continue
        kind = check_part(part, "a model turn")
        if is_thought(part):
            continue
        if kind == "text":
            texts.append(part.get("text") or "")
        elif kind == "functionCall":
            call = part["functionCall"]
            base = call_key(call)
            key = f"{base}#{seen.get(base, 0)}"
            seen[base] = seen.get(base, 0) + 1
            calls.append({"type": "tool_use", "toolCallId": call_id(call, key, ids), "toolName": call["name"],
                          "toolInput": call.get("args") or {}})
        else:
            raise unsupported(f"a {kind!r} part in a model turn", _PART_ADVICE)
    text = "".join(texts)
    if not calls:
        return {"role": "assistant", "content": text}, []
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    return {"role": "assistant", "content": content + calls}, calls


_PART_ADVICE = "send text, functionCall and functionResponse parts only"


def _user(found: list[Any], ids: CallIds, previous: list[dict[str, Any]]) -> dict[str, Any]:
    texts: list[str] = []
    results: list[dict[str, Any]] = []
    unclaimed: list[dict[str, Any]] | None = None  # the calls not answered yet, copied at the first response
    for part in found:
        if type(part) is dict and len(part) == 1 and type(text := part.get("text")) is str:  # a plain text part
            texts.append(text)
            continue
        kind = check_part(part, "a user turn")
        if is_thought(part):
            continue
        if kind == "text":
            texts.append(part.get("text") or "")
        elif kind == "functionResponse":
            if unclaimed is None:
                unclaimed = list(previous)
            results.append(_result(part["functionResponse"], ids, unclaimed))
        else:
            raise unsupported(f"a {kind!r} part in a user turn", _PART_ADVICE)
    if not results:
        return {"role": "user", "content": "\n\n".join(texts)}
    if texts:
        raise unsupported("text beside functionResponse parts in one turn", "send the text in a turn of its own")
    return {"role": "user", "content": results}


def _result(response: dict[str, Any], ids: CallIds, unclaimed: list[dict[str, Any]]) -> dict[str, Any]:
    """A functionResponse paired with its call: by id when it has one, else the first unanswered call of the
    previous model turn with its name."""
    name = response.get("name")
    provider_id = response.get("id")
    match = None
    if isinstance(provider_id, str) and provider_id:
        known = ids.lookup(provider_id)
        match = next((call for call in unclaimed if call["toolCallId"] == known), None)
    if match is None:
        match = next((call for call in unclaimed if call["toolName"] == name), None)
    if match is None:
        raise unsupported(f"a functionResponse for {name!r} whose functionCall is not in the turn before it",
                          "send the model turn that asked for the function along with its response")
    unclaimed.remove(match)
    value = response.get("response")
    return {"type": "tool_result", "toolCallId": match["toolCallId"], "toolName": match["toolName"],
            "result": {} if value is None else value}


class Gemini(CodecProvider):
    """The Gemini API's generateContent and streamGenerateContent (`alt=sse`), and Vertex AI's same paths."""

    name = "gemini"
    label = "Gemini generateContent"
    api = facts("gemini")
    suffix = ":generateContent"
    kept_params = KEPT_PARAMS
    stream = gemini_stream.CODEC
    normalize_response = staticmethod(gemini_response.normalize_response)
    token_counts = staticmethod(counts.gemini)
    call_slots = staticmethod(origins.gemini_slots)
    response_id_field = "responseId"
    response_model_field = "modelVersion"
    synthesize_response = staticmethod(gemini_response.synthesize_response)
    note_replayed = staticmethod(gemini_response.note_replayed)
    error_body = staticmethod(error_body)

    def normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        return normalize_request(body, ids, self.kept_params)

    def build_request(self, model_input: Mapping[str, Any]) -> dict[str, Any]:
        return build_request(model_input, (), self.sent_fields)

    def continue_request(self, model_input: Mapping[str, Any], outputs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return build_request(model_input, outputs, self.sent_fields)

    def matches(self, request: Request) -> bool:
        if request.method != "POST":
            return False
        if ":" in request.path:  # a method call (`…:generateContent`): no other API's path has a colon
            return _called(request.route) is not None
        # The stateful Interactions API: taken only to be refused with advice (`body_of`).
        return request.route.endswith("/interactions") and (
            request.host.endswith(_GOOGLE_HOSTS) or request.header("x-goog-api-key") is not None)

    def matches_shape(self, request: Request) -> bool | None:
        if request.method != "POST" or ":" in request.path or not request.route.endswith("/interactions"):
            return self.matches(request)
        return True if request.host.endswith(_GOOGLE_HOSTS) else None  # else the `x-goog-api-key` header decides

    def body_of(self, request: Request) -> dict[str, Any]:
        model, streamed = _method_call(request)
        body = CodecProvider.body_of(self, request)
        _check_alt(request, streamed)
        body["model"] = model
        body["stream"] = streamed
        return body

    def read_request(self, request: Request, ids: CallIds) -> tuple[dict[str, Any], ModelInput]:
        """The common body through `gemini_typed` (one pass, no dicts to walk); any other through the dict codec."""
        model, streamed = _method_call(request)
        typed = gemini_typed.decode(request.body)
        if typed is not None:
            _check_alt(request, streamed)
            try:
                params = _typed_params(typed, self.kept_params)
                payload = gemini_typed.normalize(typed, ids, {})  # the ids bound once all of it is read
            except gemini_typed.Unusual:
                pass  # the dict codec decides (and words any refusal)
            else:
                payload["model"] = model
                if params:
                    payload["params"] = params
                return {"model": model, "stream": streamed}, cast(ModelInput, payload)
        return CodecProvider.read_request(self, request, ids)

    def endpoint(self, base_url: str, model: str) -> str:
        base = base_url.rstrip("/")
        version = "" if re.search(r"/v1(beta\d*|alpha)?$", base) else "/v1beta"
        return f"{base}{version}/models/{model}:generateContent"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-goog-api-key": key}


PROVIDER = Gemini()
