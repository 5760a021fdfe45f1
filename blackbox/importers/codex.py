"""Import a Codex CLI rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) into a cassette (docs/format.md,
"Codex CLI").

Each line is `{timestamp, type, payload}`.  Codex's model is OpenAI's Responses API, and `response_item` lines
are that API's items, so they become neutral steps by the Responses rules: consecutive assistant-side items
(messages, function calls, custom tool calls, local shell calls) are one model turn, their texts joined with a
blank line; `reasoning` is dropped like thinking; each call is answered by the output with its `call_id`.
`turn_context` names the model (so a what-if can continue the run with it); `compacted` replaces the history;
`event_msg` lines are the UI's copy of the same story and are used only where the items are missing (old
rollouts that kept messages only as events, and an aborted turn).  Unknown record and item types are skipped
and counted: the format grows every release.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from blackbox.format.canonical import JSFloat
from blackbox.importers.common import (
    Progress,
    Reading,
    TranscriptError,
    as_progress,
    iso_ms,
    json_or_text,
    jsonl_lines,
)
from blackbox.importers.decoding import decode_field, decode_line
from blackbox.importers.steps import AgentImporter, Compaction, Human, Result, Transcript, Turn, Use
from blackbox.providers.openai_responses import Turns

__all__ = ["OBSERVED_TOOL_DESCRIPTION", "Codex", "import_codex", "read_rollout"]

OBSERVED_TOOL_DESCRIPTION = "Observed in Codex CLI rollout; original definition unavailable."
LOCAL_SHELL = "local_shell"  # the tool name of a `local_shell_call` (the item names none)
_WHAT = "a Codex CLI rollout"
_TEXT_PARTS = ("input_text", "output_text", "text")
#: User messages Codex writes itself at the start of a turn (the sandbox, the cwd, AGENTS.md): not the user's.
_HARNESS_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
                     "<user_shell_command>", "<turn_aborted>")
# Tuples, not sets: a hostile `type` may be any JSON value, and a list or an object cannot be hashed.
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
_KNOWN_RECORDS = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")


class _Record(msgspec.Struct):
    timestamp: Any = None
    type: Any = None
    payload: msgspec.Raw = msgspec.Raw(b"")


class _Payload(msgspec.Struct):
    """The fields of every payload kind that matter (a union: each kind fills its own)."""

    type: Any = None
    role: Any = None
    content: Any = None
    name: Any = None
    arguments: Any = None
    call_id: Any = None
    input: Any = None
    output: Any = None
    action: Any = None
    message: Any = None
    replacement_history: Any = None
    model: Any = None


_RECORD = msgspec.json.Decoder(_Record)
_PAYLOAD = msgspec.json.Decoder(_Payload, float_hook=JSFloat)
_PAYLOAD_FIELDS = tuple(_Payload.__struct_fields__)


def _record_of(value: dict[str, Any]) -> _Record:
    return _Record(value.get("timestamp"), value.get("type"), value.get("payload", msgspec.Raw(b"")))


def _payload_of(value: dict[str, Any]) -> _Payload:
    return _Payload(*(value.get(name) for name in _PAYLOAD_FIELDS))


def _text(content: Any, where: str) -> str:
    """A message's content as text: text parts joined with a blank line (the Responses rule), other parts
    `[<type> omitted]`."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TranscriptError(f"{where}: `content` must be a string or a list of parts")
    texts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _TEXT_PARTS:
            text = part.get("text")
            texts.append(text if isinstance(text, str) else "")
        else:
            texts.append(f"[{kind if isinstance(kind, str) else 'part'} omitted]")
    return "\n\n".join(texts)


def _harness(text: str) -> bool:
    return text.lstrip().startswith(_HARNESS_PREFIXES)


def _output(output: Any, where: str) -> tuple[Any, bool]:
    """A tool output as (value, is_error): text that is JSON becomes that JSON; `{content, success: false}`
    is an error (always a string); a list of content items is their text."""
    if isinstance(output, str):
        return json_or_text(output), False
    if isinstance(output, list):
        return _text(output, where), False
    if isinstance(output, dict) and isinstance(output.get("content"), str | list):
        text = _text(output["content"], where)
        if output.get("success") is False:
            return text, True
        return json_or_text(text), False
    raise TranscriptError(f"{where}: `payload.output` must be a string, a list of parts or {{content, success}}")


