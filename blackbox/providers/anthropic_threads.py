"""Anthropic's message threads (the `message-threads` beta that `client.beta.messages.tool_runner(...)` and
`client.beta.messages.thread(...)` use): the server holds the conversation, and each turn after the first sends
only its new messages with `thread: {"type": "continue", "previous_message_id": <the last reply's id>}`, without
`system` and `tools`, which the server keeps from the turn that created the thread.

A cassette holds the conversation the model had, so the session keeps what the server keeps: each answered
turn of a thread by its reply's id (`Threads.note`), and a `continue` is read as the whole conversation
(`Threads.expand`) before it is normalized.  Recording, replay and a fork then see the full history, whether
or not the agent used a thread, and the recorded steps are those of the same agent run without one.

A thread continued from a reply this session was not given (made by another process) cannot be recorded
faithfully and is refused before it is sent.  A fork's live branch continues from replies only the replay
gave, which no server holds: `Threads.outgoing` sends that turn as a new thread with the whole conversation,
and the SDK continues the server's new thread from its answer.
"""

from __future__ import annotations

from typing import Any

from blackbox.providers.neutral import CallIds, unsupported

__all__ = ["Threads", "threads_of"]

#: The request fields a thread keeps from the turn that created it (a `continue` must not repeat them).
CREATE_ONLY = ("system", "tools")
_ADVICE = ("start the thread in this run (the runner does), or pass thread=False to tool_runner() / send the "
           "whole conversation in messages")


class _Turn:
    """One answered turn of a thread: the turn it continued (None for the one that created the thread), the
    messages it added, the reply, the thread's create-only fields, and whether a real server holds it."""

    __slots__ = ("fields", "length", "live", "messages", "parent")

    def __init__(self, parent: _Turn | None, messages: list[Any], fields: dict[str, Any], live: bool) -> None:
        self.parent = parent
        self.messages = messages  # the turn's own messages, its reply last
        self.fields = fields
        self.live = live
        self.length: int = len(messages) + (parent.length if parent is not None else 0)

    def history(self) -> list[Any]:
        """Every message of the thread up to this turn's reply, oldest first (walked without recursion)."""
        chain: list[_Turn] = []
        turn: _Turn | None = self
        while turn is not None:
            chain.append(turn)
            turn = turn.parent
        return [message for turn in reversed(chain) for message in turn.messages]


class Threads:
    """The threads one session's Anthropic calls keep on the server, by the id of each turn's reply."""

    def __init__(self) -> None:
        self._turns: dict[str, _Turn] = {}

    def _previous(self, thread: dict[str, Any]) -> _Turn:
        previous = thread.get("previous_message_id")
        turn = self._turns.get(previous) if isinstance(previous, str) else None
        if turn is None:
            raise unsupported("a message thread continued from a reply this run was not given (the server would "
                              "answer from history Blackbox never saw)", _ADVICE)
        return turn

    def expand(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request as the whole conversation: a `continue` gets the thread's history before its messages and
        the thread's `system` and `tools`; any other request is returned as it is."""
        thread = _thread(body)
        if thread is None or thread.get("type") == "create":
            return body
        turn = self._previous(thread)
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise unsupported("a thread turn without a messages list", "send messages=[...]")
        return {**turn.fields, **body, "messages": [*turn.history(), *messages]}

    def note(self, request: dict[str, Any], response: Any, *, live: bool) -> None:
        """Keep an answered thread turn (`request` as `expand` gave it) under its reply's id.  A refusal is not
        kept: the server does not continue from it (the SDK starts a new thread)."""
        thread = _thread(request)
        if thread is None or not isinstance(response, dict) or response.get("stop_reason") == "refusal":
            return
        reply_id, content = response.get("id"), response.get("content")
        messages = request.get("messages")
        if not isinstance(reply_id, str) or not isinstance(content, list) or not isinstance(messages, list):
            return
        previous = thread.get("previous_message_id") if thread.get("type") == "continue" else None
        parent = self._turns.get(previous) if isinstance(previous, str) else None
        fields = parent.fields if parent is not None else {k: request[k] for k in CREATE_ONLY if k in request}
        own = messages[parent.length:] if parent is not None else list(messages)
        self._turns[reply_id] = _Turn(parent, [*own, {"role": "assistant", "content": content}], fields, live)

    def outgoing(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """A `continue` from a reply no live server gave (a fork's replayed prefix) as a new thread holding the
        whole conversation (`request` is `expand`'s); None when the server holds what the request names."""
        thread = _thread(request)
        if thread is None or thread.get("type") != "continue" or self._previous(thread).live:
            return None
        return {**request, "thread": {"type": "create"}}


def _thread(body: dict[str, Any]) -> dict[str, Any] | None:
    """The request's `thread` field (None when it has none); one of another shape is refused."""
    thread = body.get("thread")
    if thread is None:
        return None
    if not isinstance(thread, dict) or thread.get("type") not in ("create", "continue"):
        raise unsupported("a thread field other than {type: create} or {type: continue, previous_message_id}",
                          "send one the API defines")
    return thread


def threads_of(ids: CallIds) -> Threads:
    """The session's threads (kept with its call ids: the state a provider keeps between calls)."""
    found = ids.memory.get("anthropic-threads")
    if not isinstance(found, Threads):
        found = ids.memory["anthropic-threads"] = Threads()
    return found
