"""Gemini streaming (`:streamGenerateContent?alt=sse`): the frames google-genai reads, merged into one response.

Each frame is a whole GenerateContentResponse, read from the bytes exactly as the SDK reads them
(`gemini_frames`: its own line rules, not the event-stream ones).  There is no end marker: the stream is
complete with the frame that carries the candidate's `finishReason`, and the SDK still hands over every frame
after it (a usage-only frame, more parts), which are merged too.  What the SDK raises on fails the stream (not
recorded): a frame that is not JSON (a comment, an `event:` line, `data:` without its space, a byte-order mark),
a frame whose first key is `error`.  A frame Blackbox cannot keep as the SDK reads it — not a JSON object, a
value of the wrong type where the SDK reads one, NaN — refuses the call; bytes that stop before the
`finishReason` frame, or in the middle of a frame, are a stream that ended early.  Merging concatenates
consecutive text parts of one kind (answer or thought; a signature on any piece stays with the merged part),
appends the other parts, and takes each other field from the last frame that set it, so the body is the one the
API sends unstreamed.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

from blackbox.format.canonical import decode_json
from blackbox.providers.gemini_calls import HOLLOW, StreamedBody, hollow_of
from blackbox.providers.gemini_frames import GenaiFrames, charset_of
from blackbox.providers.stream import (
    EventStreamCodec,
    StreamAssembler,
    StreamFault,
    StreamResult,
    StreamStatus,
    Text,
    need,
    pieces,
)

__all__ = ["CODEC", "GeminiStreamAssembler"]

# The fields the SDK reads, with the JSON types they have (another type: the SDK raises, or reads it as a
# value the frame does not hold).
_TOP = {"candidates": list, "modelVersion": str, "responseId": str, "createTime": str, "usageMetadata": dict,
        "promptFeedback": dict, "modelStatus": dict}
_CANDIDATE = {"content": dict, "finishReason": str, "index": int, "finishMessage": str, "tokenCount": int,
              "avgLogprobs": (int, float), "safetyRatings": list, "citationMetadata": dict,
              "groundingMetadata": dict, "logprobsResult": dict, "urlContextMetadata": dict}
_PART = {"text": str, "thought": bool, "thoughtSignature": str, "functionCall": dict, "functionResponse": dict}
_CALL = {"name": str, "args": dict, "id": str}
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")


class GeminiStreamAssembler:
    """Merges the frames google-genai reads from the bytes into one GenerateContentResponse (a `StreamAssembler`).

    The result is COMPLETE from the `finishReason` frame on, its body the frames merged so far; a frame after it
    updates the body, one the SDK raises on turns the result into ERROR."""

    def __init__(self, charset: str = "utf-8") -> None:
        self._reader = GenaiFrames(charset)
        self._top: dict[str, Any] = {}
        self._candidate: dict[str, Any] = {}
        self._parts: list[dict[str, Any]] = []
        self._texts: dict[int, Text] = {}  # a merged text part's pieces, by its place in `_parts`, joined once
        self._role = "model"
        self._hollow: str | None = None  # what the first frame without content lacked (`StreamedBody.hollow`)
        self._finished = False  # the `finishReason` frame came
        self._complete: StreamResult | None = None  # the COMPLETE result of the frames so far, built when asked
        self._failed: StreamResult | None = None  # why the call is not recorded; nothing is read after it
        self.events = 0  #: frames read

    @property
    def result(self) -> StreamResult | None:
        if self._failed is not None:
            return self._failed
        if not self._finished:
            return None
        if self._complete is None:
            self._complete = StreamResult(StreamStatus.COMPLETE, self._body())
        return self._complete

    def skip_noise(self, chunks: list[bytes]) -> int:
        return 0  # the API sends no keep-alive frames

    def feed(self, chunk: bytes) -> StreamResult | None:
        if self._failed is not None or not chunk:
            return None
        return self._read(self._reader.feed(chunk), closing=False)

    def finish(self) -> StreamResult:
        if self._failed is None:
            cut = self._reader.pending
            self._read(self._reader.close(), closing=True)
            if self._failed is None and not self._finished:
                where = "in the middle of a frame" if cut else "before its finishReason frame"
                self._failed = StreamResult(StreamStatus.ENDED_EARLY, self._body(),
                                            f"the stream ended {where} ({self.events} frames)")
        result = self.result
        assert result is not None
        return result

    def _read(self, frames: list[str], *, closing: bool) -> StreamResult | None:
        """The frames in turn: the result they change (COMPLETE at the `finishReason` frame, or why not)."""
        changed = None
        for text in frames:
            self.events += 1
            try:
                result = self._frame(text, closing)
            except Exception as exc:  # a type-confused frame: refused, never raised into the agent's read
                detail = str(exc) if isinstance(exc, StreamFault) else type(exc).__name__
                result = StreamResult(StreamStatus.REFUSED, None,
                                      f"frame {self.events} could not be assembled ({detail})")
            if result is not None:
                changed = result
                if not result.complete:
                    self._failed = result
                    break
        return changed

    def _frame(self, text: str, closing: bool) -> StreamResult | None:
        try:
            frame = decode_json(text)
        except Exception:
            try:
                json.loads(text)  # what the SDK parses with
            except Exception:
                if closing:  # the last bytes of the body, cut short
                    return StreamResult(StreamStatus.ENDED_EARLY, self._body(),
                                        f"the stream ended in the middle of a frame ({self.events} frames)")
                return StreamResult(StreamStatus.ERROR, self._body(), f"frame {self.events} is not JSON")
            raise StreamFault("a frame holding NaN or Infinity") from None
        if type(frame) is not dict:
            raise StreamFault(f"a frame that is a JSON {type(frame).__name__}, not an object")
        if frame and next(iter(frame)) == "error":  # the SDK raises on a frame that begins with `error`
            return StreamResult(StreamStatus.ERROR, self._body(), _error_text(frame["error"]))
        _check(frame, _TOP, "a frame's")
        self._complete = None
        self._top.update((key, value) for key, value in frame.items()
                         if key not in ("candidates", "error") and value is not None)
        candidates = frame.get("candidates") or []
        for candidate in candidates:
            _check_candidate(need(candidate, dict, "a candidate"))
        if self._hollow is None:
            self._hollow = hollow_of(frame)
        if len(candidates) > 1:
            self._top["candidates"] = candidates  # several candidates: kept as they came, refused when recorded
        elif candidates:
            self._merge(candidates[0])
        if not self._finished and any(candidate.get("finishReason") is not None for candidate in candidates):
            self._finished = True
            return self.result
        return None

    def _merge(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        self._candidate.update((key, copy.deepcopy(value)) for key, value in candidate.items()
                               if key != "content" and value is not None)
        if content is None:
            return
        if content.get("role") is not None:
            self._role = content["role"]
        for part in content.get("parts") or []:
            last = self._parts[-1] if self._parts else None
            if (last is not None and _is_text(part) and _is_text(last)
                    and bool(last.get("thought")) == bool(part.get("thought"))):
                self._texts.setdefault(len(self._parts) - 1, Text(last["text"])).add(part["text"])
                if part.get("thoughtSignature"):
                    last["thoughtSignature"] = part["thoughtSignature"]
            else:
                self._parts.append(copy.deepcopy(part))

    def _body(self) -> dict[str, Any]:
        body = StreamedBody(self._top)
        body.hollow = self._hollow
        if "candidates" not in body:
            candidate = dict(self._candidate)
            parts = [dict(part, text=self._texts[n].text()) if n in self._texts else part
                     for n, part in enumerate(self._parts)]
            candidate["content"] = {"role": self._role, "parts": parts}
            body["candidates"] = [candidate]
        return body


def _check(values: dict[str, Any], types: dict[str, Any], where: str) -> None:
    """Each field the SDK reads has its JSON type (null is the field left out)."""
    for key, kind in types.items():
        value = values.get(key)
        if value is not None:
            need(value, kind, f"{where} {key}")


def _check_candidate(candidate: dict[str, Any]) -> None:
    _check(candidate, _CANDIDATE, "a candidate's")
    content = candidate.get("content")
    if content is None:
        return
    _check(content, {"role": str, "parts": list}, "a content's")
    for part in content.get("parts") or []:
        _check(need(part, dict, "a part"), _PART, "a part's")
        signature = part.get("thoughtSignature")
        if signature is not None and not _BASE64.fullmatch(signature):
            raise StreamFault("a thoughtSignature that is not base64")
        if part.get("functionCall") is not None:
            _check(part["functionCall"], _CALL, "a functionCall's")


def _error_text(error: Any) -> str:
    message = error.get("message") if isinstance(error, dict) else None
    status = error.get("status") if isinstance(error, dict) else None
    text = message if isinstance(message, str) else "an error frame"
    return f"{status}: {text}" if isinstance(status, str) else text


def _is_text(part: dict[str, Any]) -> bool:
    return isinstance(part.get("text"), str) and set(part) <= {"text", "thought", "thoughtSignature"}


def _frames(body: dict[str, Any], size: int | None) -> Iterator[tuple[str | None, dict[str, Any] | str]]:
    """One frame per part (a text cut into `size`-character frames when asked), the last frame carrying the
    finish reason and the usage, as the API streams; then, for a body whose recorded stream held a frame without
    content (`StreamedBody.hollow`), a frame lacking the same thing."""
    candidates = body.get("candidates") or [{}]
    candidate = candidates[0]
    content = candidate.get("content") or {}
    top = {key: value for key, value in body.items() if key not in ("candidates", "usageMetadata")}
    frames: list[list[dict[str, Any]]] = []
    for part in content.get("parts") or []:
        if _is_text(part) and part["text"]:
            cut = pieces(part["text"], size)
            for n, piece in enumerate(cut):
                piece_part = {key: value for key, value in part.items() if key != "thoughtSignature"}
                piece_part["text"] = piece
                if n == len(cut) - 1 and part.get("thoughtSignature"):
                    piece_part["thoughtSignature"] = part["thoughtSignature"]
                frames.append([piece_part])
        else:
            frames.append([part])
    if not frames:
        frames.append([{"text": ""}])
    for n, frame_parts in enumerate(frames):
        frame_candidate: dict[str, Any] = {"content": {"role": content.get("role") or "model", "parts": frame_parts},
                                           "index": candidate.get("index", 0)}
        frame = {"candidates": [frame_candidate], **top}
        if n == len(frames) - 1:
            frame_candidate["finishReason"] = candidate.get("finishReason") or "STOP"
            if body.get("usageMetadata") is not None:
                frame["usageMetadata"] = body["usageMetadata"]
        yield None, frame
    hollow = getattr(body, "hollow", None)
    if hollow in HOLLOW:
        index = candidate.get("index", 0)
        lacking = {"content": [{"index": index}], "parts": [{"content": {"role": "model"}, "index": index}]}
        frame = {**top, **({"candidates": lacking[hollow]} if hollow in lacking else {})}
        if body.get("usageMetadata") is not None:
            frame["usageMetadata"] = body["usageMetadata"]
        yield None, frame


class GeminiStreamCodec(EventStreamCodec):
    """Gemini's stream codec: its assembler decodes the body in the charset the response names, as httpx does
    for the SDK."""

    def assembler(self, content_type: str | None = None) -> StreamAssembler:
        return GeminiStreamAssembler(charset_of(content_type))


CODEC = GeminiStreamCodec(GeminiStreamAssembler, _frames)
