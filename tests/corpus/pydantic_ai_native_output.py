"""pydantic-ai on the OpenAI Responses API with `NativeOutput` (the API's own JSON-schema output), streamed with
`run_stream`; a tool returns an Enum."""

import asyncio
from enum import StrEnum

from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

import blackbox

CORPUS = {"needs": ["pydantic_ai"]}


class Sentiment(StrEnum):
    POSITIVE = "positive"
    NEGATIVE = "negative"


class Review(BaseModel):
    product: str
    sentiment: Sentiment
    summary: str


bb = blackbox.session()
model = OpenAIResponsesModel("gpt-5.1", provider=OpenAIProvider(openai_client=AsyncOpenAI(
    http_client=bb.async_http_client())))
agent = Agent(model, output_type=NativeOutput(Review), instructions="Summarise the review.")


@agent.tool_plain
@bb.tool("classify")
def classify(text: str) -> Sentiment:
    """Classify the sentiment of a text."""
    return Sentiment.POSITIVE if "love" in text or "example" in text else Sentiment.NEGATIVE


async def main() -> None:
    async with agent.run_stream("Review: I love this kettle, it boils in a minute.") as result:
        output = await result.get_output()
    print(output)
    bb.finish(result=output.model_dump(mode="json"))


if __name__ == "__main__":
    asyncio.run(main())
