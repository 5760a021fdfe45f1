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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from blackbox.canonical import CanonicalError, JSFloat, canonical_bytes, decode_json, js_stringify
from blackbox.cassette import Cassette, StepChain
from blackbox.importers.common import DEFAULT_TRACE_ID, TranscriptError, iso_ms, json_or_text

__all__ = ["OBSERVED_TOOL_DESCRIPTION", "import_claude_code", "read_session"]

OBSERVED_TOOL_DESCRIPTION = "Observed in Claude Code transcript; original definition unavailable."

Progress = Callable[[int], None]


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


class _Use(msgspec.Struct):
    provider_id: str
    name: str
    input: Any


class _Result(msgspec.Struct):
    value: Any
    is_error: bool
    timestamp: int
    line: int


class _Turn(msgspec.Struct):
    """One model turn: every assistant line with the same `message.id`, in file order."""

    timestamp: int
    line: int
    texts: list[str]
    uses: list[_Use]


class _Human(msgspec.Struct):
    text: str


class _Session:
    """What one chain of lines (the main one, or a subagent's sidechain) contributes to the cassette."""

    def __init__(self) -> None:
        self.items: list[_Turn | _Human] = []
        self.turns: dict[Any, _Turn] = {}
        self.uses: dict[str, int] = {}  # tool_use id → line
        self.results: dict[str, _Result] = {}
        self.created_at: int | None = None
        self.last_assistant_line = 0
        self.last_user_line = 0
        self.last_user_time = 0

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
            turn = _Turn(timestamp, number, [], [])
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
                turn.uses.append(self._use(number, position, block))

    def _use(self, number: int, position: int, block: dict[str, Any]) -> _Use:
        where = f"line {number}: content[{position}]"
        provider_id, name = block.get("id"), block.get("name")
        if not isinstance(provider_id, str) or not provider_id:
            raise TranscriptError(f"{where}: a tool_use needs a non-empty string `id`")
        if not isinstance(name, str) or not name:
            raise TranscriptError(f"{where}: a tool_use needs a non-empty string `name`")
        if provider_id in self.uses:
            raise TranscriptError(f"{where}: duplicate tool_use id (first used on line {self.uses[provider_id]})")
        self.uses[provider_id] = number
        tool_input = block.get("input")
        return _Use(provider_id, name, {} if tool_input is None else tool_input)

    def _user(self, number: int, timestamp: int, content: Any) -> None:
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts = []
            for position, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._result(number, position, timestamp, block)
                else:
                    texts.append(_block_text(block))
        elif content is None:
            texts = []
        else:
            raise TranscriptError(f"line {number}: `message.content` must be a string or a list of blocks")
        text = "\n".join(texts)
        if text:
            self.items.append(_Human(text))

    def _result(self, number: int, position: int, timestamp: int, block: dict[str, Any]) -> None:
        where = f"line {number}: content[{position}]"
        provider_id = block.get("tool_use_id")
        if not isinstance(provider_id, str) or not provider_id:
            raise TranscriptError(f"{where}: a tool_result needs a non-empty string `tool_use_id`")
        if provider_id in self.results:
            first = self.results[provider_id].line
            raise TranscriptError(f"{where}: duplicate tool_result for one tool_use (first on line {first})")
        is_error = block.get("is_error") is True
        value = _result_value(block.get("content"))
        if value is None:
            raise TranscriptError(f"{where}: tool_result `content` must be a string or a list of blocks")
        if is_error and not isinstance(value, str):
            # An error is always a string: JSON text is re-printed as JSON.stringify prints the parsed value,
            # as the original does (`{"a": 1}` -> `{"a":1}`; a JSON string is the string itself).
            value = js_stringify(value)
        self.results[provider_id] = _Result(value, is_error, timestamp, number)

    def check_ids(self) -> None:
        """Every tool_result must answer a tool_use of this chain."""
        for provider_id, result in self.results.items():
            if provider_id not in self.uses:
                raise TranscriptError(f"line {result.line}: a tool_result answers an unknown tool_use id")