class _Rollout(Transcript):
    def __init__(self, progress: Progress | None) -> None:
        super().__init__(OBSERVED_TOOL_DESCRIPTION, "\n\n", call="tool call", result="tool output", progress=progress)
        self.model: str | None = None
        self.turn: Turn | None = None
        self.names: dict[str, str] = {}  # call id → tool name
        self.user_texts: list[str] = []
        self.event_humans: list[Human] = []  # taken from event_msg lines, in case no message items come
        self.event_texts: list[tuple[Turn, str]] = []
        self.roles_in_items: set[str] = set()

    # -- the two sides of the conversation ------------------------------------------------------------------

    def _output_side(self, number: int, timestamp: int) -> Turn:
        self.last_assistant_line = number
        if self.turn is None:
            self.turn = Turn(timestamp, number, [], [], self.model)
            self.items.append(self.turn)
        return self.turn

    def _input_side(self, number: int, timestamp: int, pending: bool = True) -> None:
        self.turn = None
        if pending:
            self.last_user_line, self.last_user_time = number, timestamp

    def human(self, number: int, timestamp: int, text: str) -> Human | None:
        if _harness(text):
            self._input_side(number, timestamp, pending=False)
            return None
        self._input_side(number, timestamp)
        if not text:
            return None
        human = Human(text)
        self.items.append(human)
        self.user_texts.append(text)
        return human

    # -- records -------------------------------------------------------------------------------------------

    def feed(self, number: int, record: _Record) -> None:
        kind = record.type
        if kind not in _KNOWN_RECORDS:
            self.skip(kind if isinstance(kind, str) else "(no type)")
            return
        timestamp = iso_ms(record.timestamp)
        if timestamp is None:
            raise TranscriptError(f"line {number}: `timestamp` is missing or not an ISO time")
        if self.created_at is None:
            self.created_at = timestamp
        if kind == "session_meta":
            return
        payload = decode_field(number, record.payload, _PAYLOAD, _payload_of, "payload", _WHAT)
        if kind == "turn_context":
            self.turn = None
            if payload.model is not None and not isinstance(payload.model, str):
                raise TranscriptError(f"line {number}: `payload.model` must be a string")
            self.model = payload.model or self.model
        elif kind == "response_item":
            self._item(number, timestamp, payload)
        elif kind == "event_msg":
            self._event(number, timestamp, payload)
        else:
            self._compacted(number, payload)

    def _item(self, number: int, timestamp: int, item: _Payload) -> None:
        where = f"line {number}"
        kind = item.type
        if kind == "message":
            role = item.role
            if role == "assistant":
                self.roles_in_items.add("assistant")
                text = _text(item.content, where)
                if text:
                    self._output_side(number, timestamp).texts.append(text)
            elif role == "user":
                self.roles_in_items.add("user")
                self.human(number, timestamp, _text(item.content, where))
            elif role in ("developer", "system"):
                self._input_side(number, timestamp, pending=False)  # Codex's own instructions, not the user's
            else:
                raise TranscriptError(f"{where}: a message needs `role` user, assistant, developer or system")
        elif kind == "reasoning":
            self._output_side(number, timestamp)  # dropped like thinking, but part of the model's turn
        elif kind in _CALLS:
            self._output_side(number, timestamp).uses.append(self._use(number, kind, item))
        elif kind in _OUTPUTS:
            self._input_side(number, timestamp)
            call_id = item.call_id
            if not isinstance(call_id, str) or not call_id:
                raise TranscriptError(f"{where}: a {kind} needs a non-empty string `call_id`")
            value, is_error = _output(item.output, where)
            self.result(where, call_id, Result(value, is_error, timestamp, number))
        else:
            self.skip(f"response_item.{kind}" if isinstance(kind, str) else "response_item")

    def _use(self, number: int, kind: str, item: _Payload) -> Use:
        where = f"line {number}"
        if kind == "function_call":
            if not isinstance(item.arguments, str):
                raise TranscriptError(f"{where}: a function_call needs `arguments` as a JSON string")
            name, tool_input = item.name, json_or_text(item.arguments)
        elif kind == "custom_tool_call":
            if not isinstance(item.input, str):
                raise TranscriptError(f"{where}: a custom_tool_call needs `input` as a string")
            name, tool_input = item.name, item.input
        else:
            if not isinstance(item.action, dict):
                raise TranscriptError(f"{where}: a local_shell_call needs `action` as an object")
            name, tool_input = LOCAL_SHELL, item.action
        use = self.use(where, number, item.call_id, name, tool_input, id_field="call_id")
        self.names[use.provider_id] = use.name
        return use

    def _event(self, number: int, timestamp: int, event: _Payload) -> None:
        """Events repeat the items for the UI; their messages count only where the rollout has no message
        items of that role (old rollouts)."""
        if event.type == "turn_aborted":
            self._input_side(number, timestamp)  # the model was asked and never answered
            return
        if event.type not in ("user_message", "agent_message") or not isinstance(event.message, str):
            return
        role = "user" if event.type == "user_message" else "assistant"
        if role in self.roles_in_items or not event.message:
            return
        if role == "user":
            human = self.human(number, timestamp, event.message)
            if human is not None:
                self.event_humans.append(human)
        else:
            turn = self._output_side(number, timestamp)
            turn.texts.append(event.message)
            self.event_texts.append((turn, event.message))

    def _compacted(self, number: int, payload: _Payload) -> None:
        """The history from here on: `replacement_history` when Codex kept it, else as Codex rebuilds it on
        resume (the user's messages so far, then the summary as a user message)."""
        self.turn = None
        where = f"line {number}"
        if isinstance(payload.replacement_history, list):
            messages = _History(self, where).of(payload.replacement_history)
        elif isinstance(payload.message, str):
            messages = [{"role": "user", "content": text} for text in self.user_texts]
            messages.append({"role": "user", "content": payload.message})
        else:
            raise TranscriptError(f"{where}: a compacted record needs `message` (a string) or "
                                  "`replacement_history` (a list)")
        self.items.append(Compaction(messages))

    def finish(self) -> None:
        """Messages taken from events give way to message items of the same role, wherever those came."""
        if "user" in self.roles_in_items and self.event_humans:
            dropped = {id(human) for human in self.event_humans}
            self.items = [item for item in self.items if id(item) not in dropped]
        if "assistant" in self.roles_in_items:
            for turn, text in self.event_texts:
                turn.texts.remove(text)
        if self.created_at is None or not any(isinstance(i, Turn | Human) for i in self.items):
            raise TranscriptError("no messages in the file; is it a Codex CLI rollout?")
        self.check_ids()


