"""Pieces shared by every provider normalizer: Blackbox's own tool-call ids, small JSON helpers, the checks
every API's request needs alike (a tools list, text-only content); a provider's class is
`blackbox.providers.base.CodecProvider`."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from blackbox.errors import BlackboxUnsupportedError

__all__ = ["CallIds", "calls_of", "compact_json", "neutral_tool", "parse_tool_arguments",
           "text_of", "tool_list", "unsupported", "wants_stream"]

_NEUTRAL_RE = re.compile(r"^call-(\d+)$")


class CallIds:
    """Maps provider tool-call ids (`toolu_…`, `call_…`) to Blackbox's `call-0`, `call-1`… .

    Cassettes never hold provider ids: they differ on every run, so keeping them would make every replayed
    request diverge. The same provider id always maps to the same `call-N`; a new id takes the next one. The
    map also remembers each call's tool name so a later request's tool_result can be named even when the
    agent trimmed the matching tool_use from its history.
    """

    def __init__(self) -> None:
        self._by_provider: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._next = 0
        self._undo: list[tuple[dict[str, str], str, str | None]] | None = None  # inside `undo_on_error`
        #: What a provider keeps between the calls of one session beyond ids (Anthropic's message threads).
        self.memory: dict[str, object] = {}

    def _set(self, table: dict[str, str], key: str, value: str) -> None:
        if self._undo is not None:
            self._undo.append((table, key, table.get(key)))
        table[key] = value

    @property
    def next_index(self) -> int:
        """The N that the next new id will get (`call-N`)."""
        return self._next

    def neutral(self, provider_id: str) -> str:
        """The `call-N` of `provider_id`, allocating the next one the first time the id is seen."""
        found = self._by_provider.get(provider_id)
        if found is None:
            found = self.fresh()
            self._set(self._by_provider, provider_id, found)
        return found

    def fresh(self) -> str:
        """The next `call-N`, for a wrapped tool run without a model request that asked for it."""
        neutral_id = f"call-{self._next}"
        self._next += 1
        return neutral_id

    def bind(self, provider_id: str, neutral_id: str) -> None:
        """Map `provider_id` to a known `neutral_id` (replay hands `call-N` back as if it were a provider id).

        The counter moves past N so that a later fresh id never collides with a bound one.
        """
        current = self._by_provider.get(provider_id)
        if current is not None and current != neutral_id:
            raise ValueError(f"tool-call id {provider_id!r} is bound to {current!r}, not {neutral_id!r}")
        self._set(self._by_provider, provider_id, neutral_id)
        match = _NEUTRAL_RE.match(neutral_id)
        if match is not None:
            self._next = max(self._next, int(match.group(1)) + 1)

    def lookup(self, provider_id: str) -> str | None:
        """The `call-N` already mapped to `provider_id`, without allocating one."""
        return self._by_provider.get(provider_id)

    def note_name(self, neutral_id: str, tool_name: str) -> None:
        """Remember which tool `neutral_id` called (tool results in later requests carry only the id)."""
        self._set(self._names, neutral_id, tool_name)

    def name_of(self, neutral_id: str) -> str | None:
        """The tool name remembered for `neutral_id`, if any."""
        return self._names.get(neutral_id)

    def undo_on_error(self) -> _UndoOnError:
        """Forget every id allocated inside the block if it raises: a refused request changes nothing.

        The block logs what it changes and undoes that, rather than copying both maps on every model call
        (they grow with every tool call of the run)."""
        return _UndoOnError(self)

    def __repr__(self) -> str:
        return f"CallIds(next_index={self._next}, mapped={len(self._by_provider)})"


class _UndoOnError:
    """`CallIds.undo_on_error`: a nested block hands its log to the enclosing one, which may still undo it."""

    def __init__(self, ids: CallIds) -> None:
        self.ids = ids
        self.outer: list[tuple[dict[str, str], str, str | None]] | None = None
        self.next = 0

    def __enter__(self) -> None:
        self.outer, self.next = self.ids._undo, self.ids._next
        self.ids._undo = []

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        log, self.ids._undo = self.ids._undo or [], self.outer
        if exc_type is not None:
            for table, key, old in reversed(log):
                if old is None:
                    del table[key]
                else:
                    table[key] = old
            self.ids._next = self.next
        elif self.outer is not None:
            self.outer.extend(log)


def wants_stream(body: dict[str, Any]) -> bool:
    """True when a request asks for server-sent events (`stream: true`); the same field in every API."""
    return bool(body.get("stream"))


def unsupported(what: str, advice: str) -> BlackboxUnsupportedError:
    """The one refusal message shape: `<what> is not supported yet; <advice>`."""
    return BlackboxUnsupportedError(f"{what} is not supported yet; {advice}")


def parse_tool_arguments(raw: Any) -> Any:
    """JSON-parse a tool call's `arguments` string; text that is not JSON stays the raw string.

    Keeping the raw string (rather than failing) lets a model's malformed arguments be recorded and replayed
    byte for byte.
    """
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw, parse_constant=_not_json)
    except ValueError:
        return raw


def _not_json(constant: str) -> Any:
    """`NaN`, `Infinity`, `-Infinity`: Python's json accepts them, JavaScript's JSON.parse (and so the TypeScript
    Blackbox) does not, so such arguments stay the raw string."""
    raise ValueError(f"{constant} is not JSON")


def compact_json(value: Any) -> str:
    """JSON without spaces and with non-ASCII kept raw, the way the APIs send tool arguments."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def calls_of(output: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The calls of a `model_output` payload, in either the `tool_calls` or the single `tool_call` shape."""
    kind = output.get("type")
    if kind == "tool_calls":
        calls = output.get("calls")  # a hand-edited cassette may hold anything here: no TypeError in replay
        return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
    if kind == "tool_call":
        return [{key: output.get(key) for key in ("toolCallId", "toolName", "toolInput")}]
    return []


