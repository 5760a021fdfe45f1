"""A coding agent's transcript, read into turns, as neutral steps (docs/format.md, "Import").

Claude Code, Codex CLI and Gemini CLI keep the same story in different records: the human's messages, model
turns (text and tool calls), the tools' results keyed by the agent's own call ids, and (Codex) compactions
that replace the history.  Each reader fills a `Transcript`; `build` turns it into steps one way for all of
them, so a tool round, a cut-off session and a final answer mean the same thing whichever agent wrote it.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from blackbox.format.canonical import CanonicalError, canonical_bytes
from blackbox.format.cassette import Cassette, StepChain
from blackbox.importers.common import (
    INFINITE,
    Importer,
    Progress,
    Reading,
    TranscriptError,
    default_trace_id,
    json_numbers,
)

__all__ = ["AgentImporter", "Compaction", "Human", "Result", "Transcript", "Turn", "Use", "build"]


class Use(msgspec.Struct):
    provider_id: str
    name: str
    input: Any


class Result(msgspec.Struct):
    value: Any
    is_error: bool
    timestamp: int
    line: int


class Turn(msgspec.Struct):
    """One model turn: its texts (joined by the transcript's `joiner`) and its tool uses, in order."""

    timestamp: int
    line: int
    texts: list[str]
    uses: list[Use]
    model: str | None = None


class Human(msgspec.Struct):
    text: str


class Compaction(msgspec.Struct):
    """The agent replaced its history (Codex compaction): `messages` from here on, tool parts keyed by the
    agent's call ids (mapped to `call-N` when the steps are built)."""

    messages: list[dict[str, Any]]


class Transcript:
    """What one session contributes: items in order, results by the agent's call id, and where it ended."""

    def __init__(self, description: str, joiner: str = "\n", call: str = "tool_use",
                 result: str = "tool_result", progress: Progress | None = None) -> None:
        self.description = description  # every observed tool's `description` (hashed: exact strings)
        self.progress = progress
        self.joiner = joiner
        self.call_word, self.result_word = call, result  # the agent's own names, for error messages
        self.items: list[Turn | Human | Compaction] = []
        self.uses: dict[str, int] = {}  # call id → line
        self.results: dict[str, Result] = {}
        self.created_at: int | None = None
        self.last_assistant_line = 0
        self.last_user_line = 0
        self.last_user_time = 0

    def skip(self, kind: Any) -> None:
        """A record of a type this reader does not know: skipped, and counted for the summary."""
        if self.progress is not None:
            self.progress.skip(kind)

    def place(self, line: int) -> str:
        """Where item `line` is, for an error: a line of a JSON-lines file (a JSON document says otherwise)."""
        return f"line {line}"

    def use(self, where: str, number: int, provider_id: Any, name: Any, tool_input: Any,
            id_field: str = "id") -> Use:
        """A tool use, checked: a non-empty string id and name, an id not used before."""
        what = self.call_word
        if not isinstance(provider_id, str) or not provider_id:
            raise TranscriptError(f"{where}: a {what} needs a non-empty string `{id_field}`")
        if not isinstance(name, str) or not name:
            raise TranscriptError(f"{where}: a {what} needs a non-empty string `name`")
        if provider_id in self.uses:
            raise TranscriptError(f"{where}: duplicate {what} id (first used on line {self.uses[provider_id]})")
        self.uses[provider_id] = number
        return Use(provider_id, name, {} if tool_input is None else tool_input)

    def result(self, where: str, provider_id: str, result: Result) -> None:
        if provider_id in self.results:
            first = self.results[provider_id].line
            raise TranscriptError(f"{where}: duplicate {self.result_word} for one {self.call_word} (first on "
                                  f"line {first})")
        self.results[provider_id] = result

    def check_ids(self) -> None:
        """Every result must answer a tool use of this session."""
        for provider_id, result in self.results.items():
            if provider_id not in self.uses:
                raise TranscriptError(f"{self.place(result.line)}: a {self.result_word} answers an unknown "
                                      f"{self.call_word} id")


def _result_part(kind: str, call_id: str, name: str, result: Result) -> dict[str, Any]:
    payload: dict[str, Any] = {"type": kind} if kind else {}
    payload.update(toolCallId=call_id, toolName=name)
    payload["error" if result.is_error else "result"] = result.value
    return payload


class _Builder:
    def __init__(self, transcript: Transcript, trace_id: str) -> None:
        self.transcript = transcript
        self.chain = StepChain(trace_id)
        names: dict[str, None] = {}
        for item in transcript.items:
            if isinstance(item, Turn):
                for use in item.uses:
                    names.setdefault(use.name)
        self.tools = [{"name": name, "description": transcript.description} for name in names]
        self.history: list[dict[str, Any]] = []
        self.ids: dict[str, str] = {}
        self.model: str | None = None

    def call_id(self, provider_id: Any) -> str:
        key = str(provider_id)
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = f"call-{len(self.ids)}"
        return found

    def model_input(self, timestamp: int) -> None:
        payload: dict[str, Any] = {"messages": list(self.history), "tools": self.tools}
        if self.model is not None:
            payload["model"] = self.model
        self.chain.append("model_input", timestamp, payload)

    def compaction(self, item: Compaction) -> None:
        self.history = []
        for message in item.messages:
            content = message.get("content")
            if isinstance(content, list):
                content = [{**part, "toolCallId": self.call_id(part["toolCallId"])} if "toolCallId" in part else part
                           for part in content]
            self.history.append({**message, "content": content})

    def text_turn(self, turn: Turn, text: str) -> None:
        self.model_input(turn.timestamp)
        self.chain.append("model_output", turn.timestamp, {"type": "final_answer", "text": text})
        self.history.append({"role": "assistant", "content": text})

    def tool_turn(self, turn: Turn, text: str, final: bool) -> bool:
        """The turn's steps; False when the session was cut off while a tool ran (results missing)."""
        calls = [{"toolCallId": self.call_id(use.provider_id), "toolName": use.name, "toolInput": use.input}
                 for use in turn.uses]
        output: dict[str, Any] = {"type": "tool_calls", "calls": calls}
        if text:
            output["text"] = text
        self.model_input(turn.timestamp)
        self.chain.append("model_output", turn.timestamp, output)
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        results: list[dict[str, Any]] = []
        for use, call in zip(turn.uses, calls, strict=True):
            parts.append({"type": "tool_use", **call})
            result = self.transcript.results.get(use.provider_id)
            if result is None:
                if not final:
                    words = self.transcript
                    raise TranscriptError(f"{words.place(turn.line)}: a {words.call_word} of this turn has no "
                                          f"{words.result_word}, and the session goes on after it")
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

    def _holding_infinity(self, turn: Turn) -> int:
        """The line of the turn's tool input or result that holds the number, else the turn's own line."""
        for use in turn.uses:
            result = self.transcript.results.get(use.provider_id)
            for value, line in ((use.input, self.transcript.uses.get(use.provider_id)),
                                (None if result is None else result.value, None if result is None else result.line)):
                try:
                    canonical_bytes(value)
                except CanonicalError:
                    return line or turn.line
        return turn.line

    def build(self) -> Cassette:
        transcript = self.transcript
        turns = [item for item in transcript.items if isinstance(item, Turn) and (item.texts or item.uses)]
        last_turn = turns[-1] if turns else None
        answer: tuple[str, int] | None = None
        complete = True
        for item in transcript.items:
            if isinstance(item, Human):
                self.history.append({"role": "user", "content": item.text})
                continue
            if isinstance(item, Compaction):
                self.compaction(item)
                continue
            if not (item.texts or item.uses):
                continue
            if item.model is not None:
                self.model = item.model
            text = transcript.joiner.join(item.texts)
            try:
                if item.uses:
                    answer = None
                    complete = self.tool_turn(item, text, final=item is last_turn)
                else:
                    self.text_turn(item, text)
                    answer = (text, item.timestamp)
            except CanonicalError:  # 1e400 reads as Infinity, which has no JSON form to hash
                raise TranscriptError(f"{transcript.place(self._holding_infinity(item))}: {INFINITE}") from None
        if complete and (last_turn is None or transcript.last_user_line > transcript.last_assistant_line):
            with json_numbers(transcript.place(transcript.last_user_line)):
                self.model_input(transcript.last_user_time)  # the request that was never answered
        elif answer is not None:
            self.chain.append("metadata", answer[1], {"event": "run_completed", "status": "success",
                                                      "result": answer[0]})
        assert transcript.created_at is not None
        return self.chain.cassette(transcript.created_at)


def build(transcript: Transcript, trace_id: str) -> Cassette:
    """The cassette of a transcript read whole (docs/format.md, "Import")."""
    return _Builder(transcript, trace_id).build()


class AgentImporter(Importer):
    """An importer of a coding agent's sessions: `read` fills a `Transcript`, `build` makes its steps."""

    @staticmethod
    def read(path: str | os.PathLike[str], progress: Reading = None) -> Transcript:
        raise NotImplementedError

    def import_file(self, path: str | os.PathLike[str], trace_id: str | None = None,
                    progress: Reading = None) -> Cassette:
        return build(self.read(path, progress), trace_id or default_trace_id(path))
