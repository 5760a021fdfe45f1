"""The OpenAI Agents SDK's tools example: a function tool that returns a pydantic model.

The SDK turns the model into text for the model with `str()`; replay hands the tool back a `Weather` (rebuilt
through the return annotation), so the model is told exactly what it was told when recorded.
"""

import asyncio
from typing import Annotated

from agents import Agent, Runner, function_tool
from pydantic import BaseModel, Field

import blackbox
from tests.corpus._agents_sdk import on_blackbox

CORPUS = {"needs": ["agents"]}


class Weather(BaseModel):
    city: str = Field(description="The city name")
    temperature_range: str = Field(description="The temperature range in Celsius")
    conditions: str = Field(description="The weather conditions")


bb = blackbox.session()
on_blackbox(bb)  # the SDK's default client on the session (tests/corpus/_agents_sdk.py)


@function_tool
@bb.tool("get_weather")
def get_weather(city: Annotated[str, "The city to get the weather for"]) -> Weather:
    """Get the current weather information for a specified city."""
    return Weather(city=city, temperature_range="14-20C", conditions="Sunny with wind.")


agent = Agent(
    name="Hello world",
    instructions="You are a helpful agent.",
    model="gpt-5.1",
    tools=[get_weather],
)


async def main() -> None:
    result = await Runner.run(agent, input="What's the weather in Tokyo?")
    print(result.final_output)
    bb.finish(result=result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
