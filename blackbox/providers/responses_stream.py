"""OpenAI Responses streaming: assemble `response.*` events into a Responses object, and back.

The stream opens with `response.created` and `response.in_progress`, builds each output item between
`response.output_item.added` and `response.output_item.done` (text through `response.content_part.added`,
`response.output_text.delta`/`.done`, `response.content_part.done`; call arguments through
`response.function_call_arguments.delta`/`.done`), and ends with `response.completed` (or
`response.incomplete`) carrying the whole response (when its `output` is empty or missing, the output is the
items the events built). `response.failed` and an `error` event fail it. Every event carries an increasing
`sequence_number`. The SDK hands over every event after the terminal one too (it stops only at `[DONE]`), so
an output or response event after it refuses the call.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from blackbox.providers.openai_chat_stream import refuse_thread_event
from blackbox.providers.sse import SSEEvent
from blackbox.providers.stream import (
    BaseAssembler,
    EventStreamCodec,
    StreamFault,
    StreamResult,
    StreamStatus,
    Text,
    json_data,
    need,
    pieces,
)

__all__ = ["CODEC", "ResponsesStreamAssembler"]

_SNAPSHOTS = ("response.created", "response.in_progress", "response.queued")
_TERMINAL = ("response.completed", "response.incomplete")
_ITEMS = ("response.output_item.added", "response.output_item.done")
_PARTS = ("response.content_part.added", "response.content_part.done")
# (delta event, done event) → the field of the item (arguments) or of the content part (text, refusal)
_DELTAS = {"response.function_call_arguments.delta": "arguments", "response.output_text.delta": "text",
           "response.refusal.delta": "refusal"}
_DONES = {"response.function_call_arguments.done": "arguments", "response.output_text.done": "text",
          "response.refusal.done": "refusal"}
# After the terminal event the SDK still hands these over (and its helper accumulates them).
_LATE = frozenset({*_SNAPSHOTS, *_TERMINAL, *_ITEMS, *_PARTS, *_DELTAS, *_DONES, "response.failed", "error"})


class ResponsesStreamAssembler(BaseAssembler):
    """Rebuilds the Responses object; the terminal event's own `response` is taken when it has the output,
    else the items the events built (a terminal event may carry an empty `output`)."""

    def __init__(self) -> None:
        super().__init__()
        self._response: dict[str, Any] | None = None
        self._items: dict[int, dict[str, Any]] = {}
        self._texts: dict[tuple[int, int | None, str], Text] = {}  # (item, part or None, field) → deltas

    def _event(self, event: SSEEvent) -> StreamResult | None:
        if event.is_done:  # the SDK stops reading here, before any terminal event
            self.stop()
            return self._early(self._body(), False)
        refuse_thread_event(event)
        data = json_data(event)
        kind = data.get("type")  # the SDK reads the data's type, never the event's name
        if kind == "error" or data.get("error"):  # the SDK raises on an event holding an `error` too
            message = data.get("message")
            code = data.get("code")
            text = message if isinstance(message, str) and message else "an error event in the stream"
            return StreamResult(StreamStatus.ERROR, None, f"{code}: {text}" if code else text)
        if kind in _SNAPSHOTS:
            self._snapshot(data)
        elif kind in _TERMINAL:
            self._snapshot(data)
            return StreamResult(StreamStatus.COMPLETE, self._body())
        elif kind == "response.failed":
            self._snapshot(data)
            error = (self._response or {}).get("error")
            message = error.get("message") if isinstance(error, dict) else None
            return StreamResult(StreamStatus.ERROR, None, message or "the response failed")
        elif kind in _ITEMS:
            index = need(data.get("output_index"), int, "output_index")
            self._items[index] = copy.deepcopy(need(data.get("item"), dict, "an output item"))
            for key in [key for key in self._texts if key[0] == index]:  # the item as sent replaces the deltas
                del self._texts[key]
        else:
            self._part_event(kind, data)
        return None

    def _after(self, event: SSEEvent) -> StreamResult | None:
        if event.is_done:
            self.stop()
            return None
        refuse_thread_event(event)
        data = json_data(event)
        kind = data.get("type")
        return self.late(kind) if kind in _LATE or data.get("error") else None

    def _snapshot(self, data: dict[str, Any]) -> None:
        response = data.get("response")
        if response is not None:
            self._response = copy.deepcopy(need(response, dict, "the response"))

    def _part_event(self, kind: Any, data: dict[str, Any]) -> None:
        if kind not in _PARTS and kind not in _DELTAS and kind not in _DONES:
            return
        index = need(data.get("output_index"), int, "output_index")
        item = self._items.get(index)
        if item is None:
            raise StreamFault(f"{kind} for output item {index}, which was never added")
        field = _DELTAS.get(kind) or _DONES.get(kind)
        part: int | None = None
        if field != "arguments":
            part = need(data.get("content_index"), int, "content_index")
            parts = item.setdefault("content", [])
            need(parts, list, "an item's content")
            if kind in _PARTS:
                while len(parts) <= part:
                    parts.append({})
                parts[part] = copy.deepcopy(need(data.get("part") or {}, dict, "a content part"))
                for key in [key for key in self._texts if key[:2] == (index, part)]:
                    del self._texts[key]
                return
            if part >= len(parts):
                raise StreamFault(f"{kind} for content part {part}, which was never added")
        assert field is not None
        if kind in _DELTAS:
            text = self._texts.get((index, part, field))
            if text is None:
                holder = item if part is None else item["content"][part]
                text = self._texts[index, part, field] = Text(need(holder.get(field) or "", str, field))
            text.add(data.get("delta") or "")
        else:
            self._texts[index, part, field] = Text(need(data.get(field) or "", str, field))

    def _body(self) -> dict[str, Any] | None:
        if self._response is None:
            return None
        body = dict(self._response)
        if not body.get("output") and self._items:
            items = {index: dict(item) for index, item in self._items.items()}
            for item in items.values():
                if isinstance(item.get("content"), list):
                    item["content"] = [dict(part) for part in item["content"]]
            for (index, part, field), text in self._texts.items():
                holder = items[index] if part is None else items[index]["content"][part]
                holder[field] = text.text()
            body["output"] = [items[index] for index in sorted(items)]
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
