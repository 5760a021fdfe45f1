"""What Gemini's request and response sides share: the parts Blackbox knows, a function call's key, the error body.

A Gemini function call may come without an id (the Gemini API sends none; Vertex AI and newer models may).  Every
call is also known to `CallIds` by a key of its name, its arguments and its occurrence among identical calls of
the conversation (`name:args#k`), so a later request's history maps it back to the same `call-N` whether it
carries no id, the id the API gave, or one the agent's framework made up; a replayed response hands `call-N` out
as the call's id, which normalizes to the same payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blackbox.providers.neutral import CallIds, compact_json, unsupported

__all__ = ["HOLLOW", "KEPT_PARAMS", "PART_KINDS", "REST", "SKIP_SIGNATURE", "TOP_PARAMS", "StreamedBody", "call_id",
           "call_key", "check_part", "error_body", "fresh_key", "hollow_of", "is_thought", "signed"]

#: generationConfig fields and their neutral `params` names.  Every other generationConfig field is kept too (all of
#: it steers the model), as one param `generationConfig`; `toolConfig` and `safetySettings` under their names.
KEPT_PARAMS: Mapping[str, str] = {
    "maxOutputTokens": "maxTokens",
    "temperature": "temperature",
    "topP": "topP",
    "topK": "topK",
    "stopSequences": "stop",
    "seed": "seed",
    "presencePenalty": "presencePenalty",
    "frequencyPenalty": "frequencyPenalty",
    "thinkingConfig": "thinking",
    "responseMimeType": "responseMimeType",
    "responseSchema": "responseSchema",
    "responseJsonSchema": "responseJsonSchema",
}
REST = "generationConfig"
TOP_PARAMS = ("toolConfig", "safetySettings")  # request fields outside generationConfig kept under their names
#: The data fields of a part Blackbox records (a part holds one of them), beside `thought` / `thoughtSignature`.
PART_KINDS = ("text", "functionCall", "functionResponse")
_REFUSED_PARTS = {
    "inlineData": ("inline data (an image, audio or a file)", "send text; keep media out of recorded runs"),
    "fileData": ("a file reference", "send text; keep files out of recorded runs"),
    "executableCode": ("code execution", "drop the codeExecution tool; run code in a function the agent runs"),
    "codeExecutionResult": ("code execution", "drop the codeExecution tool; run code in a function the agent runs"),
    "videoMetadata": ("video input", "send text only"),
    "toolCall": ("a server-side tool call", "declare functions the agent runs"),
    "toolResponse": ("a server-side tool response", "declare functions the agent runs"),
}
_IGNORED_KEYS = ("thought", "thoughtSignature", "partMetadata")
#: Google's documented placeholder for a function call whose signature is lost (a history built elsewhere).
SKIP_SIGNATURE = "skip_thought_signature_validator"


def check_part(part: Any, where: str) -> str:
    """The kind of a part (`text`, `functionCall`, `functionResponse`); anything else is refused, naming it."""
    if not isinstance(part, dict):
        raise unsupported(f"a part of type {type(part).__name__} in {where}", "send Part objects")
    if len(part) == 1 and isinstance(part.get("text"), str):  # the common part, answered at once
        return "text"
    kinds = [key for key in part if key not in _IGNORED_KEYS and part[key] is not None]
    for key in kinds:
        if key in _REFUSED_PARTS:
            what, advice = _REFUSED_PARTS[key]
            raise unsupported(f"{what} in {where}", advice)
    known = [key for key in kinds if key in PART_KINDS]
    if len(kinds) != 1 or len(known) != 1:
        if not kinds and "thought" in part:
            return "text"  # an empty thought part
        names = ", ".join(repr(key) for key in kinds) or "no data"
        raise unsupported(f"a part with {names} in {where}", "send text, functionCall and functionResponse parts")
    kind = known[0]
    if kind == "functionCall":
        call = part["functionCall"]
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            raise unsupported(f"a functionCall with no name in {where}", "this call cannot be replayed faithfully")
        if call.get("args") is not None and not isinstance(call["args"], dict):
            raise unsupported(f"functionCall args that are not an object in {where}", "pass args as an object")
    if kind == "functionResponse" and not isinstance(part["functionResponse"], dict):
        raise unsupported(f"a functionResponse that is not an object in {where}", "send FunctionResponse parts")
    if kind == "text" and not isinstance(part["text"], str):
        raise unsupported(f"a text part that is not a string in {where}", "send text as a string")
    return str(kind)


def is_thought(part: dict[str, Any]) -> bool:
    """A thought part (the model's thinking summary): never part of a `model_input`."""
    return part.get("thought") is True


def call_key(call: dict[str, Any]) -> str:
    """An id-less call's identity without its occurrence: `name:args`."""
    return f"{call.get('name')}:{compact_json(call.get('args') or {})}"


def fresh_key(call: dict[str, Any], ids: CallIds) -> str:
    """A response's id-less call: the first `name:args#k` the conversation has not used yet (the request's
    history, normalized just before, mapped the earlier ones)."""
    base = call_key(call)
    k = 0
    while ids.lookup(f"{base}#{k}") is not None:
        k += 1
    return f"{base}#{k}"


def call_id(call: dict[str, Any], key: str, ids: CallIds) -> str:
    """The `call-N` of a call whose content key is `key`: by its id when that is known, else by the key (an
    SDK may give an id-less call an id of its own, pydantic-ai does), else a fresh one.  The id and the key
    both end up mapped to it, so a later functionResponse by id and a later identical call count alike."""
    provider_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
    found = ids.lookup(provider_id) if provider_id is not None else None
    neutral_id = found if found is not None else ids.neutral(key)
    if provider_id is not None and found is None:
        ids.bind(provider_id, neutral_id)
    if ids.lookup(key) is None:
        ids.bind(key, neutral_id)
    ids.note_name(neutral_id, call["name"])
    return neutral_id


#: What a frame may lack, in the order google-genai's chats look: then they leave the turn out of their history.
HOLLOW = ("candidates", "content", "parts")


class StreamedBody(dict[str, Any]):
    """A GenerateContentResponse assembled from a stream (or to be streamed) with the one thing only the stream
    shows: `hollow`, what its first frame without content lacked (one of `HOLLOW`), else None.  google-genai's
    chats drop a turn streamed with such a frame from the history they send next, so a replayed stream ends
    with one too.  An attribute, never a key: no response body can claim it."""

    hollow: str | None = None


def signed(part: dict[str, Any], signature: Any) -> dict[str, Any]:
    """`part` with its `thoughtSignature`, when there is one."""
    if isinstance(signature, str) and signature:
        part["thoughtSignature"] = signature
    return part


def hollow_of(frame: dict[str, Any]) -> str | None:
    """What a frame lacks that google-genai's chats need (a candidate, its content, the content's parts), or None."""
    candidates = frame.get("candidates")
    if not candidates:
        return "candidates"
    content = candidates[0].get("content") if isinstance(candidates[0], dict) else None
    if content is None:
        return "content"
    return None if content.get("parts") else "parts"


_STATUS = {400: "INVALID_ARGUMENT"}


def error_body(message: str) -> dict[str, Any]:
    """Google's error shape (HTTP 400 `INVALID_ARGUMENT`), which google-genai raises as `ClientError` unretried."""
    if not message.startswith("[blackbox]"):
        message = f"[blackbox] {message}"
    return {"error": {"code": 400, "message": message, "status": _STATUS[400]}}
