"""A fake API that drifts, for `blackbox drift`'s tests: the tests' fake API (`tests.fakeapi`) answering as a
brain does, with one change made to every answer — a field added, a field dropped, a field of another type —
or another brain (a change of behaviour).  And a two-call weather agent on the real SDKs that records the runs
drift re-sends.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai

import blackbox
from tests.fakeapi import FakeAPI

__all__ = ["KEYS", "add_field", "drifting", "drop_field", "record_weather", "retype_field"]

#: The keys the recordings and the live re-sends use (the fake API checks none; no piece of them is recorded).
KEYS = {"anthropic": "sk-ant-drift-test-0123456789abcdefghijklmnop",
        "openai": "sk-proj-drift-test-0123456789abcdefghij"}

Mutation = Callable[[dict[str, Any]], None]


def _at(body: dict[str, Any], path: str) -> tuple[dict[str, Any], str]:
    """The object holding dotted `path`'s last key, and that key (`usage.output_tokens`)."""
    *parents, last = path.split(".")
    holder: Any = body
    for key in parents:
        holder = holder[int(key)] if isinstance(holder, list) else holder[key]
    return holder, last


def add_field(path: str, value: Any) -> Mutation:
    def mutate(body: dict[str, Any]) -> None:
        holder, key = _at(body, path)
        holder[key] = value
    return mutate


def drop_field(path: str) -> Mutation:
    def mutate(body: dict[str, Any]) -> None:
        holder, key = _at(body, path)
        holder.pop(key, None)
    return mutate


def retype_field(path: str, convert: Callable[[Any], Any]) -> Mutation:
    def mutate(body: dict[str, Any]) -> None:
        holder, key = _at(body, path)
        holder[key] = convert(holder[key])
    return mutate


def drifting(brain: Callable[[Any], Any], *mutations: Mutation) -> Callable[[Any], Any]:
    """`brain`, each of its (JSON) answers changed by `mutations`."""
    def drifted(body: Any) -> Any:
        answer = brain(body)
        for mutate in mutations:
            mutate(answer)
        return answer
    return drifted


def _weather(city: str) -> str:
    return f"sunny in {city}"


def record_weather(fake: FakeAPI, out: Path, provider: str) -> None:
    """Record a weather agent (`anthropic` Messages or `openai` Chat Completions, the real SDK) against `fake`,
    whose brain answers: a `get_weather` call, then a final answer (a Responses run:
    `tests.test_cli_whatif_providers.record_responses_run`)."""
    bb = blackbox.session("record", out=out)
    weather = bb.tool("get_weather", _weather)
    if provider == "anthropic":
        client = fake.closes(anthropic.Anthropic(base_url=fake.url, api_key=KEYS["anthropic"],
                                                 http_client=bb.http_client(), max_retries=0))
        tools: Any = [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object"}}]
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        while True:
            reply = client.messages.create(model="claude-sonnet-4-6", max_tokens=100, tools=tools, messages=messages)
            uses = [block for block in reply.content if block.type == "tool_use"]
            if not uses:
                bb.finish(result="".join(b.text for b in reply.content if b.type == "text"))
                return
            messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                                       "content": weather(**use.input)} for use in uses]}]
    oai = fake.closes(openai.OpenAI(base_url=fake.openai_url, api_key=KEYS["openai"], http_client=bb.http_client(),
                                    max_retries=0))
    defs: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    chat: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    while True:
        message = oai.chat.completions.create(model="gpt-5.1", tools=defs, messages=chat).choices[0].message
        if not message.tool_calls:
            bb.finish(result=message.content)
            return
        chat.append(message.model_dump(exclude_none=True))
        chat += [{"role": "tool", "tool_call_id": call.id,
                  "content": weather(**json.loads(call.function.arguments))}
                 for call in message.tool_calls if call.type == "function"]
