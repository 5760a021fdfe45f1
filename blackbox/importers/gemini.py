"""Import a Gemini CLI session (`~/.gemini/tmp/<project_hash>/chats/session-*.jsonl`, the older `session-*.json`,
or a checkpoint's JSON) into a cassette (docs/format.md, "Gemini CLI").

The `.jsonl` log is replayed the way Gemini CLI loads it: a message re-appended with the same `id` replaces the
earlier record (in its first place), `{"$rewindTo": id}` drops that message and everything after it (all of
them when the id is unknown), `{"$set": …}` updates the metadata (and may set the messages wholesale).  Then
`user` messages are the human's turns, each `gemini` message one model turn: its text parts (thoughts dropped)
and its `toolCalls`, whose `result` parts (`functionResponse`) are the tools' results.  `info`, `error` and
`warning` messages are the UI's and skipped; unknown record types are skipped and counted.  A checkpoint (or a
`/chat save` file) holds the API history (`Content[]`: `role` user/model, `parts`) and no times: every step
gets the file's modification time.
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
from blackbox.importers.decoding import decode_document, decode_line
from blackbox.importers.steps import AgentImporter, Human, Result, Transcript, Turn, Use

__all__ = ["OBSERVED_TOOL_DESCRIPTION", "Gemini", "import_gemini", "read_gemini"]

OBSERVED_TOOL_DESCRIPTION = "Observed in Gemini CLI session; original definition unavailable."
_WHAT = "a Gemini CLI session"
_UI_TYPES = ("info", "error", "warning")
_FAILED = ("error", "cancelled")
_CONTEXT_PREFIX = "This is the Gemini CLI. We are setting up the context"  # a checkpoint's first turn


class _Line(msgspec.Struct):
    id: Any = None
    timestamp: Any = None
    type: Any = None
    content: Any = None
    toolCalls: Any = None
    model: Any = None
    sessionId: Any = None
    startTime: Any = None
    set: Any = msgspec.field(name="$set", default=None)
    rewindTo: Any = msgspec.field(name="$rewindTo", default=None)


_LINE = msgspec.json.Decoder(_Line, float_hook=JSFloat)
_FIELDS = {name: msgspec.structs.fields(_Line)[i].encode_name for i, name in enumerate(_Line.__struct_fields__)}


def _line_of(value: dict[str, Any]) -> _Line:
    return _Line(*(value.get(encoded) for encoded in _FIELDS.values()))


def _parts(content: Any, where: str) -> list[Any]:
    """`PartListUnion`: a string, one part, or a list of parts (strings or part objects)."""
    if content is None:
        return []
    if isinstance(content, str | dict):
        content = [content]
    if not isinstance(content, list):
        raise TranscriptError(f"{where}: `content` must be a string, a part or a list of parts")
    return [{"text": part} if isinstance(part, str) else part for part in content]


def _part_kind(part: Any) -> str:
    if not isinstance(part, dict):
        return "part"
    for key in ("functionCall", "functionResponse", "inlineData", "fileData", "executableCode"):
        if key in part:
            return key
    return "text" if "text" in part else "part"


def _response_value(response: Any, failed: bool) -> tuple[Any, bool]:
    """A `functionResponse.response` as (value, is_error): `{output}` is its output (JSON text parsed),
    `{error}` an error; any other object is the value itself."""
    if (isinstance(response, dict) and set(response) == {"error"}) or failed:
        error = response.get("error", response.get("output")) if isinstance(response, dict) else None
        return (error if isinstance(error, str) else "the tool call failed"), True
    if isinstance(response, dict) and set(response) == {"output"}:
        output = response["output"]
        return (json_or_text(output) if isinstance(output, str) else output), False
    return response, False


class _Session(Transcript):
    def __init__(self, progress: Progress | None, prefix: str | None = None) -> None:
        super().__init__(OBSERVED_TOOL_DESCRIPTION, "\n", call="tool call", result="tool result", progress=progress)
        self.prefix = prefix  # None: a JSON-lines log (places are lines); else the document's array
        self.open_calls: list[Use] = []  # the last model turn's calls, for results sent as user parts

    def place(self, line: int) -> str:
        return f"line {line}" if self.prefix is None else f"{self.prefix}[{line}]"

    def _texts(self, parts: list[Any], where: str, timestamp: int, number: int) -> list[str]:
        """The text of the parts; function responses become results of the open calls (by id, else name)."""
        texts = []
        for position, part in enumerate(parts):
            kind = _part_kind(part)
            if kind == "text":
                if part.get("thought") is True:
                    continue
                text = part.get("text")
                if not isinstance(text, str):
                    raise TranscriptError(f"{where}: parts[{position}].text must be a string")
                if text:
                    texts.append(text)
            elif kind == "functionResponse":
                self._response(part["functionResponse"], f"{where}: parts[{position}]", timestamp, number)
            elif kind != "functionCall":
                texts.append(f"[{kind} omitted]")
        return texts

    def _response(self, response: Any, where: str, timestamp: int, number: int, failed: bool = False,
                  call_id: str | None = None) -> None:
        if not isinstance(response, dict):
            raise TranscriptError(f"{where}: `functionResponse` must be an object")
        if call_id is None:
            call_id = self._answered(response, where)
        value, is_error = _response_value(response.get("response"), failed)
        self.result(where, call_id, Result(value, is_error, timestamp, number))

    def _answered(self, response: dict[str, Any], where: str) -> str:
        """The call a function response answers: the one with its `id`, else the first open one of its name."""
        wanted = response.get("id")
        by_id = isinstance(wanted, str) and bool(wanted)
        for use in self.open_calls:
            if use.provider_id in self.results:
                continue
            if (use.provider_id == wanted) if by_id else (use.name == response.get("name")):
                return use.provider_id
        raise TranscriptError(f"{where}: a functionResponse answers no tool call of the turn before it")

    def user(self, number: int, timestamp: int, content: Any) -> None:
        where = self.place(number)
        self.last_user_line, self.last_user_time = number, timestamp
        text = "\n".join(self._texts(_parts(content, where), where, timestamp, number))
        if text:
            self.items.append(Human(text))

    def model_turn(self, number: int, timestamp: int, content: Any, calls: Any, model: Any) -> None:
        where = self.place(number)
        self.last_assistant_line = number
        parts = _parts(content, where)
        turn = Turn(timestamp, number, self._texts(parts, where, timestamp, number), [],
                    model if isinstance(model, str) and model else None)
        self.open_calls = turn.uses
        for position, part in enumerate(parts):
            if _part_kind(part) == "functionCall":
                self._call(turn, part["functionCall"], f"{where}: parts[{position}].functionCall", None)
        if calls is not None and not isinstance(calls, list):
            raise TranscriptError(f"{where}: `toolCalls` must be a list")
        for position, call in enumerate(calls or []):
            self._call(turn, call, f"{where}: toolCalls[{position}]", call)
        self.items.append(turn)

    def _call(self, turn: Turn, call: Any, where: str, recorded: dict[str, Any] | None) -> None:
        if not isinstance(call, dict):
            raise TranscriptError(f"{where} must be an object")
        call_id = call.get("id")
        if call_id is None:  # calls may carry no id (the API pairs them by name): one of our own
            call_id = f"{where} (no id)"
        args = call.get("args")
        if args is not None and not isinstance(args, dict):
            raise TranscriptError(f"{where}: `args` must be an object")
        use = self.use(where, turn.line, call_id, call.get("name"), args)
        turn.uses.append(use)
        if recorded is None:
            return
        failed = recorded.get("status") in _FAILED
        results = recorded.get("result")
        if results is None:
            if failed:
                self.result(where, use.provider_id, Result(str(recorded["status"]), True, turn.timestamp,
                                                           turn.line))
            return
        when = iso_ms(recorded.get("timestamp")) or turn.timestamp
        responses = [part["functionResponse"] for part in _parts(results, where)
                     if _part_kind(part) == "functionResponse"]
        if len(responses) != 1:
            raise TranscriptError(f"{where}: `result` must hold one functionResponse part")
        self._response(responses[0], f"{where}.result", when, turn.line, failed, use.provider_id)


# ---------------------------------------------------------------------------------------------------------
# The JSON-lines log


def _replay(path: Path, session: _Session, progress: Progress | None) -> list[tuple[int, _Line]]:
    """The messages as Gemini CLI loads the log: last record per id, rewinds applied, `$set` read."""
    messages: dict[Any, tuple[int, _Line]] = {}
    for number, raw in jsonl_lines(path, progress):
        line = decode_line(number, raw, _LINE, _line_of, _WHAT)
        if line.rewindTo is not None:
            if not isinstance(line.rewindTo, str):
                raise TranscriptError(f"line {number}: `$rewindTo` must be a message id (a string)")
            keys = list(messages)
            cut = keys.index(line.rewindTo) if line.rewindTo in messages else 0
            messages = {key: messages[key] for key in keys[:cut]}
        elif line.set is not None:
            if not isinstance(line.set, dict):
                raise TranscriptError(f"line {number}: `$set` must be an object")
            if isinstance(line.set.get("messages"), list):
                messages = {}
                for position, value in enumerate(line.set["messages"]):
                    if not isinstance(value, dict):
                        raise TranscriptError(f"line {number}: `$set.messages[{position}]` must be an object")
                    record = _line_of(value)
                    messages[_key(record, (number, position))] = (number, record)
        elif line.type is None:
            if line.sessionId is None and line.startTime is None:
                session.skip("(a record without a type)")
            elif session.created_at is None:
                session.created_at = iso_ms(line.startTime)
        else:
            messages[_key(line, (number,))] = (number, line)
    return list(messages.values())


def _key(line: _Line, fallback: tuple[int, ...]) -> Any:
    return line.id if isinstance(line.id, str) and line.id else ("line", *fallback)


def _feed(session: _Session, records: list[tuple[int, _Line]]) -> None:
    for number, line in records:
        if line.type in _UI_TYPES:
            continue
        if line.type not in ("user", "gemini"):
            session.skip(f"message.{line.type}" if isinstance(line.type, str) else "message")
            continue
        timestamp = iso_ms(line.timestamp)
        if timestamp is None:
            raise TranscriptError(f"{session.place(number)}: `timestamp` is missing or not an ISO time")
        if session.created_at is None:
            session.created_at = timestamp
        if line.type == "user":
            session.user(number, timestamp, line.content)
        else:
            session.model_turn(number, timestamp, line.content, line.toolCalls, line.model)


# ---------------------------------------------------------------------------------------------------------
# JSON documents: the older session file, a checkpoint, a saved chat


def _document(path: Path, progress: Progress | None) -> _Session:
    data = path.read_bytes()
    if progress is not None:
        progress.read(len(data))
    document = decode_document(data, _WHAT)
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        session = _Session(progress, "messages")
        session.created_at = iso_ms(document.get("startTime"))
        records = []
        for position, value in enumerate(document["messages"]):
            if not isinstance(value, dict):
                raise TranscriptError(f"messages[{position}] must be an object")
            records.append((position, _line_of(value)))
        _feed(session, records)
        return session
    history, prefix = document, ""
    if isinstance(document, dict):
        history, prefix = document.get("clientHistory"), "clientHistory"
    if not isinstance(history, list):
        raise TranscriptError("the top level must be a session ({messages}), a checkpoint ({clientHistory}) or "
                              "a list of Content ({role, parts})")
    session = _Session(progress, prefix)
    session.created_at = int(path.stat().st_mtime * 1000)  # a checkpoint keeps no times
    _contents(session, history)
    return session


def _contents(session: _Session, history: list[Any]) -> None:
    assert session.created_at is not None
    when = session.created_at
    start = 0
    if history and isinstance(history[0], dict) and any(
            isinstance(p, dict) and str(p.get("text", "")).startswith(_CONTEXT_PREFIX)
            for p in history[0].get("parts") or []):
        start = 2  # the CLI's own context and the model's "Got it": not the user's
    for position in range(start, len(history)):
        content = history[position]
        where = session.place(position)
        if not isinstance(content, dict) or content.get("role") not in ("user", "model"):
            raise TranscriptError(f"{where} must be an object with `role` user or model")
        if content.get("role") == "user":
            session.user(position, when, content.get("parts"))
        else:
            session.model_turn(position, when, content.get("parts"), None, None)


def read_gemini(path: str | os.PathLike[str], progress: Reading = None) -> Transcript:
    """The session's transcript: a `.jsonl` log replayed, or a JSON document read whole."""
    reading = as_progress(progress)
    file = Path(path)
    if file.suffix == ".json":
        session = _document(file, reading)
    else:
        session = _Session(reading)
        _feed(session, _replay(file, session, reading))
    if session.created_at is None or not any(isinstance(i, Turn | Human) for i in session.items):
        raise TranscriptError("no user or gemini messages in the file; is it a Gemini CLI session?")
    session.check_ids()
    return session


class Gemini(AgentImporter):
    name = "gemini"
    description = "a Gemini CLI session (~/.gemini/tmp/<project_hash>/chats/session-*.jsonl, or a checkpoint .json)"
    folder = "~/.gemini/tmp"
    provider = "gemini"
    patterns = ("session-*.jsonl", "session-*.json")

    read = staticmethod(read_gemini)


import_gemini = Gemini().import_file  # the cassette of one session; TranscriptError naming the line and field