def _result_value(content: Any) -> Any:
    """A result string that parses as JSON becomes that JSON; blocks become their text joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return json_or_text(content)
    if not isinstance(content, list):
        return None
    return "\n".join(_block_text(block) for block in content)


def _block_text(block: Any) -> str:
    """A content block as text (docs/format.md, "Import"): a text block's text; any other block `[<type> omitted]`."""
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    return f"[{kind if isinstance(kind, str) else 'block'} omitted]"


# ---------------------------------------------------------------------------------------------------------
# Reading


def _lines(path: Path, progress: Progress | None) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if progress is not None:
                progress(len(raw))
            if raw.strip():
                yield number, raw


def _decode_line(number: int, raw: bytes) -> tuple[_Line, Any]:
    """The line's header and its undecoded `message` (msgspec.Raw, or a value when the fallback decoded it)."""
    try:
        line = _LINE_DECODER.decode(raw)
        return line, line.message
    except msgspec.ValidationError:
        raise TranscriptError(f"line {number}: not a JSON object (each line must be one)") from None
    except msgspec.DecodeError:
        pass  # not JSON, or JSON that msgspec refuses (lone surrogates): JSON.parse decides
    try:
        value = decode_json(raw)
    except UnicodeDecodeError:
        raise TranscriptError(f"line {number}: not UTF-8 text, so the file is damaged or not a Claude Code "
                              "session") from None
    except (msgspec.DecodeError, ValueError, RecursionError):
        raise TranscriptError(f"line {number}: not valid JSON") from None
    if not isinstance(value, dict):
        raise TranscriptError(f"line {number}: not a JSON object (each line must be one)")
    line = _Line(value.get("type"), value.get("isSidechain"), value.get("timestamp"))
    return line, value.get("message", msgspec.Raw(b""))


def _message(number: int, raw: Any) -> _Message:
    if isinstance(raw, msgspec.Raw):
        if not raw:
            raise TranscriptError(f"line {number}: `message` is missing")
        try:
            return _MESSAGE_DECODER.decode(raw)
        except msgspec.ValidationError:
            raise TranscriptError(f"line {number}: `message` must be an object") from None
        except msgspec.DecodeError:
            try:
                raw = decode_json(bytes(raw))  # lone surrogates: the line already parsed as JSON
            except (msgspec.DecodeError, ValueError):  # bytes that are not UTF-8 inside the message
                raise TranscriptError(f"line {number}: `message` holds bytes that are not UTF-8 text, so the "
                                      "file is damaged or not a Claude Code session") from None
    if not isinstance(raw, dict):
        raise TranscriptError(f"line {number}: `message` must be an object")
    return _Message(raw.get("id"), raw.get("role"), raw.get("content"))


def read_session(path: str | os.PathLike[str], progress: Progress | None = None) -> _Session:
    """One pass over the file: the main chain, or the sidechain when every kept line is a sidechain."""
    main = _Session()
    side: _Session | None = _Session()
    side_error: TranscriptError | None = None
    main_used = False
    for number, raw in _lines(Path(path), progress):
        line, raw_message = _decode_line(number, raw)
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


# ---------------------------------------------------------------------------------------------------------
# Building the steps


def _tools(session: _Session) -> list[dict[str, Any]]:
    names: dict[str, None] = {}
    for item in session.items:
        if isinstance(item, _Turn):
            for use in item.uses:
                names.setdefault(use.name)
    return [{"name": name, "description": OBSERVED_TOOL_DESCRIPTION} for name in names]


def _result_part(kind: str, call_id: str, name: str, result: _Result) -> dict[str, Any]:
    payload: dict[str, Any] = {"type": kind} if kind else {}
    payload.update(toolCallId=call_id, toolName=name)
    payload["error" if result.is_error else "result"] = result.value
    return payload


