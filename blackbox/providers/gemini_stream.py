"""Gemini streaming (`:streamGenerateContent?alt=sse`): each `data:` frame is a whole GenerateContentResponse.

There is no end marker: the stream is complete with the frame that carries the candidate's `finishReason` (the
API's last frame, which also holds `usageMetadata`); bytes that stop before it — cut between frames or in the
middle of one — are a stream that ended early.  A frame that is not a JSON object, or one holding `error`, fails
the stream (google-genai raises on both).  Assembling concatenates consecutive text parts of one kind (answer or
thought; a signature on any piece stays with the merged part) and appends the function calls, so the body is
the one the API sends unstreamed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from blackbox.providers.sse import SSEEvent
from blackbox.providers.stream import BaseAssembler, EventStreamCodec, StreamResult, StreamStatus, Text, pieces

__all__ = ["CODEC", "GeminiStreamAssembler"]


class GeminiStreamAssembler(BaseAssembler):
    """Merges the frames into one GenerateContentResponse."""

    def __init__(self) -> None:
        super().__init__()
        self._top: dict[str, Any] = {}
        self._candidate: dict[str, Any] = {}
        self._parts: list[dict[str, Any]] = []
        self._texts: dict[int, Text] = {}  # a merged text part's pieces, by its place in `_parts`, joined once
        self._role = "model"

    def _event(self, event: SSEEvent) -> StreamResult | None:
        try:
            frame = event.json()
        except ValueError:
            return StreamResult(StreamStatus.ERROR, self._body(), f"frame {self.events} is not JSON")
        if not isinstance(frame, dict):
            return StreamResult(StreamStatus.ERROR, self._body(), f"frame {self.events} is not a JSON object")
        error = frame.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else None
            status = error.get("status") if isinstance(error, dict) else None
            text = message if isinstance(message, str) else "an error frame"
            return StreamResult(StreamStatus.ERROR, self._body(), f"{status}: {text}" if status else text)
        self._top.update({key: value for key, value in frame.items() if key != "candidates"})
        candidates = frame.get("candidates")
        if isinstance(candidates, list) and len(candidates) > 1:
            self._top["candidates"] = candidates  # several candidates: kept as they came, refused when recorded
            return None
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if not isinstance(candidate, dict):
            return None
        self._merge(candidate)
        if candidate.get("finishReason") is not None:
            return StreamResult(StreamStatus.COMPLETE, self._body())
        return None

    def _merge(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        self._candidate.update({key: copy.deepcopy(value) for key, value in candidate.items() if key != "content"})
        if not isinstance(content, dict):
            return
        if isinstance(content.get("role"), str):
            self._role = content["role"]
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                self._parts.append(part)
                continue
            last = self._parts[-1] if self._parts else None
            if (isinstance(last, dict) and _is_text(part) and _is_text(last)
                    and bool(last.get("thought")) == bool(part.get("thought"))):
                self._texts.setdefault(len(self._parts) - 1, Text(last["text"])).add(part["text"])
                if part.get("thoughtSignature"):
                    last["thoughtSignature"] = part["thoughtSignature"]
            else:
                self._parts.append(copy.deepcopy(part))

    def _body(self) -> dict[str, Any]:
        body = dict(self._top)
        if "candidates" not in body:
            candidate = dict(self._candidate)
            parts = [dict(part, text=self._texts[n].text()) if n in self._texts else part
                     for n, part in enumerate(self._parts)]
            candidate["content"] = {"role": self._role, "parts": parts}
            body["candidates"] = [candidate]
        return body

    def _ended(self, cut_mid_event: bool) -> StreamResult:
        return self._early(self._body(), cut_mid_event)


def _is_text(part: dict[str, Any]) -> bool:
    return isinstance(part.get("text"), str) and set(part) <= {"text", "thought", "thoughtSignature"}


def _frames(body: dict[str, Any], size: int | None) -> Iterator[tuple[str | None, dict[str, Any] | str]]:
    """One frame per part (a text cut into `size`-character frames when asked), the last frame carrying the
    finish reason and the usage, as the API streams."""
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


CODEC = EventStreamCodec(GeminiStreamAssembler, _frames)
