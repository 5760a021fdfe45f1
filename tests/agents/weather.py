"""A two-turn weather agent on each SDK, streamed or not, sync or async, for the streaming tests.

Every variant asks the same question with the same tools, runs the model's tool calls through the session's
wrapped tool (in parallel with `asyncio.gather` in the async variants), sends the results back, and returns
the final text; so a streamed and an unstreamed run of one provider make the same requests.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import blackbox
from tests.fakeapi import FakeAPI

QUESTION = "Weather in Paris and Rome?"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
PROVIDERS = ("anthropic", "openai", "responses")
STRICT = True  # the SDKs' strict response validation (which also refuses event types they do not know)


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


async def aget_weather(city: str) -> str:
    """The weather in a city (async)."""
    await asyncio.sleep(0)
    return f"sunny in {city}"


def client(provider: str, bb: blackbox.Session, fake: FakeAPI, *, asynchronous: bool = False) -> Any:
    import anthropic
    import openai

    http = bb.async_http_client() if asynchronous else bb.http_client()
    common: dict[str, Any] = {"api_key": "test-key", "http_client": http, "max_retries": 0,
                              "_strict_response_validation": STRICT}
    if provider == "anthropic":
        cls: Any = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
        return cls(base_url=fake.url, **common)
    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return cls(base_url=fake.openai_url, **common)


# -- one model call, returning (text, [(call id, name, arguments)], assistant history entries) ---------------


def _anthropic_kwargs(history: list[Any]) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-6", "max_tokens": 200, "messages": history,
            "tools": [{"name": "get_weather", "description": "weather", "input_schema": SCHEMA}]}


def _chat_kwargs(history: list[Any]) -> dict[str, Any]:
    return {"model": "gpt-5.1", "messages": history, "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "weather", "parameters": SCHEMA}}]}


def _responses_kwargs(history: list[Any]) -> dict[str, Any]:
    return {"model": "gpt-5.1", "instructions": "Be brief.", "input": history, "tools": [
        {"type": "function", "name": "get_weather", "description": "weather", "parameters": SCHEMA,
         "strict": False}]}


def _anthropic_turn(message: Any) -> tuple[str, list[tuple[str, str, Any]], list[Any]]:
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
    entry = {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]}
    return text, calls, [entry]


def _chat_turn(completion: Any) -> tuple[str, list[tuple[str, str, Any]], list[Any]]:
    message = completion.choices[0].message
    calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
    entry: dict[str, Any] = {"role": "assistant", "content": message.content}
    if calls:
        entry["tool_calls"] = [{"id": c.id, "type": "function", "function": {
            "name": c.function.name, "arguments": c.function.arguments}} for c in message.tool_calls]
    return message.content or "", calls, [entry]


def _responses_turn(response: Any) -> tuple[str, list[tuple[str, str, Any]], list[Any]]:
    calls = [(o.call_id, o.name, json.loads(o.arguments)) for o in response.output if o.type == "function_call"]
    return response.output_text, calls, [o.model_dump(exclude_none=True) for o in response.output]


def _results(provider: str, calls: list[tuple[str, str, Any]], values: list[str]) -> list[Any]:
    if provider == "anthropic":
        return [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": call[0], "content": value}
                                              for call, value in zip(calls, values, strict=True)]}]
    if provider == "openai":
        return [{"role": "tool", "tool_call_id": call[0], "content": value}
                for call, value in zip(calls, values, strict=True)]
    return [{"type": "function_call_output", "call_id": call[0], "output": value}
            for call, value in zip(calls, values, strict=True)]


def _call(provider: str, sdk: Any, history: list[Any], stream: bool) -> Any:
    if provider == "anthropic":
        if not stream:
            return _anthropic_turn(sdk.messages.create(**_anthropic_kwargs(history)))
        with sdk.messages.stream(**_anthropic_kwargs(history)) as s:
            "".join(s.text_stream)
            return _anthropic_turn(s.get_final_message())
    if provider == "openai":
        if not stream:
            return _chat_turn(sdk.chat.completions.create(**_chat_kwargs(history)))
        with sdk.chat.completions.stream(**_chat_kwargs(history)) as s:
            for _ in s:
                pass
            return _chat_turn(s.get_final_completion())
    if not stream:
        return _responses_turn(sdk.responses.create(**_responses_kwargs(history)))
    with sdk.responses.stream(**_responses_kwargs(history)) as s:
        for _ in s:
            pass
        return _responses_turn(s.get_final_response())


async def _acall(provider: str, sdk: Any, history: list[Any], stream: bool) -> Any:
    if provider == "anthropic":
        if not stream:
            return _anthropic_turn(await sdk.messages.create(**_anthropic_kwargs(history)))
        async with sdk.messages.stream(**_anthropic_kwargs(history)) as s:
            async for _ in s.text_stream:
                pass
            return _anthropic_turn(await s.get_final_message())
    if provider == "openai":
        if not stream:
            return _chat_turn(await sdk.chat.completions.create(**_chat_kwargs(history)))
        async with sdk.chat.completions.stream(**_chat_kwargs(history)) as s:
            async for _ in s:
                pass
            return _chat_turn(await s.get_final_completion())
    if not stream:
        return _responses_turn(await sdk.responses.create(**_responses_kwargs(history)))
    async with sdk.responses.stream(**_responses_kwargs(history)) as s:
        async for _ in s:
            pass
        return _responses_turn(await s.get_final_response())


def _question(provider: str) -> list[Any]:
    return [{"role": "user", "content": QUESTION}]


def run(provider: str, bb: blackbox.Session, fake: FakeAPI, *, stream: bool) -> str:
    """The sync agent: returns the final text."""
    tool = bb.tool("get_weather", get_weather)
    history = _question(provider)
    with client(provider, bb, fake) as sdk:  # closed, with its pool's sockets
        for _ in range(4):
            text, calls, entries = _call(provider, sdk, history, stream)
            if not calls:
                return str(text)
            history += entries
            history += _results(provider, calls, [tool(**arguments) for _, _, arguments in calls])
    raise AssertionError("the agent did not finish")


async def arun(provider: str, bb: blackbox.Session, fake: FakeAPI, *, stream: bool) -> str:
    """The async agent: async client, async wrapped tool, parallel tool calls with asyncio.gather."""
    tool = bb.tool("get_weather", aget_weather)
    history = _question(provider)
    async with client(provider, bb, fake, asynchronous=True) as sdk:  # closed in its event loop
        for _ in range(4):
            text, calls, entries = await _acall(provider, sdk, history, stream)
            if not calls:
                return str(text)
            history += entries
            values = await asyncio.gather(*(tool(**arguments) for _, _, arguments in calls))
            history += _results(provider, calls, list(values))
    raise AssertionError("the agent did not finish")
