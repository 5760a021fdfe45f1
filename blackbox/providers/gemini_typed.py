"""Gemini's common request, decoded straight into msgspec Structs and normalized in one pass (replay's hot path).

A generateContent body is deeper than the other APIs' (contents → parts, systemInstruction → parts, tools →
functionDeclarations), and decoding it into dicts only to walk them again cost Gemini a third more per call
than Anthropic.  The Structs here name every field of the common shape and nothing else: a body with any other
field, value type or part kind fails to decode (or gives `Unusual` while normalizing), and `gemini.py`'s dict
codec, the authority, reads it instead — so this path never refuses, never guesses, and for every body it takes
gives exactly the `model_input` and `CallIds` bindings that the dict codec gives (a property test holds it).
"""

from __future__ import annotations

from typing import Any

import msgspec

from blackbox.format.canonical import JSFloat
from blackbox.format.nesting import MAX_NESTING, in_room
from blackbox.providers.neutral import CallIds, compact_json, neutral_tool

__all__ = ["GenerateContent", "Unusual", "decode", "normalize"]


class Unusual(Exception):
    """The body is valid but not of the common shape: the dict codec reads it."""


class _Strict(msgspec.Struct, forbid_unknown_fields=True, gc=False):  # no cycle comes from JSON
    pass


class FunctionCall(_Strict):
    name: str
    args: dict[str, Any] | None = None
    id: str | None = None


class FunctionResponse(_Strict):
    name: str | None = None
    response: Any = None
    id: str | None = None


class Part(_Strict):
    text: str | None = None
    functionCall: FunctionCall | None = None
    functionResponse: FunctionResponse | None = None
    thought: bool | None = None
    thoughtSignature: str | None = None


class Content(_Strict):
    parts: list[Part] | None = None
    role: str | None = None


class FunctionDeclaration(_Strict, rename={"snake_schema": "parameters_json_schema"}):
    name: str
    description: str | None = None
    parametersJsonSchema: Any = None
    snake_schema: Any = None  # google-genai sends the JSON-schema field in snake case
    parameters: Any = None


class Tool(_Strict):
    functionDeclarations: list[FunctionDeclaration] | None = None


class GenerateContent(_Strict):
    contents: list[Content]
    systemInstruction: Content | None = None
    tools: list[Tool] | None = None
    generationConfig: dict[str, Any] | None = None
    toolConfig: Any = None
    safetySettings: Any = None


_DECODER = msgspec.json.Decoder(GenerateContent, float_hook=JSFloat)


def decode(raw: bytes) -> GenerateContent | None:
    """The body as Structs, or None when it is not of the common shape (or not JSON the fast way)."""
    try:
        return in_room(MAX_NESTING, lambda: _DECODER.decode(raw))
    except (msgspec.DecodeError, RecursionError):  # a ValidationError is a DecodeError
        return None


