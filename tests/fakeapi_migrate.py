"""A brain for the fake API that plays both sides of a model migration, for Anthropic and OpenAI bodies alike.

The recorded model answers faithfully: it calls each tool the question needs (`get_weather`, and `get_time`
when the question asks the time), one per turn, then answers `<City>: <results, sorted>`.  A *candidate* model
(any model named in `candidates`) answers per city, so a migration's verdicts are known beforehand:

- Paris: as recorded → `same`;
- Oslo: the same tools in the other order, the same answer → `changed path` (passes);
- Rome: no tool, "No idea about Rome." → `changed outcome` (fails);
- Lima: a tool the recording never saw (`get_forecast`), then `Lima: <its result>` → the `--unseen` policy's case;
- Bergen: on the first conversation as Rome, then as recorded (a flaky candidate, for `--repeat`).

Built on `fakeapi_generic`'s reading of a body (which API, what was called, which results came back).
"""

from __future__ import annotations

import threading
from typing import Any

from tests.fakeapi_generic import _history, _reply, api_of  # the generic brain's readers of a request body

__all__ = ["CITIES", "MigrationBrain", "question_of"]

CITIES = ("Paris", "Oslo", "Rome", "Lima", "Bergen")


def question_of(body: dict[str, Any]) -> str:
    """The user's first words in a request (Messages and chat bodies: `messages`; Responses: `input`)."""
    for message in body.get("messages") or body.get("input") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return " ".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
    return ""


class MigrationBrain:
    """`fake.brain = MigrationBrain({"gpt-candidate"})`; `conversations[city]` counts the candidate's first turns."""

    def __init__(self, candidates: set[str]) -> None:
        self.candidates = candidates
        self.conversations: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        api = api_of(body)
        question = question_of(body)
        city = next((c for c in CITIES if c in question), "Paris")
        called, results, turns = _history(body, api)
        needed = ["get_weather", "get_time"] if "time" in question else ["get_weather"]
        if str(body.get("model")) in self.candidates:
            with self.lock:
                if turns == 0:
                    self.conversations[city] = self.conversations.get(city, 0) + 1
                seen = self.conversations.get(city, 1)
            if city == "Rome" or (city == "Bergen" and seen == 1):
                return _reply(api, body, f"No idea about {city}.", [])
            if city == "Oslo":
                needed = needed[::-1]
            if city == "Lima":
                needed = ["get_forecast"]
        fresh = [name for name in needed if name not in called]
        if fresh:
            return _reply(api, body, None, [(fresh[0], {"city": city})])
        return _reply(api, body, f"{city}: {'; '.join(sorted(results))}", [])
