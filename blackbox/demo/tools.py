"""The three fixture tools of the demo agent: deterministic, offline, the TypeScript Blackbox's exact outputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["FIXTURE_TOOLS", "UnknownToolError", "run_tool", "tool_definitions"]


class UnknownToolError(Exception):
    """The model asked for a tool the demo does not have (the error scenario)."""


def _fields(tool_input: Any) -> dict[str, Any]:
    return tool_input if isinstance(tool_input, dict) else {}


def _str(value: Any, fallback: str) -> str:
    return value if isinstance(value, str) else fallback


def search(tool_input: Any) -> dict[str, Any]:
    query = _str(_fields(tool_input).get("query"), "")
    return {
        "results": [
            {"title": f'Fixture result A for "{query}"', "snippet": "First deterministic result."},
            {"title": f'Fixture result B for "{query}"', "snippet": "Second deterministic result."},
        ]
    }


def calendar(tool_input: Any) -> dict[str, Any]:
    date = _str(_fields(tool_input).get("date"), "unknown")
    return {"date": date, "availableSlots": ["09:00", "14:00", "16:00"]}


def booking(tool_input: Any) -> dict[str, Any]:
    fields = _fields(tool_input)
    date = _str(fields.get("date"), "")
    time = _str(fields.get("time"), "")
    name = _str(fields.get("name"), "guest")
    # The reference derives from the input alone: every dash of the date goes, only the first colon.
    reference = f"BK-{date.replace('-', '')}-{time.replace(':', '', 1)}"
    return {"confirmed": True, "reference": reference, "name": name}


FIXTURE_TOOLS: dict[str, Callable[[Any], Any]] = {"search": search, "calendar": calendar, "booking": booking}


def tool_definitions() -> list[dict[str, str]]:
    """The `tools` of every demo model_input: the description is the name, as in the TypeScript Blackbox."""
    return [{"name": name, "description": name} for name in FIXTURE_TOOLS]


def run_tool(name: str, tool_input: Any) -> Any:
    tool = FIXTURE_TOOLS.get(name)
    if tool is None:
        known = ", ".join(f'"{n}"' for n in FIXTURE_TOOLS)
        raise UnknownToolError(f'Unknown fixture tool: "{name}". Known tools: {known}')
    return tool(tool_input)
