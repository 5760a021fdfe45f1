"""pydantic-ai on Gemini (`GoogleModel` over a google-genai client), a `RunContext` tool reading typed deps, and a
structured `output_type` (pydantic-ai's output tool: on Gemini it cannot be combined with function tools as a
`NativeOutput`)."""

from dataclasses import dataclass

from google import genai
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.providers.google import GoogleProvider

import blackbox

CORPUS = {"needs": ["pydantic_ai", "google.genai"]}


@dataclass
class Shop:
    currency: str


class Price(BaseModel):
    item: str
    amount: float
    currency: str


class Quote(BaseModel):
    item: str
    total: str


bb = blackbox.session()
model = GoogleModel("gemini-2.5-flash", provider=GoogleProvider(client=genai.Client(
    http_options=bb.genai_http_options())))
agent = Agent(model, deps_type=Shop, output_type=Quote, instructions="Quote prices.")


@agent.tool
@bb.tool("price_of")
def price_of(ctx: RunContext[Shop], item: str) -> Price:
    """The price of an item."""
    return Price(item=item, amount=3.5, currency=ctx.deps.currency)


result = agent.run_sync("How much are two coffees?", deps=Shop(currency="EUR"))
print(result.output)
bb.finish(result=result.output.model_dump())
