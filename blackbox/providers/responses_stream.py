"""OpenAI Responses streaming: assemble `response.*` events into a Responses object, and back.

The stream opens with `response.created` and `response.in_progress`, builds each output item between
`response.output_item.added` and `response.output_item.done` (text through `response.content_part.added`,
`response.output_text.delta`/`.done`, `response.content_part.done`; call arguments through
`response.function_call_arguments.delta`/`.done`), and ends with `response.completed` (or
`response.incomplete`) carrying the whole response. `response.failed` and an `error` event fail it. Every
event carries an increasing `sequence_number`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from blackbox.providers.sse import SSEEvent
from blackbox.providers.stream import BaseAssembler, EventStreamCodec, StreamResult, StreamStatus, json_data, pieces

__all__ = ["CODEC", "ResponsesStreamAssembler"]


class ResponsesStreamAssembler(BaseAssembler):
    """Rebuilds the Responses object; the terminal event's own `response` is taken when it has the output."""

    def __init__(self) -> None:
        super().__init__()
        self._response: dict[str, Any] | None = None
        self._items: dict[int, dict[str, Any]] = {}

    def _event(self, event: SSEEvent) -> StreamResult | None:
        data = json_data(event)
        if data is None:
            return None
        kind = data.get("type") or event.event
        if kind == "error":
            message = data.get("message")
            code = data.get("code")
            text = message if isinstance(message, str) and message else "an error event in the stream"
            return StreamResult(StreamStatus.ERROR, self._body(), f"{code}: {text}" if code else text)
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self._snapshot(data)
        elif kind in ("response.completed", "response.incomplete"):
            self._snapshot(data)
            return StreamResult(StreamStatus.COMPLETE, self._body())
        elif kind == "response.failed":
            self._snapshot(data)
            error = (self._response or {}).get("error")
            message = error.get("message") if isinstance(error, dict) else None
            return StreamResult(StreamStatus.ERROR, self._body(), message or "the response failed")
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = data.get("item")
            if isinstance(item, dict) and isinstance(data.get("output_index"), int):
                self._items[data["output_index"]] = copy.deepcopy(item)
        else:
            self._part_event(kind, data)
        return None

    def _snapshot(self, data: dict[str, Any]) -> None:
        response = data.get("response")
        if isinstance(response, dict):
            self._response = copy.deepcopy(response)

    def _part_event(self, kind: Any, data: dict[str, Any]) -> None:
        item = self._items.get(data.get("output_index"))  # type: ignore[arg-type]
        if item is None:
            return
        if kind == "response.function_call_arguments.delta":
            item["arguments"] = (item.get("arguments") or "") + (data.get("delta") or "")
        elif kind == "response.function_call_arguments.done":
            item["arguments"] = data.get("arguments") or ""
            return
        parts = item.setdefault("content", [])
        index = data.get("content_index")
        if not isinstance(index, int) or not isinstance(parts, list):
            return
        if kind in ("response.content_part.added", "response.content_part.done"):
            while len(parts) <= index:
                parts.append({})
            parts[index] = copy.deepcopy(data.get("part") or {})
            return
        if index >= len(parts):
            return
        part = parts[index]
        if kind == "response.output_text.delta":
            part["text"] = (part.get("text") or "") + (data.get("delta") or "")
        elif kind == "response.output_text.done":
            part["text"] = data.get("text") or ""
        elif kind == "response.refusal.delta":
            part["refusal"] = (part.get("refusal") or "") + (data.get("delta") or "")
        elif kind == "response.refusal.done":
            part["refusal"] = data.get("refusal") or ""

    def _body(self) -> dict[str, Any] | None:
        if self._response is None:
            return None
        body = dict(self._response)
        if not body.get("output") and self._items:
            body["output"] = [self._items[index] for index in sorted(self._items)]
        return body

    def _ended(self, cut_mid_event: bool) -> StreamResult:
        return self._early(self._body(), cut_mid_event)


def _events(body: dict[str, Any], size: int | None) -> Iterator[tuple[str | None, dict[str, Any] | str]]:
    sequence = 0

    def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        nonlocal sequence
        data = {"type": kind, **fields, "sequence_number": sequence}
        sequence += 1
        return kind, data

    opening = {key: value for key, value in body.items() if key not in ("output", "usage")}
    opening.update(status="in_progress", output=[])
    yield event("response.created", response=opening)
    yield event("response.in_progress", response=opening)
    for output_index, item in enumerate(body.get("output") or []):
        kind = item.get("type")
        item_id = item.get("id")
        if kind == "message":
            yield event(
                "response.output_item.added",
                output_index=output_index,
                item={**item, "status": "in_progress", "content": []},
            )
            for content_index, part in enumerate(item.get("content") or []):
                where = {"item_id": item_id, "output_index": output_index, "content_index": content_index}
                if part.get("type") == "output_text":
                    empty = {**part, "text": ""}
                    yield event("response.content_part.added", **where, part=empty)
                    text = part.get("text") or ""
                    for piece in pieces(text, size):
                        yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
                    yield event("response.output_text.done", **where, text=text, logprobs=[])
                elif part.get("type") == "refusal":
                    yield event("response.content_part.added", **where, part={**part, "refusal": ""})
                    refusal = part.get("refusal") or ""
                    for piece in pieces(refusal, size):
                        yield event("response.refusal.delta", **where, delta=piece)
                    yield event("response.refusal.done", **where, refusal=refusal)
                else:
                    yield event("response.content_part.added", **where, part=part)
                yield event("response.content_part.done", **where, part=part)
        elif kind == "function_call":
            yield event(
                "response.output_item.added",
                output_index=output_index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            where = {"item_id": item_id, "output_index": output_index}
            arguments = item.get("arguments") or ""
            for piece in pieces(arguments, size):
                yield event("response.function_call_arguments.delta", **where, delta=piece)
            yield event("response.function_call_arguments.done", **where, name=item.get("name"), arguments=arguments)
        else:
            yield event("response.output_item.added", output_index=output_index, item=item)
        yield event("response.output_item.done", output_index=output_index, item=item)
    terminal = "response.incomplete" if body.get("status") == "incomplete" else "response.completed"
    yield event(terminal, response=body)


# The Responses API's event stream: numbered from 0, ending in `response.completed`.
CODEC = EventStreamCodec(ResponsesStreamAssembler, _events)
