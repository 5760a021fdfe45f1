"""The server half of Anthropic's message threads for the fake API: a brain wrapper that keeps each thread
the way the API documents it (`thread: {"type": "create"}` holds the conversation under the reply's id; a
`continue` sends only the new messages, without `system` and `tools`, from a reply it names).

    threads = ThreadServer(weather_brain("anthropic"))
    fake_api.brain = threads
    ... threads.continued (how many turns continued a thread), threads.not_found (ids it never issued)

The inner brain is asked with the whole conversation, as the real model sees it.  A `continue` from an id this
server never issued is answered 404 `thread_not_found` (the SDK's `ThreadNotFoundError`); one that repeats a
create-only field is answered 400, as the API refuses it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tests.fakeapi import Reply, json_reply, new_id

CREATE_ONLY = ("system", "tools")


def thread_error(status: int, code: str, message: str) -> Reply:
    return json_reply({"type": "error", "error": {"type": "not_found_error" if status == 404 else
                                                  "invalid_request_error", "message": message,
                                                  "details": {"error_code": code}},
                       "request_id": new_id("req_011")}, status)


class ThreadServer:
    """A brain (`fake.brain = ThreadServer(inner)`) that holds message threads."""

    def __init__(self, inner: Callable[[Any], Any]) -> None:
        self.inner = inner
        self.held: dict[str, dict[str, Any]] = {}  # reply id → the whole request it answered, the reply appended
        self.created = 0
        self.continued = 0
        self.not_found: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, body: Any) -> Any:
        thread = body.get("thread") if isinstance(body, dict) else None
        if thread is None:
            return self.inner(body)
        whole = {key: value for key, value in body.items() if key != "thread"}
        with self._lock:
            if thread.get("type") == "continue":
                previous = thread.get("previous_message_id")
                held = self.held.get(previous)
                if held is None:
                    self.not_found.append(str(previous))
                    return thread_error(404, "thread_not_found", f"No thread state for {previous}")
                repeated = [field for field in CREATE_ONLY if field in body]
                if repeated:
                    return thread_error(400, "thread_create_only_field", f"{repeated[0]} is fixed by the thread")
                whole = {**{k: held[k] for k in CREATE_ONLY if k in held}, **whole,
                         "messages": [*held["messages"], *body.get("messages", [])]}
                self.continued += 1
            else:
                self.created += 1
        answer = self.inner(whole)
        if isinstance(answer, dict) and answer.get("type") == "message":
            with self._lock:
                reply = {"role": "assistant", "content": answer["content"]}
                self.held[answer["id"]] = {**whole, "messages": [*whole["messages"], reply]}
        return answer
