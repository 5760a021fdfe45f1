"""Agent loops written the way users write them: call the model, run the tools it asks for, repeat.

Each loop takes an SDK client and a dict of (wrapped) tools and returns the final text. Tool results are sent
back as compact JSON (the sync ones: as `dumps` makes them). The async loops run a turn's tool calls
concurrently (`asyncio.gather`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

SYSTEM = "You are a travel assistant. Use the tools."
MODEL_A = "claude-sonnet-4-6"
MODEL_O = "gpt-5.1"

SCHEMAS: dict[str, dict[str, Any]] = {
    "get_weather": {
        "description": "Current weather for a city.",
        "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    "book_hotel": {
        "description": "Book a hotel.",
        "schema": {"type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
                   "required": ["city", "nights"]},
    },
}


def get_weather(city: str) -> dict[str, Any]:
    return {"city": city, "temp_c": {"Paris": 18, "Oslo": 3, "Lisbon": 24}.get(city, 10), "sky": "clear"}


def book_hotel(city: str, nights: int) -> dict[str, Any]:
    return {"city": city, "nights": nights, "reference": f"BK-{city[:3].upper()}{nights}"}


async def aget_weather(city: str) -> dict[str, Any]:
    await asyncio.sleep(0.01 if city != "Paris" else 0.05)  # Paris finishes last: order must not depend on it
    return get_weather(city)


async def abook_hotel(city: str, nights: int) -> dict[str, Any]:
    return book_hotel(city, nights)


def result_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def anthropic_tools(names: list[str] | None = None) -> list[dict[str, Any]]:
    return [{"name": n, "description": SCHEMAS[n]["description"], "input_schema": SCHEMAS[n]["schema"]}
            for n in names or list(SCHEMAS)]


def openai_tools(names: list[str] | None = None) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "description": SCHEMAS[n]["description"],
                                              "parameters": SCHEMAS[n]["schema"]}}
            for n in names or list(SCHEMAS)]


# ---------------------------------------------------------------------------------------------------------
# Anthropic


def anthropic_agent(client: Any, tools: dict[str, Any], prompt: str, *, system: str = SYSTEM,
                    model: str = MODEL_A, tool_defs: list[dict[str, Any]] | None = None, max_tokens: int = 512,
                    max_turns: int = 8, dumps: Callable[[Any], str] = result_text) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(max_turns):
        reply = client.messages.create(model=model, max_tokens=max_tokens, system=system, messages=messages,
                                       tools=tool_defs if tool_defs is not None else anthropic_tools())
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in reply.content if b.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        results = []
        for use in uses:
            try:
                content, is_error = dumps(tools[use.name](**use.input)), False
            except Exception as exc:
                content, is_error = str(exc), True
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": content, "is_error": is_error})
        messages.append({"role": "user", "content": results})
    raise RuntimeError("too many turns")


async def async_anthropic_agent(client: Any, tools: dict[str, Any], prompt: str, *, system: str = SYSTEM,
                                model: str = MODEL_A, max_turns: int = 8) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(max_turns):
        reply = await client.messages.create(model=model, max_tokens=512, system=system, messages=messages,
                                             tools=anthropic_tools())
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in reply.content if b.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        outputs = await asyncio.gather(*(tools[u.name](**u.input) for u in uses))
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": result_text(out)}
                   for u, out in zip(uses, outputs, strict=True)]
        messages.append({"role": "user", "content": results})
    raise RuntimeError("too many turns")


# ---------------------------------------------------------------------------------------------------------
# OpenAI chat


def openai_agent(client: Any, tools: dict[str, Any], prompt: str, *, system: str = SYSTEM, model: str = MODEL_O,
                 max_turns: int = 8, tool_defs: list[dict[str, Any]] | None = None,
                 dumps: Callable[[Any], str] = result_text) -> str:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    for _ in range(max_turns):
        reply = client.chat.completions.create(model=model, messages=messages,
                                               tools=tool_defs if tool_defs is not None else openai_tools())
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or message.refusal or ""
        messages.append(message.model_dump(exclude_none=True, exclude={"annotations", "refusal"}))
        for call in message.tool_calls:
            out = tools[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": dumps(out)})
    raise RuntimeError("too many turns")


async def async_openai_agent(client: Any, tools: dict[str, Any], prompt: str, *, system: str = SYSTEM,
                             model: str = MODEL_O, max_turns: int = 8) -> str:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    for _ in range(max_turns):
        reply = await client.chat.completions.create(model=model, messages=messages, tools=openai_tools())
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True, exclude={"annotations", "refusal"}))
        calls = message.tool_calls
        outputs = await asyncio.gather(*(tools[c.function.name](**json.loads(c.function.arguments)) for c in calls))
        for call, out in zip(calls, outputs, strict=True):
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result_text(out)})
    raise RuntimeError("too many turns")
