"""LangChain's `create_agent` on Gemini (`ChatGoogleGenerativeAI`) with `response_format` set to a pydantic model:
the structured response comes from the provider's own JSON-schema output; an async tool returns a list of
dataclasses, run with `ainvoke`."""

import asyncio
from dataclasses import dataclass

from google import genai
from langchain.agents import create_agent
from langchain.agents.structured_output import ProviderStrategy
from langchain_core.tools import tool
from langchain_google_genai import ChatGoogleGenerativeAI
from pydantic import BaseModel

import blackbox

CORPUS = {"needs": ["langchain", "langchain_google_genai", "google.genai"]}


@dataclass
class Event:
    title: str
    day: str


class Schedule(BaseModel):
    first_event: str
    count: int


bb = blackbox.session()


@tool
@bb.tool("list_events")
async def list_events(day: str) -> list[Event]:
    """List the calendar events of a day (YYYY-MM-DD)."""
    return [Event("Standup", day), Event("Review", day)]


async def main() -> None:
    llm = ChatGoogleGenerativeAI(model="gemini-2.5-flash")
    options = bb.genai_http_options()
    llm.client = genai.Client(http_options=options)
    agent = create_agent(llm, tools=[list_events], response_format=ProviderStrategy(Schedule))
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "What is on my calendar today?"}]})
    schedule = result["structured_response"]
    print(schedule)
    await options.httpx_async_client.aclose()
    options.httpx_client.close()
    bb.finish(result=schedule.model_dump())


if __name__ == "__main__":
    asyncio.run(main())
