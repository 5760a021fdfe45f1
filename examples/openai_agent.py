"""A small tool-using agent on the OpenAI SDK (Chat Completions), recorded and replayed by Blackbox.

    blackbox replay examples/openai_agent.json -- python examples/openai_agent.py
"""

from __future__ import annotations

import json
import sys

import openai
from tools import PROMPT, SYSTEM, book_hotel, get_weather  # examples/ is on sys.path when run as a script

import blackbox

MODEL = "gpt-4.1-mini"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The forecast for a city on a date.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "date": {"type": "string", "format": "date"}},
                "required": ["city", "date"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_hotel",
            "description": "Book one hotel night for a guest.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "date": {"type": "string"}, "guest": {"type": "string"}},
                "required": ["city", "date", "guest"],
            },
        },
    },
]


def main() -> None:
    bb = blackbox.session()
    client = openai.OpenAI(http_client=bb.http_client())
    tools = bb.tools({"get_weather": get_weather, "book_hotel": book_hotel})
    messages: list[dict] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]
    for _ in range(8):
        response = client.chat.completions.create(model=MODEL, max_tokens=1024, tools=TOOLS, messages=messages)
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            print(message.content)
            bb.finish(result=message.content)
            return
        for call in message.tool_calls:
            value = tools[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(value)})
    bb.finish(error=RuntimeError("the agent did not finish in 8 turns"))


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:
        if not blackbox.is_blackbox_error(exc):
            raise
        # Blackbox stopped the run (a replay divergence, say); the launcher prints its report, once.
        sys.exit(1)
