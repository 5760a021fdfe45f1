"""pydantic-ai's weather agent: dependencies, tools that take the `RunContext`, results as pydantic models.

`@agent.tool` reads the wrapped function's signature as it reads the function's: the `RunContext` parameter is
the framework's (passed through, never stored), `city` is the model's.
"""

import asyncio
from dataclasses import dataclass

from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import blackbox

CORPUS = {"needs": ["pydantic_ai"]}


@dataclass
class Deps:
    units: str
    home: str


class LatLng(BaseModel):
    lat: float
    lng: float


class Forecast(BaseModel):
    temperature: str
    description: str


bb = blackbox.session()
client = AsyncOpenAI(http_client=bb.async_http_client())
model = OpenAIChatModel("gpt-5.1", provider=OpenAIProvider(openai_client=client))
weather_agent = Agent(
    model,
    instructions="Be concise, reply with one sentence.",
    deps_type=Deps,
    retries=2,
)


@weather_agent.tool
@bb.tool("get_lat_lng")
async def get_lat_lng(ctx: RunContext[Deps], location_description: str) -> LatLng:
    """Get the latitude and longitude of a location."""
    return LatLng(lat=48.8566, lng=2.3522) if "paris" in location_description.lower() else LatLng(lat=51.5, lng=-0.12)


@weather_agent.tool
@bb.tool("get_weather")
async def get_weather(ctx: RunContext[Deps], lat: float, lng: float) -> Forecast:
    """Get the weather at a location."""
    degrees = 21 if ctx.deps.units == "metric" else 70
    return Forecast(temperature=f"{degrees} {'°C' if ctx.deps.units == 'metric' else '°F'}", description="Sunny")


async def main() -> None:
    deps = Deps(units="metric", home="London")
    result = await weather_agent.run("What is the weather like in Paris?", deps=deps)
    print(result.output)
    bb.finish(result=result.output)


if __name__ == "__main__":
    asyncio.run(main())
