"""The OpenAI Agents SDK's routing pattern: a triage agent hands the conversation off to a specialist, whose
tool returns a dataclass and another, unannotated, a dict holding a whole float (`180.0`, which the cassette's
JSON writes `180`: replay hands the tool's `180.0` back, so the SDK's `str()` tells the model the same).

A handoff is the SDK's own tool (`transfer_to_…`), not a wrapped one: the model's call and the SDK's answer
to it are in the recorded requests, and the specialist's wrapped tool is recorded like any other.
"""

import asyncio
from dataclasses import dataclass

from agents import Agent, Runner, function_tool

import blackbox
from tests.corpus._agents_sdk import on_blackbox

CORPUS = {"needs": ["agents"]}

bb = blackbox.session()
on_blackbox(bb)  # the SDK's default client on the session (tests/corpus/_agents_sdk.py)


@dataclass
class Booking:
    city: str
    nights: int
    reference: str


def book_hotel(city: str, nights: int) -> Booking:
    """Book a hotel in a city for a number of nights."""
    return Booking(city=city, nights=nights, reference=f"BK-{city[:3].upper()}{nights}")


def hotel_rate(city: str):
    """The nightly rate of our hotel in a city."""
    return {"city": city, "per_night": 180.0, "currency": "EUR"}


booking_agent = Agent(
    name="Booking agent",
    handoff_description="Books hotels.",
    instructions="You book hotels for the user.",
    model="gpt-5.1",
    tools=[function_tool(bb.tool("book_hotel", book_hotel)), function_tool(bb.tool("hotel_rate", hotel_rate))],
)
faq_agent = Agent(
    name="FAQ agent",
    handoff_description="Answers questions about the hotel chain.",
    instructions="You answer questions.",
    model="gpt-5.1",
)
triage_agent = Agent(
    name="Triage agent",
    instructions="Hand off to the right agent.",
    model="gpt-5.1",
    handoffs=[booking_agent, faq_agent],
)


async def main() -> None:
    result = await Runner.run(triage_agent, "Book me two nights in Paris, please.")
    print(f"{result.last_agent.name}: {result.final_output}")
    bb.finish(result=result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
