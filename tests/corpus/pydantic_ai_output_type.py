"""pydantic-ai with a structured `output_type` on an Anthropic model: the agent ends by calling its output tool
(`final_result`), which pydantic-ai validates into the model.  A plain tool returns a list of dataclasses;
another, unannotated, a whole float (`1.0`) that pydantic-ai serialises for the model as `1.0`, so replay must
hand it back as a float."""

from dataclasses import dataclass

from anthropic import AsyncAnthropic
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

import blackbox

CORPUS = {"needs": ["pydantic_ai", "anthropic"]}


@dataclass
class Flight:
    number: str
    departs: str
    price: int


class Itinerary(BaseModel):
    flight_number: str
    summary: str


bb = blackbox.session()
client = AsyncAnthropic(http_client=bb.async_http_client())
model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client))
agent = Agent(model, output_type=Itinerary, system_prompt="Find the cheapest flight.")


@agent.tool_plain
@bb.tool("search_flights")
def search_flights(origin: str, destination: str) -> list[Flight]:
    """Search flights between two cities."""
    return [Flight("AF1234", "2026-12-12T09:00", 120), Flight("BA42", "2026-12-12T11:30", 95)]


@agent.tool_plain
@bb.tool("exchange_rate")
def exchange_rate(currency: str):
    """The exchange rate of a currency to euros."""
    return {"currency": currency, "rate": 1.0}


result = agent.run_sync("Find me a flight from London to Paris.")
print(result.output)
bb.finish(result=result.output.model_dump())
