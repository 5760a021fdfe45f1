"""The model behind the example agents (examples/): a reactive travel assistant served by the fake API.

It reads the tool results it is sent back, so a fork that changes a forecast changes what it books.
Shared by tests/test_examples.py and scripts/record_examples.py, which re-records the committed cassettes.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakeapi import Brain, anthropic_message, chat_completion, last_tool_results, turn_brain

DATE = "2026-12-12"


def _reply(provider: str, text: str | None, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    if provider == "anthropic":
        return anthropic_message(text=text, tool_uses=calls, model="claude-sonnet-5-5")
    return chat_completion(content=text, tool_calls=calls, model="gpt-4.1-mini")


def _parsed(results: list[str]) -> list[dict[str, Any]]:
    out = []
    for text in results:
        try:
            value = json.loads(text)
        except ValueError:
            value = {"raw": text}
        out.append(value if isinstance(value, dict) else {"raw": value})
    return out


def travel_brain(provider: str) -> Brain:
    """Weather for both cities (parallel calls), then book the drier one, then answer with the reference."""

    def check_weather(body: dict[str, Any]) -> dict[str, Any]:
        calls = [("get_weather", {"city": city, "date": DATE}) for city in ("Lisbon", "Porto")]
        return _reply(provider, "I'll check the forecast in both cities.", calls)

    def book(body: dict[str, Any]) -> dict[str, Any]:
        forecasts = _parsed(last_tool_results(body))
        dry = [f for f in forecasts if isinstance(f.get("rain_chance"), int | float)]
        if not dry:
            return _reply(provider, "I could not get a usable forecast, so I did not book anything.", [])
        best = min(dry, key=lambda f: f["rain_chance"])
        calls = [("book_hotel", {"city": best["city"], "date": DATE, "guest": "Alice"})]
        return _reply(provider, None, calls)

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        booking = _parsed(last_tool_results(body))[0]
        if not booking.get("confirmed"):
            return _reply(provider, "The booking failed; nothing is reserved for Alice.", [])
        text = (f"Booked: {booking['city']} on {booking['date']} for {booking['guest']} "
                f"(reference {booking['reference']}).")
        return _reply(provider, text, [])

    return turn_brain([check_weather, book, answer])
