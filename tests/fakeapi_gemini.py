"""The fake API's Gemini dialect: generateContent bodies, `alt=sse` streams and Google's error shape.

`tests.fakeapi` routes here: a request path `…/models/{model}:generateContent` is a Gemini call,
`…:streamGenerateContent?alt=sse` a streamed one, answered with one whole GenerateContentResponse per `data:`
frame (text cut into pieces, the signature on a text's last piece, `finishReason` and `usageMetadata` in the last
frame, no end marker) — as the Gemini API streams.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Collection, Sequence
from typing import Any

__all__ = ["HOSTILE", "gemini_error", "gemini_frames", "gemini_response", "gemini_turns", "hostile_stream", "is_gemini",
           "is_gemini_stream", "last_function_responses", "signed_turns", "unsigned_turn"]

_PATH = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)$")
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def is_gemini(path: str) -> bool:
    return _PATH.search(path.split("?", 1)[0].rstrip("/")) is not None


def is_gemini_stream(path: str) -> bool:
    found = _PATH.search(path.split("?", 1)[0].rstrip("/"))
    return found is not None and found.group(2) == "streamGenerateContent"


def gemini_response(text: str | None = None, calls: Sequence[tuple[str, dict[str, Any]]] = (), *,
                    thought: str | None = None, signature: str | None = None, finish: str = "STOP",
                    with_ids: bool = False, model: str = "gemini-2.5-flash") -> dict[str, Any]:
    """A GenerateContentResponse: an optional thought, the text, the calls (no ids unless `with_ids`, as the
    Gemini API sends them); `signature` goes on the first call, else on the text."""
    parts: list[dict[str, Any]] = []
    if thought is not None:
        parts.append({"text": thought, "thought": True})
    if text is not None:
        parts.append({"text": text})
    for n, (name, args) in enumerate(calls):
        call: dict[str, Any] = {"name": name, "args": args}
        if with_ids:
            call["id"] = f"fc-{n}-{name}"
        parts.append({"functionCall": call})
    if signature is not None:
        target = next((part for part in parts if "functionCall" in part), parts[-1] if parts else None)
        if target is not None:
            target["thoughtSignature"] = signature
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0,
                        "safetyRatings": []}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 7, "totalTokenCount": 19},
        "modelVersion": model,
        "responseId": "fake-response-id",
    }


def gemini_frames(body: dict[str, Any], piece: int = 5) -> list[dict[str, Any]]:
    """The frames the API streams for `body`: text in `piece`-character frames (a signature on the last piece),
    each call a frame, the finish reason and the usage in the last frame."""
    candidate = body["candidates"][0]
    frames: list[list[dict[str, Any]]] = []
    for part in candidate["content"]["parts"]:
        if part.get("text"):
            text = part["text"]
            cut = [text[i:i + piece] for i in range(0, len(text), piece)]
            for n, bit in enumerate(cut):
                out = {key: value for key, value in part.items() if key != "thoughtSignature"}
                out["text"] = bit
                if n == len(cut) - 1 and "thoughtSignature" in part:
                    out["thoughtSignature"] = part["thoughtSignature"]
                frames.append([out])
        else:
            frames.append([copy.deepcopy(part)])
    out_frames = []
    for n, parts in enumerate(frames or [[{"text": ""}]]):
        frame_candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        frame: dict[str, Any] = {"candidates": [frame_candidate], "modelVersion": body.get("modelVersion"),
                                 "responseId": body.get("responseId")}
        if n == len(frames or [[]]) - 1:
            frame_candidate["finishReason"] = candidate.get("finishReason", "STOP")
            frame["usageMetadata"] = body.get("usageMetadata")
        out_frames.append(frame)
    return out_frames


def frame_bytes(frame: Any) -> bytes:
    """One SSE frame as the Gemini API writes it (`data: …` and a CRLF blank line)."""
    data = frame if isinstance(frame, str) else _compact(frame)
    return f"data: {data}\r\n\r\n".encode()


def _compact(frame: Any) -> str:
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False)


#: Hostile ways to write a Gemini stream (what google-genai makes of each is in `tests/test_gemini_stream_rules.py`).
HOSTILE = ("data-no-space", "comment", "event-line", "byte-order-mark", "line-separator", "comment-after",
           "no-blank-line", "bare-json", "pretty-json", "usage-after", "text-after", "error-not-first",
           "finish-without-content")


def hostile_stream(body: dict[str, Any], how: str) -> bytes:
    """The body's stream (`gemini_frames`) written in one of the `HOSTILE` ways, as one run of bytes."""
    frames = gemini_frames(body)
    usage = frames[-1].get("usageMetadata")
    plain = b"".join(frame_bytes(frame) for frame in frames)
    if how == "data-no-space":
        return b"".join(f"data:{_compact(frame)}\r\n\r\n".encode() for frame in frames)
    if how == "comment":
        return b": keep-alive\r\n\r\n" + plain
    if how == "event-line":
        return b"".join(f"event: message\r\ndata: {_compact(frame)}\r\n\r\n".encode() for frame in frames)
    if how == "byte-order-mark":
        return b"\xef\xbb\xbf" + plain
    if how == "line-separator":  # a raw U+2028 inside a JSON string (valid JSON; a line end to google-genai)
        frames[-2]["candidates"][0]["content"]["parts"][0]["text"] += "\u2028"
        return b"".join(frame_bytes(frame) for frame in frames)
    if how == "comment-after":
        return plain + b": done\r\n\r\n"
    if how == "no-blank-line":
        return plain[: -len(b"\r\n\r\n")]
    if how == "bare-json":
        return b"".join(f"{_compact(frame)}\n".encode() for frame in frames)
    if how == "pretty-json":
        return b"".join(json.dumps(frame, indent=2, ensure_ascii=False).encode() + b"\n" for frame in frames)
    if how == "usage-after":
        return plain + frame_bytes({"usageMetadata": usage, "modelVersion": body.get("modelVersion")})
    if how == "text-after":
        late = {"candidates": [{"content": {"role": "model", "parts": [{"text": " Really."}]}, "index": 0}]}
        return plain + frame_bytes(late)
    if how == "error-not-first":  # google-genai raises only on a frame whose first key is `error`
        frames[0]["error"] = {"code": 500, "message": "ignored", "status": "INTERNAL"}
        return b"".join(frame_bytes(frame) for frame in frames)
    if how == "finish-without-content":  # the finish reason alone in the last frame, as Vertex AI may send it
        last = frames[-1]
        del last["candidates"][0]["finishReason"], last["usageMetadata"]
        finish = {"candidates": [{"finishReason": body["candidates"][0]["finishReason"], "index": 0}],
                  "usageMetadata": usage}
        return b"".join(frame_bytes(frame) for frame in frames) + frame_bytes(finish)
    raise ValueError(f"hostile_stream: no way {how!r}")