def normalize(request: GenerateContent, ids: CallIds, payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with the neutral messages, tools and system prompt of a common-shape request (in the dict codec's
    order); `Unusual` for whatever the dict codec decides (a refusal, a part with no data or two).  `ids` learns
    the request's calls only once all of it is read: a request handed to the dict codec has changed nothing,
    with no undo to pay for.  (Few lists are made on the way: each is one more object the cyclic collector
    counts, and its runs then land in the SDK's own work, which for google-genai is heavy with young objects.)"""
    system = None if request.systemInstruction is None else _system(request.systemInstruction)
    tools = _tools(request.tools)
    messages, bindings = _messages(request.contents, ids)
    if bindings is not None:
        bindings.commit()
    payload["messages"], payload["tools"] = messages, tools
    if system is not None:
        payload["systemPrompt"] = system
    return payload


class _Bindings:
    """`CallIds` as the read sees it: its bindings, then those the request adds, held here until `commit`."""

    __slots__ = ("ids", "names", "new", "next", "seen")
    ids: CallIds
    seen: dict[str, int]  # a call key → how many calls of the conversation had it so far
    new: dict[str, str]  # provider id or call key → `call-N`
    names: dict[str, str]  # `call-N` → its tool's name
    next: int

    def __init__(self, ids: CallIds) -> None:
        self.ids, self.new, self.names, self.next, self.seen = ids, {}, {}, ids.next_index, {}

    def lookup(self, key: str) -> str | None:
        found = self.new.get(key)
        return found if found is not None else self.ids.lookup(key)

    def neutral(self, key: str) -> str:
        """`CallIds.neutral`: the key's `call-N`, the next one when it has none (as the ids would number it)."""
        found = self.lookup(key)
        if found is None:
            found = self.new[key] = f"call-{self.next}"
            self.next += 1
        return found

    def commit(self) -> None:
        """Bind what the read added (a bound `call-N` moves the ids' counter past N, as a fresh one would)."""
        for key, neutral_id in self.new.items():
            self.ids.bind(key, neutral_id)
        for neutral_id, name in self.names.items():
            self.ids.note_name(neutral_id, name)


def _kind(part: Part) -> str:
    """Which one of text, functionCall and functionResponse the part holds; `Unusual` for none or several."""
    text, call, response = part.text is not None, part.functionCall is not None, part.functionResponse is not None
    if text + call + response != 1:
        raise Unusual
    if call and not part.functionCall.name:  # type: ignore[union-attr]
        raise Unusual
    return "text" if text else "functionCall" if call else "functionResponse"


def _system(system: Content) -> str:
    found = system.parts
    if found is None:
        raise Unusual
    for part in found:
        if part.text is None or part.functionCall is not None or part.functionResponse is not None:
            raise Unusual
    return found[0].text if len(found) == 1 else "\n\n".join([part.text for part in found])  # type: ignore[misc,return-value]


def _tools(tools: list[Tool] | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in tools or ():
        for declaration in tool.functionDeclarations or ():
            schema = declaration.parametersJsonSchema
            if schema is None:
                schema = declaration.snake_schema
            if schema is None:
                schema = declaration.parameters
            out.append(neutral_tool(declaration.name, declaration.description, schema))
    return out


_NO_CALLS: list[dict[str, Any]] = []


def _messages(contents: list[Content], ids: CallIds) -> tuple[list[dict[str, Any]], _Bindings | None]:
    """Consecutive contents of one role are one message; the `_Bindings`, made at the first call, if any."""
    messages: list[dict[str, Any]] = []
    previous = _NO_CALLS  # the calls of the last model turn, for the functionResponses after it
    bindings: _Bindings | None = None
    at, end = 0, len(contents)
    while at < end:
        content = contents[at]
        model = content.role == "model"
        found = content.parts or _NO_PARTS
        at += 1
        while at < end and (contents[at].role == "model") is model:  # merged, as a streamed chat's turns are
            found = found + (contents[at].parts or _NO_PARTS)
            at += 1
        if model:
            message, previous, bindings = _assistant(found, ids, bindings)
        else:
            message = _user(found, ids if bindings is None else bindings, previous)
        messages.append(message)
    return messages, bindings


_NO_PARTS: list[Part] = []


def _plain(part: Part) -> bool:
    return part.text is not None and part.functionCall is None and part.functionResponse is None


def _texts_and(found: list[Part], kind: str) -> tuple[list[str], list[Part]]:
    """A turn's texts and its parts of `kind`, in order, thoughts dropped; `Unusual` for a part of any other
    kind (a call in a user turn, a response in a model turn), which the dict codec refuses."""
    texts: list[str] = []
    data: list[Part] = []
    for part in found:
        if _plain(part):
            if part.thought is not True:
                texts.append(part.text)  # type: ignore[arg-type]
            continue
        found_kind = _kind(part)
        if part.thought is True:
            continue
        if found_kind != kind:
            raise Unusual
        data.append(part)
    return texts, data


def _assistant(found: list[Part], ids: CallIds, bindings: _Bindings | None
               ) -> tuple[dict[str, Any], list[dict[str, Any]], _Bindings | None]:
    if len(found) == 1 and _plain(part := found[0]):  # the common model turn: one text
        return {"role": "assistant", "content": "" if part.thought is True else part.text}, _NO_CALLS, bindings
    texts, data = _texts_and(found, "functionCall")
    text = "".join(texts)
    if not data:
        return {"role": "assistant", "content": text}, _NO_CALLS, bindings
    if bindings is None:
        bindings = _Bindings(ids)
    seen = bindings.seen
    calls: list[dict[str, Any]] = []
    for part in data:
        call: FunctionCall = part.functionCall  # type: ignore[assignment]
        base = f"{call.name}:{compact_json(call.args or {})}"
        key = f"{base}#{seen.get(base, 0)}"
        seen[base] = seen.get(base, 0) + 1
        calls.append({"type": "tool_use", "toolCallId": _call_id(call, key, bindings), "toolName": call.name,
                      "toolInput": call.args or {}})
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    return {"role": "assistant", "content": content + calls}, calls, bindings


def _call_id(call: FunctionCall, key: str, ids: _Bindings) -> str:
    """`gemini_calls.call_id` for a typed call: by its id when known, else by its key, else a fresh one."""
    provider_id = call.id or None
    found = ids.lookup(provider_id) if provider_id is not None else None
    neutral_id = found if found is not None else ids.neutral(key)
    if provider_id is not None and found is None:
        ids.new[provider_id] = neutral_id
    if ids.lookup(key) is None:
        ids.new[key] = neutral_id
    ids.names[neutral_id] = call.name
    return neutral_id


def _user(found: list[Part], ids: CallIds | _Bindings, previous: list[dict[str, Any]]) -> dict[str, Any]:
    if len(found) == 1 and _plain(part := found[0]):  # the common user turn: one text
        return {"role": "user", "content": "" if part.thought is True else part.text}
    texts, data = _texts_and(found, "functionResponse")
    if not data:
        return {"role": "user", "content": "\n\n".join(texts)}
    if texts:
        raise Unusual
    unclaimed = list(previous)
    return {"role": "user", "content": [_result(part.functionResponse, ids, unclaimed)  # type: ignore[arg-type]
                                        for part in data]}


def _result(response: FunctionResponse, ids: CallIds | _Bindings, unclaimed: list[dict[str, Any]]) -> dict[str, Any]:
    match = None
    if response.id:
        known = ids.lookup(response.id)
        match = next((call for call in unclaimed if call["toolCallId"] == known), None)
    if match is None:
        match = next((call for call in unclaimed if call["toolName"] == response.name), None)
    if match is None:
        raise Unusual
    unclaimed.remove(match)
    value = response.response
    return {"type": "tool_result", "toolCallId": match["toolCallId"], "toolName": match["toolName"],
            "result": {} if value is None else value}