class _History:
    """A compacted `replacement_history` (Responses items) as neutral messages, by the Responses codec's own
    rules (`Turns`); tool parts keep Codex's call ids until the steps are built."""

    def __init__(self, rollout: _Rollout, where: str) -> None:
        self.where = where
        self.names = dict(rollout.names)

    def of(self, items: list[Any]) -> list[dict[str, Any]]:
        turns = Turns()
        for position, item in enumerate(items):
            where = f"{self.where}: replacement_history[{position}]"
            if not isinstance(item, dict):
                raise TranscriptError(f"{where} must be an object")
            kind = item.get("type")
            if kind == "message" and item.get("role") == "user":
                text = _text(item.get("content"), where)
                if not _harness(text):
                    turns.user(text)
            elif kind == "message" and item.get("role") == "assistant":
                turns.assistant_text(_text(item.get("content"), where))
            elif kind in _CALLS:
                turns.tool_use(self._use(kind, item, where))
            elif kind in _OUTPUTS:
                call_id = item.get("call_id")
                if not isinstance(call_id, str) or call_id not in self.names:
                    raise TranscriptError(f"{where}: a {kind} answers an unknown call_id")
                value, is_error = _output(item.get("output"), where)
                turns.tool_result({"type": "tool_result", "toolCallId": call_id, "toolName": self.names[call_id],
                                   "error" if is_error else "result": value})
        return turns.done()

    def _use(self, kind: str, item: dict[str, Any], where: str) -> dict[str, Any]:
        name = LOCAL_SHELL if kind == "local_shell_call" else item.get("name")
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            raise TranscriptError(f"{where}: a {kind} needs a non-empty string `call_id` and `name`")
        self.names[call_id] = name
        if kind == "function_call":
            arguments = item.get("arguments")
            tool_input = json_or_text(arguments) if isinstance(arguments, str) else arguments
        else:
            tool_input = item.get("input") if kind == "custom_tool_call" else item.get("action")
        return {"type": "tool_use", "toolCallId": call_id, "toolName": name,
                "toolInput": {} if tool_input is None else tool_input}


def read_rollout(path: str | os.PathLike[str], progress: Reading = None) -> Transcript:
    """One pass over the rollout, line by line."""
    reading = as_progress(progress)
    rollout = _Rollout(reading)
    for number, raw in jsonl_lines(Path(path), reading):
        rollout.feed(number, decode_line(number, raw, _RECORD, _record_of, _WHAT))
    rollout.finish()
    return rollout


class Codex(AgentImporter):
    name = "codex"
    description = "a Codex CLI rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl)"
    folder = "~/.codex/sessions"
    folder_variable = ("CODEX_HOME", "sessions")
    provider = "responses"
    patterns = ("rollout-*.jsonl",)

    read = staticmethod(read_rollout)


import_codex = Codex().import_file  # the cassette of one session; TranscriptError naming the line and field
