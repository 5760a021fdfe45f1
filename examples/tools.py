"""The tools both example agents use: deterministic stand-ins for a weather API and a booking system."""

from __future__ import annotations

FORECASTS = {
    "lisbon": {"condition": "sunny", "high_c": 24, "rain_chance": 0.05},
    "porto": {"condition": "showers", "high_c": 18, "rain_chance": 0.7},
}


def get_weather(city: str, date: str) -> dict:
    """The forecast for a city on a date (ISO)."""
    forecast = FORECASTS.get(city.lower(), {"condition": "unknown", "high_c": None, "rain_chance": None})
    return {"city": city, "date": date, **forecast}


def book_hotel(city: str, date: str, guest: str) -> dict:
    """Book one night; the reference is derived from the inputs so runs are reproducible."""
    reference = f"HT-{city[:3].upper()}-{date.replace('-', '')}-{guest[:1].upper()}"
    return {"confirmed": True, "reference": reference, "city": city, "date": date, "guest": guest}


PROMPT = (
    "Alice wants a city break on 2026-12-12, in Lisbon or Porto. Check the weather in both and book a "
    "hotel for her in whichever city will be drier. Tell her the booking reference."
)
SYSTEM = "You are a travel assistant. Use the tools; never invent a forecast or a booking reference."