class _Builder:
    def __init__(self, session: _Session, trace_id: str) -> None:
        self.session = session
        self.chain = StepChain(trace_id)
        self.tools = _tools(session)
        self.history: list[dict[str, Any]] = []
        self.next_call = 0

    def model_input(self, timestamp: int) -> None:
        self.chain.append("model_input", timestamp, {"messages": list(self.history), "tools": self.tools})

    def text_turn(self, turn: _Turn, text: str) -> None:
        self.model_input(turn.timestamp)
        self.chain.append("model_output", turn.timestamp, {"type": "final_answer", "text": text})
        self.history.append({"role": "assistant", "content": text})

    def tool_turn(self, turn: _Turn, text: str, final: bool) -> bool:
        """The turn's steps; False when the session was cut off while a tool ran (results missing)."""
        calls = []
        for use in turn.uses:
            calls.append({"toolCallId": f"call-{self.next_call}", "toolName": use.name, "toolInput": use.input})
            self.next_call += 1
        output: dict[str, Any] = {"type": "tool_calls", "calls": calls}
        if text:
            output["text"] = text
        self.model_input(turn.timestamp)
        self.chain.append("model_output", turn.timestamp, output)
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        results: list[dict[str, Any]] = []
        for use, call in zip(turn.uses, calls, strict=True):
            parts.append({"type": "tool_use", **call})
            result = self.session.results.get(use.provider_id)
            if result is None:
                if not final:
                    raise TranscriptError(f"line {turn.line}: a tool_use of this turn has no tool_result, and "
                                          "the session goes on after it")
                self.chain.append("tool_call", turn.timestamp, call)
                continue
            when = max(result.timestamp, turn.timestamp)
            self.chain.append("tool_call", when, call)
            self.chain.append("tool_result", when, _result_part("", call["toolCallId"], use.name, result))
            results.append(_result_part("tool_result", call["toolCallId"], use.name, result))
        self.history.append({"role": "assistant", "content": parts})
        if len(results) < len(calls):
            return False
        self.history.append({"role": "user", "content": results})
        return True

    def _holding_infinity(self, turn: _Turn) -> int:
        """The line of the turn's tool input or result that holds the number, else the turn's own line."""
        for use in turn.uses:
            result = self.session.results.get(use.provider_id)
            for value, line in ((use.input, self.session.uses.get(use.provider_id)),
                                (None if result is None else result.value, None if result is None else result.line)):
                try:
                    canonical_bytes(value)
                except CanonicalError:
                    return line or turn.line
        return turn.line

    def build(self) -> Cassette:
        session = self.session
        turns = [item for item in session.items if isinstance(item, _Turn) and (item.texts or item.uses)]
        last_turn = turns[-1] if turns else None
        answer: tuple[str, int] | None = None
        complete = True
        for item in session.items:
            if isinstance(item, _Human):
                self.history.append({"role": "user", "content": item.text})
                continue
            if not (item.texts or item.uses):
                continue
            text = "\n".join(item.texts)
            try:
                if item.uses:
                    answer = None
                    complete = self.tool_turn(item, text, final=item is last_turn)
                else:
                    self.text_turn(item, text)
                    answer = (text, item.timestamp)
            except CanonicalError:  # JSON.parse reads 1e400 as Infinity, which has no JSON form to hash
                raise TranscriptError(f"line {self._holding_infinity(item)}: a number JSON cannot write (one too "
                                      "large such as 1e400, read as Infinity); make it a finite number") from None
        if complete and (last_turn is None or session.last_user_line > session.last_assistant_line):
            self.model_input(session.last_user_time)  # the request that was never answered
        elif answer is not None:
            self.chain.append("metadata", answer[1], {"event": "run_completed", "status": "success",
                                                      "result": answer[0]})
        assert session.created_at is not None
        return self.chain.cassette(session.created_at)


def import_claude_code(
    path: str | os.PathLike[str], trace_id: str = DEFAULT_TRACE_ID, progress: Progress | None = None
) -> Cassette:
    """The cassette of a Claude Code session file; TranscriptError naming the line when it cannot be one."""
    return _Builder(read_session(path, progress), trace_id).build()
