"""Import a Claude Code session (`~/.claude/projects/<project>/<session>.jsonl`) into a cassette (docs/format.md,
"Import").

One streaming pass reads the file line by line and keeps only what the cassette needs: the human texts, each
model turn's text and tool uses (Claude Code writes one line per content block, so lines sharing
`message.id` are one turn), and the tool results indexed by `tool_use_id` (a result may come before its
tool_use line).  Thinking, usage, models and every provider id are dropped.  The steps are built after the
pass, because every `model_input` carries the full list of tools observed in the whole file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from blackbox.format.canonical import JSFloat, js_stringify
from blackbox.importers.common import (
    Reading,
    TranscriptError,
    as_progress,
    block_text,
    iso_ms,
    json_or_text,
    jsonl_lines,
)
from blackbox.importers.decoding import decode_field, decode_line
from blackbox.importers.steps import AgentImporter, Human, Result, Transcript, Turn

__all__ = ["OBSERVED_TOOL_DESCRIPTION", "ClaudeCode", "import_claude_code", "read_session"]

OBSERVED_TOOL_DESCRIPTION = "Observed in Claude Code transcript; original definition unavailable."


class _Line(msgspec.Struct):
    """The fields of a transcript line that matter; `message` is decoded only for kept lines."""

    type: Any = None
    isSidechain: Any = None
    timestamp: Any = None
    message: msgspec.Raw = msgspec.Raw(b"")


class _Message(msgspec.Struct):
    id: Any = None
    role: Any = None
    content: Any = None


_LINE_DECODER = msgspec.json.Decoder(_Line)
_MESSAGE_DECODER = msgspec.json.Decoder(_Message, float_hook=JSFloat)


class _Session(Transcript):
    """What one chain of lines (the main one, or a subagent's sidechain) contributes to the cassette."""

    def __init__(self) -> None:
        super().__init__(OBSERVED_TOOL_DESCRIPTION)
        self.turns: dict[Any, Turn] = {}

    def feed(self, number: int, line: _Line, message: _Message) -> None:
        timestamp = iso_ms(line.timestamp)
        if timestamp is None:
            raise TranscriptError(f"line {number}: `timestamp` is missing or not an ISO time")
        if self.created_at is None:
            self.created_at = timestamp
        if line.type == "assistant":
            self.last_assistant_line = number
            self._assistant(number, timestamp, message)
        else:
            self.last_user_line, self.last_user_time = number, timestamp
            self._user(number, timestamp, message.content)

    def _assistant(self, number: int, timestamp: int, message: _Message) -> None:
        key = message.id if isinstance(message.id, str) and message.id else ("line", number)
        turn = self.turns.get(key)
        if turn is None:
            turn = Turn(timestamp, number, [], [])
            self.turns[key] = turn
            self.items.append(turn)
        content = message.content
        if isinstance(content, str):
            if content:
                turn.texts.append(content)
            return
        if not isinstance(content, list):
            raise TranscriptError(f"line {number}: `message.content` must be a string or a list of blocks")
        for position, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                text = block.get("text")
                if isinstance(text, str) and text:
                    turn.texts.append(text)
            elif kind == "tool_use":
                turn.uses.append(self.use(f"line {number}: content[{position}]", number, block.get("id"),
                                          block.get("name"), block.get("input")))

    def _user(self, number: int, timestamp: int, content: Any) -> None:
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts = []
            for position, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._result(number, position, timestamp, block)
                else:
                    texts.append(block_text(block))
        elif content is None:
            texts = []
        else:
            raise TranscriptError(f"line {number}: `message.content` must be a string or a list of blocks")
        text = "\n".join(texts)
        if text:
            self.items.append(Human(text))

    def _result(self, number: int, position: int, timestamp: int, block: dict[str, Any]) -> None:
        where = f"line {number}: content[{position}]"
        provider_id = block.get("tool_use_id")
        if not isinstance(provider_id, str) or not provider_id:
            raise TranscriptError(f"{where}: a tool_result needs a non-empty string `tool_use_id`")
        is_error = block.get("is_error") is True
        value = _result_value(block.get("content"))
        if value is None:
            raise TranscriptError(f"{where}: tool_result `content` must be a string or a list of blocks")
        if is_error and not isinstance(value, str):
            # An error is always a string: JSON text is re-printed as JSON.stringify prints the parsed value,
            # as the TypeScript Blackbox does (`{"a": 1}` -> `{"a":1}`; a JSON string is the string itself).
            value = js_stringify(value)
        self.result(where, provider_id, Result(value, is_error, timestamp, number))


def _result_value(content: Any) -> Any:
    """A result string that parses as JSON becomes that JSON; blocks become their text joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return json_or_text(content)
    if not isinstance(content, list):
        return None
    return "\n".join(block_text(block) for block in content)


# ---------------------------------------------------------------------------------------------------------
# Reading


_WHAT = "a Claude Code session"


def _line_of(value: dict[str, Any]) -> _Line:
    """A line the fallback decoded: its `message` already a value (or an empty Raw when absent)."""
    return _Line(value.get("type"), value.get("isSidechain"), value.get("timestamp"),
                 value.get("message", msgspec.Raw(b"")))


def _message_of(value: dict[str, Any]) -> _Message:
    return _Message(value.get("id"), value.get("role"), value.get("content"))


def _message(number: int, raw: Any) -> _Message:
    return decode_field(number, raw, _MESSAGE_DECODER, _message_of, "message", _WHAT)


def read_session(path: str | os.PathLike[str], progress: Reading = None) -> _Session:
    """One pass over the file: the main chain, or the sidechain when every kept line is a sidechain."""
    main = _Session()
    side: _Session | None = _Session()
    side_error: TranscriptError | None = None
    main_used = False
    for number, raw in jsonl_lines(Path(path), as_progress(progress)):
        line = decode_line(number, raw, _LINE_DECODER, _line_of, _WHAT)
        raw_message = line.message
        if line.type not in ("user", "assistant"):
            continue
        if line.isSidechain is True:
            if side is not None and side_error is None:
                try:
                    side.feed(number, line, _message(number, raw_message))
                except TranscriptError as exc:
                    side_error = exc
            continue
        side = None  # a main-chain line: sidechain lines are a subagent's, skipped
        main_used = True
        main.feed(number, line, _message(number, raw_message))
    session = main
    if not main_used and side_error is not None:
        raise side_error
    if not main_used and side is not None and side.created_at is not None:
        session = side  # every kept line is a sidechain: a subagent's own transcript
    if session.created_at is None:
        raise TranscriptError("no user or assistant messages in the file; is it a Claude Code session?")
    session.check_ids()
    return session


class ClaudeCode(AgentImporter):
    name = "claude-code"
    description = "a Claude Code session (~/.claude/projects/<project>/<session>.jsonl)"
    folder = "~/.claude/projects"
    folder_variable = ("CLAUDE_CONFIG_DIR", "projects")
    provider = "anthropic"
    patterns = ("*.jsonl",)

    read = staticmethod(read_session)


import_claude_code = ClaudeCode().import_file  # the cassette of one session; TranscriptError naming the line and field
