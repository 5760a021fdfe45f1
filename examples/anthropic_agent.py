"""A small tool-using agent on the Anthropic SDK, recorded and replayed by Blackbox.

    blackbox replay examples/anthropic_agent.json -- python examples/anthropic_agent.py
"""

from __future__ import annotations

import json
import sys

import anthropic
from tools import PROMPT, SYSTEM, book_hotel, get_weather  # examples/ is on sys.path when run as a script

import blackbox

MODEL = "claude-sonnet-5-5"
TOOLS = [
    {
        "name": "get_weather",
        "description": "The forecast for a city on a date.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "date": {"type": "string", "format": "date"}},
            "required": ["city", "date"],
        },
    },
    {
        "name": "book_hotel",
        "description": "Book one hotel night for a guest.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "date": {"type": "string"}, "guest": {"type": "string"}},
            "required": ["city", "date", "guest"],
        },
    },
]


def main() -> None:
    bb = blackbox.session()
    client = anthropic.Anthropic(http_client=bb.http_client())
    tools = bb.tools({"get_weather": get_weather, "book_hotel": book_hotel})
    messages: list[dict] = [{"role": "user", "content": PROMPT}]
    for _ in range(8):
        response = client.messages.create(
            model=MODEL, max_tokens=1024, system=SYSTEM, tools=TOOLS, messages=messages
        )
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
        uses = [b for b in response.content if b.type == "tool_use"]
        if not uses:
            answer = "".join(b.text for b in response.content if b.type == "text")
            print(answer)
            bb.finish(result=answer)
            return
        results = [
            {"type": "tool_result", "tool_use_id": u.id, "content": json.dumps(tools[u.name](**u.input))}
            for u in uses
        ]
        messages.append({"role": "user", "content": results})
    bb.finish(error=RuntimeError("the agent did not finish in 8 turns"))


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:
        if not blackbox.is_blackbox_error(exc):
            raise
        # Blackbox stopped the run (a replay divergence, say); the launcher prints its report, once.
        sys.exit(1)
