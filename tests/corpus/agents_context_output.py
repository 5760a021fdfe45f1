"""The OpenAI Agents SDK with a typed run context and a typed final output, streamed.

A tool takes the run's `RunContextWrapper[UserInfo]` (the SDK passes it; the model never sees it) and the
agent's `output_type` asks the Responses API for JSON matching a pydantic model (`text.format`).
"""

import asyncio
from dataclasses import dataclass

from agents import (
    Agent,
    RunContextWrapper,
    Runner,
    function_tool,
)
from pydantic import BaseModel

import blackbox
from tests.corpus._agents_sdk import on_blackbox

CORPUS = {"needs": ["agents"]}


@dataclass
class UserInfo:
    name: str
    uid: int


class Greeting(BaseModel):
    greeting: str
    age: int


bb = blackbox.session()
on_blackbox(bb)  # the SDK's default client on the session (tests/corpus/_agents_sdk.py)


@function_tool
@bb.tool("fetch_user_age")
async def fetch_user_age(wrapper: RunContextWrapper[UserInfo]) -> str:
    """Fetch the age of the user. Call this function to get user's age information."""
    return f"The user {wrapper.context.name} is 47 years old"


agent = Agent[UserInfo](
    name="Assistant",
    model="gpt-5.1",
    tools=[fetch_user_age],
    output_type=Greeting,
)


async def main() -> None:
    user_info = UserInfo(name="John", uid=123)
    result = Runner.run_streamed(agent, input="Greet the user and tell them their age.", context=user_info)
    async for _event in result.stream_events():
        pass
    print(result.final_output)
    bb.finish(result=result.final_output.model_dump())


if __name__ == "__main__":
    asyncio.run(main())