def answer_of(output: Mapping[str, Any]) -> tuple[list[dict[str, Any]], Any, Any]:
    """What a replayed response is built from: a `model_output`'s calls (either shape), `stop` and `text`;
    ValueError for a payload that is no model output."""
    kind = output.get("type")
    if kind not in ("tool_calls", "tool_call", "final_answer"):
        raise ValueError(f"not a model_output payload: type {kind!r}")
    return calls_of(output), output.get("stop"), output.get("text")


def tool_list(tools: Any) -> list[Any]:
    """A request's `tools` value as a list (none is an empty one); any other shape is refused."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise unsupported("a tools value that is not a list", "pass tools=[...]")
    return tools


def neutral_tool(name: Any, description: Any, schema: Any) -> dict[str, Any]:
    """A tool as the neutral `model_input` keeps it: its name, its description ("" if none) and, if it has
    one, its parameters' JSON schema as `inputSchema`."""
    neutral: dict[str, Any] = {"name": name, "description": description or ""}
    if schema is not None:
        neutral["inputSchema"] = schema
    return neutral


def text_of(content: Any, kinds: Collection[str], *, parts_in: str, content_of: str) -> str:
    """Content (a string or a list of parts) as one string, text parts joined with a blank line.

    Blackbox records text only: a refusal or a part whose type is not in `kinds` (an image, a file…) is
    refused, naming where it was (`… content parts in <parts_in>`, `<content_of> content of type …`).
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            if kind == "refusal":
                raise unsupported("refusals in the conversation history", "drop the refused turn")
            if kind not in kinds:
                raise unsupported(f"{kind!r} content parts in {parts_in}", "send text content only")
            texts.append(part.get("text") or "")
        return "\n\n".join(texts)
    raise unsupported(f"{content_of} content of type {type(content).__name__}", "send text content")
