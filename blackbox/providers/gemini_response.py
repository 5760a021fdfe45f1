"""Gemini's GenerateContentResponse ↔ neutral `model_output`, and the response a replay sends back.

The answer's text parts are one `text` (a stream cuts it into many), its `functionCall` parts the calls (id →
`call-N`; an id-less call keyed as `gemini_calls` says).  What the request side never compares but the real
API needs back in a later turn is kept in the output: the thought parts as `thoughts` (`[{"text",
"signature"?}]`) and each `thoughtSignature` in `signatures` (under `"text"` for the answer's text, under the
`call-N` of a call).  A streamed answer one of whose frames had no content keeps what that frame lacked in
`hollowFrame` (`gemini_calls.StreamedBody`), so its replayed stream has such a frame too.  `usageMetadata`,
`modelVersion`, `responseId` and the safety ratings are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from blackbox.format.payloads import ModelOutput, ToolCall
from blackbox.providers.gemini_calls import HOLLOW, StreamedBody, call_id, check_part, fresh_key, is_thought, signed
from blackbox.providers.neutral import CallIds, calls_of, unsupported

__all__ = ["normalize_response", "synthesize_response"]

_OK_FINISH = (None, "STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED")
_REFUSED_METADATA = {
    "groundingMetadata": "grounded answers (Google Search or retrieval)",
    "citationMetadata": "answers with citations",
    "urlContextMetadata": "URL context",
    "logprobsResult": "log probabilities",
}
_FINISH_ADVICE = {
    "SAFETY": "an answer stopped by the safety filters cannot be replayed faithfully",
    "MALFORMED_FUNCTION_CALL": "the model sent a function call it could not form; retry the call",
    "RECITATION": "an answer stopped for recitation cannot be replayed faithfully",
}


def normalize_response(body: dict[str, Any], ids: CallIds) -> ModelOutput:
    """The neutral `model_output` of a response (ids → `call-N`, usage dropped)."""
    with ids.undo_on_error():
        return _normalize_response(body, ids)


def _normalize_response(body: dict[str, Any], ids: CallIds) -> ModelOutput:
    if not isinstance(body, dict):
        raise unsupported("a Gemini response that is not a JSON object", "check the API endpoint")
    candidates = body.get("candidates")
    if not candidates:
        feedback = body.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if reason:
            raise unsupported(f"a prompt Gemini blocked ({reason})", "a blocked prompt cannot be replayed faithfully")
        raise unsupported("a Gemini response without candidates", "check the API endpoint")
    if not isinstance(candidates, list) or len(candidates) != 1 or not isinstance(candidates[0], dict):
        raise unsupported("a response with more than one candidate", "ask for one candidate")
    candidate = candidates[0]
    for key, what in _REFUSED_METADATA.items():
        if candidate.get(key):
            raise unsupported(what, "turn it off for recorded runs")
    finish = candidate.get("finishReason")
    if finish not in _OK_FINISH:
        raise unsupported(f"the finishReason {finish!r}",
                          _FINISH_ADVICE.get(str(finish), "this response cannot be replayed faithfully"))
    content = candidate.get("content")
    found = content.get("parts") if isinstance(content, dict) else None
    texts: list[str] = []
    calls: list[ToolCall] = []
    thoughts: list[dict[str, Any]] = []
    signatures: dict[str, str] = {}
    for part in found if isinstance(found, list) else []:
        if type(part) is dict and len(part) == 1 and type(text := part.get("text")) is str:  # no thought, signature
            texts.append(text)
            continue
        kind = check_part(part, "a response")
        signature = part.get("thoughtSignature")
        if is_thought(part):
            thought: dict[str, Any] = {"text": part.get("text") or ""}
            if isinstance(signature, str):
                thought["signature"] = signature
            thoughts.append(thought)
        elif kind == "text":
            texts.append(part["text"])
            if isinstance(signature, str):
                signatures["text"] = signature
        elif kind == "functionCall":
            call = part["functionCall"]
            neutral_id = call_id(call, fresh_key(call, ids), ids)
            calls.append({"toolCallId": neutral_id, "toolName": call["name"], "toolInput": call.get("args") or {}})
            if isinstance(signature, str):
                signatures[neutral_id] = signature
        else:
            raise unsupported(f"a {kind!r} part in a response", "this response cannot be replayed faithfully")
    text = "".join(texts)
    output: dict[str, Any] = {"type": "tool_calls", "calls": calls} if calls else {"type": "final_answer", "text": text}
    if calls and text:
        output["text"] = text
    if finish == "MAX_TOKENS":
        output["stop"] = "length"
    if thoughts:
        output["thoughts"] = thoughts
    if signatures:
        output["signatures"] = signatures
    hollow = getattr(body, "hollow", None)
    if hollow in HOLLOW:
        output["hollowFrame"] = hollow
    return cast(ModelOutput, output)


def synthesize_response(output: ModelOutput | Mapping[str, Any], *, step_index: int, timestamp_ms: int = 0,
                        model: str | None) -> dict[str, Any]:
    """A GenerateContentResponse carrying a recorded output: the thoughts, the text, then the calls (each call's
    id its `call-N`, which the agent sends back and which normalizes identically), each signature where it was."""
    kind = output.get("type")
    if kind not in ("tool_calls", "tool_call", "final_answer"):
        raise ValueError(f"not a model_output payload: type {kind!r}")
    found = output.get("signatures")
    signatures: Mapping[str, Any] = found if isinstance(found, dict) else {}
    parts: list[dict[str, Any]] = []
    thoughts = output.get("thoughts")
    if thoughts and isinstance(thoughts, list):
        for thought in thoughts:
            if isinstance(thought, dict):
                parts.append(signed({"text": thought.get("text") or "", "thought": True}, thought.get("signature")))
    text = output.get("text")
    if text:
        parts.append(signed({"text": text}, signatures.get("text")))
    if kind != "final_answer":  # an answer has no calls (the common reply: no call to look for)
        for call in calls_of(output):
            args = call.get("toolInput")
            parts.append(signed({"functionCall": {"id": call["toolCallId"], "name": call["toolName"],
                                                   "args": args if isinstance(args, dict) else {}}},
                                 signatures.get(str(call["toolCallId"]))))
    if not parts:
        parts.append({"text": ""})
    body = StreamedBody(
        candidates=[{"content": {"role": "model", "parts": parts},
                     "finishReason": "MAX_TOKENS" if output.get("stop") == "length" else "STOP", "index": 0}],
        usageMetadata={"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0},
        modelVersion=model if model is not None else "",
        responseId=f"blackbox-replay-{step_index}",
    )
    hollow = output.get("hollowFrame")
    body.hollow = hollow if hollow in HOLLOW else None
    return body


def note_replayed(body: dict[str, Any], ids: CallIds) -> None:
    """A replayed response's calls carry their `call-N` as `id`, but a framework may send them back without it
    (LangChain does): bind each call's `name:args#k` key to its `call-N` too, as recording does, so the next
    request's id-less history maps to the same numbers."""
    for candidate in body.get("candidates") or []:
        for part in (candidate.get("content") or {}).get("parts") or []:
            call = part.get("functionCall") if isinstance(part, dict) else None
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                ids.bind(fresh_key(call, ids), call["id"])