def gemini_error(status: int, message: str | None = None) -> dict[str, Any]:
    """Google's error body: `{"error": {"code", "message", "status"}}`."""
    name = _STATUS.get(status, "UNKNOWN")
    return {"error": {"code": status, "message": message or f"fake {name} ({status})", "status": name}}


def model_turns(body: dict[str, Any]) -> int:
    """Model turns in a request's history (consecutive model contents, as a streamed chat keeps, are one)."""
    turns, inside = 0, False
    for content in body.get("contents") or []:
        model = content.get("role") == "model"
        if model and not inside:
            turns += 1
        inside = model
    return turns


def gemini_turns(turns: Sequence[Any]) -> Any:
    """A brain answering the k-th model call of a Gemini conversation (k = model turns in its history)."""

    def brain(body: dict[str, Any]) -> Any:
        turn = model_turns(body)
        if turn >= len(turns):
            raise AssertionError(f"gemini_turns: no scripted answer for turn {turn}")
        answer = turns[turn]
        return answer(body) if callable(answer) else answer

    return brain


def unsigned_turn(body: dict[str, Any], issued: Collection[str]) -> str | None:
    """Why Gemini 3 answers this request 400, or None: in the current turn (the contents after the last user
    text), a model turn (consecutive model contents are one, as a streamed chat keeps them) whose function calls
    come back without the `thoughtSignature` the API gave them on the first call.  Stricter than the API in one
    way: Google's placeholder signature, which the API takes, counts as missing, so a test sees the real one went
    back."""
    contents = body.get("contents") or []
    start = max((n for n, content in enumerate(contents) if content.get("role") != "model"
                 and any("text" in part for part in content.get("parts") or [])), default=-1)
    turn: list[dict[str, Any]] = []
    for content in [*contents[start + 1:], {"role": "user"}]:
        if content.get("role") == "model":
            turn += content.get("parts") or []
            continue
        calls = [part for part in turn if "functionCall" in part]
        if calls and calls[0].get("thoughtSignature") not in issued:
            return ("Function call is missing a thought_signature in functionCall parts. This is required for tools "
                    "to work correctly, and missing thought_signature may lead to degraded model performance.")
        turn = []
    return None


def signed_turns(turns: Sequence[Any], issued: Collection[str]) -> Any:
    """`gemini_turns`, refusing (400, as Gemini 3 does) a request whose function-call turn lacks its signature."""
    answer = gemini_turns(turns)

    def brain(body: dict[str, Any]) -> Any:
        problem = unsigned_turn(body, issued)
        if problem is None:
            return answer(body)
        from tests.fakeapi import json_reply  # here: tests.fakeapi imports this module

        return json_reply(gemini_error(400, problem), 400)

    return brain


def last_function_responses(body: dict[str, Any]) -> list[Any]:
    """The functionResponse values the request's last turn sends back."""
    contents = body.get("contents") or []
    if not contents or contents[-1].get("role") == "model":
        return []
    return [part["functionResponse"].get("response") for part in contents[-1].get("parts") or []
            if "functionResponse" in part]
