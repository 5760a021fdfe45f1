"""google-genai's chat with a JSON response schema (a pydantic model, read back from `response.parsed`) and a
tool the SDK calls itself, streamed, on the async client."""

import asyncio

from google import genai
from google.genai import types
from pydantic import BaseModel

import blackbox

CORPUS = {"needs": ["google.genai"]}


class Recipe(BaseModel):
    name: str
    minutes: int


class Plan(BaseModel):
    dish: str
    steps: list[str]


bb = blackbox.session()


@bb.tool("find_recipe")
def find_recipe(ingredient: str) -> Recipe:
    """Find a recipe that uses an ingredient."""
    return Recipe(name=f"{ingredient} soup", minutes=25)  # automatic function calling takes pydantic models


async def main() -> None:
    options = bb.genai_http_options()
    client = genai.Client(http_options=options)
    chat = client.aio.chats.create(model="gemini-2.5-flash", config=types.GenerateContentConfig(
        tools=[find_recipe], response_mime_type="application/json", response_schema=Plan))
    text = ""
    async for chunk in await chat.send_message_stream("Plan a dinner with leeks."):
        text += chunk.text or ""
    plan = Plan.model_validate_json(text)
    print(plan)
    await options.httpx_async_client.aclose()
    bb.finish(result=plan.model_dump())


if __name__ == "__main__":
    asyncio.run(main())
