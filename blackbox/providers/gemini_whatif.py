"""Gemini's what-if request: a generateContent body for a neutral `model_input`, with what the model said back.

A `model_input` keeps no thought parts and no `thoughtSignature` (the request side drops them), but the model's
turns it holds came from recorded outputs, which keep both (`gemini_response`: `thoughts`, `signatures`).  Given
those outputs, each model turn is sent back as google-genai sends back the content it received in a multi-turn
chat: its thought parts first (text, `thought: true`, their signatures), then its text and its calls, each
signature where the response had it.  Gemini 3 refuses a function-call turn whose signature is missing; a turn
no recorded output gave (a hand-built or imported history) carries Google's documented placeholder on its first
call instead.  Every `generationConfig` field goes back under its own name (`KEPT_PARAMS` read backwards, the rest
of `generationConfig` as it came).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blackbox.providers.gemini_calls import KEPT_PARAMS, REST, SKIP_SIGNATURE, TOP_PARAMS, signed
from blackbox.providers.neutral import calls_of
from blackbox.providers.outgoing import kept, parts, sent_as, tools_of

__all__ = ["build_request"]

_FIELDS = sent_as(KEPT_PARAMS)
_NOTHING: Mapping[str, Any] = {}


def build_request(payload: Mapping[str, Any], outputs: Sequence[Mapping[str, Any]] = (),
                  fields: Mapping[str, str] = _FIELDS) -> dict[str, Any]:
    """A generateContent body for `payload`; `outputs` are the conversation's recorded `model_output`s (oldest
    first), whose thoughts and signatures go back in the model turns they gave.  A model turn's calls carry
    their `call-N` id.  `fields` is the provider's `sent_fields` (neutral name → generationConfig field)."""
    messages = [message for message in payload.get("messages") or [] if isinstance(message, dict)]
    said = _outputs_of(messages, outputs)
    contents: list[dict[str, Any]] = []
    for message in messages:
        model = message.get("role") == "assistant"
        output = said.get(id(message)) if model else None
        out: list[dict[str, Any]] = _thoughts(output) if output is not None else []
        signatures = _signatures(output)
        for part in parts(message.get("content")):
            kind = part.get("type")
            if kind == "text" and part.get("text"):
                out.append(signed({"text": part["text"]}, signatures.get("text")))
            elif kind == "tool_use":
                args = part.get("toolInput")
                call: dict[str, Any] = {"functionCall": {"id": part.get("toolCallId"), "name": part.get("toolName"),
                                                         "args": args if isinstance(args, dict) else {}}}
                out.append(signed(call, signatures.get(str(part.get("toolCallId")))))
            elif kind == "tool_result":
                out.append({"functionResponse": {"id": part.get("toolCallId"), "name": part.get("toolName"),
                                                 "response": _response_value(part)}})
        if model and output is None:  # no recorded output: Google's placeholder on the turn's first call
            first = next((part for part in out if "functionCall" in part), None)
            if first is not None:
                first["thoughtSignature"] = SKIP_SIGNATURE
        contents.append({"role": "model" if model else "user", "parts": out})
    body: dict[str, Any] = {"contents": contents}
    found = payload.get("params")
    params: Mapping[str, Any] = found if isinstance(found, dict) else _NOTHING
    config = kept(payload, fields)
    rest = params.get(REST)
    if isinstance(rest, dict):
        config.update(rest)
    if config:
        body["generationConfig"] = config
    body.update({name: params[name] for name in TOP_PARAMS if params.get(name) is not None})
    if isinstance(payload.get("systemPrompt"), str):
        body["systemInstruction"] = {"parts": [{"text": payload["systemPrompt"]}]}
    declarations = [_declared(name, description, schema) for name, description, schema in tools_of(payload)]
    if declarations:
        body["tools"] = [{"functionDeclarations": declarations}]
    return body


def _outputs_of(messages: list[dict[str, Any]], outputs: Sequence[Mapping[str, Any]]) -> dict[int, Mapping[str, Any]]:
    """The recorded output each model turn came from (by `id()` of the message): the one holding its calls (a
    `call-N` is one call in the whole run), else the earliest unclaimed answer with its text."""
    by_call: dict[str, Mapping[str, Any]] = {}
    answers: list[Mapping[str, Any]] = []
    for output in outputs:
        calls = calls_of(output)
        for call in calls:
            by_call.setdefault(str(call.get("toolCallId")), output)
        if not calls:
            answers.append(output)
    found: dict[int, Mapping[str, Any]] = {}
    for message in messages:
        if message.get("role") != "assistant":
            continue
        content = parts(message.get("content"))
        ids = [str(part.get("toolCallId")) for part in content if part.get("type") == "tool_use"]
        turn = next((by_call[call] for call in ids if call in by_call), None)
        if turn is None and not ids:
            text = "".join(part.get("text") or "" for part in content if part.get("type") == "text")
            turn = next((answer for answer in answers if (answer.get("text") or "") == text), None)
            if turn is not None:
                answers.remove(turn)
        if turn is not None:
            found[id(message)] = turn
    return found


def _thoughts(output: Mapping[str, Any]) -> list[dict[str, Any]]:
    thoughts = output.get("thoughts")
    return [signed({"text": thought.get("text") or "", "thought": True}, thought.get("signature"))
            for thought in thoughts if isinstance(thought, dict)] if isinstance(thoughts, list) else []


def _signatures(output: Mapping[str, Any] | None) -> Mapping[str, Any]:
    found = output.get("signatures") if output is not None else None
    return found if isinstance(found, dict) else _NOTHING


def _response_value(part: Mapping[str, Any]) -> dict[str, Any]:
    if "error" in part:
        return {"error": part.get("error")}
    value = part.get("result")
    return value if isinstance(value, dict) else {"result": value}


def _declared(name: Any, description: str, schema: Any) -> dict[str, Any]:
    """A declaration: an OpenAPI-style schema (Gemini's `parameters`, types in capitals) goes back as it came,
    any other JSON schema as `parametersJsonSchema`."""
    openapi = isinstance(schema, dict) and isinstance(schema.get("type"), str) and schema["type"].isupper()
    return {"name": name, "description": description, ("parameters" if openapi else "parametersJsonSchema"): schema}
