"""pydantic-ai's agent delegation: a tool of the outer agent runs another agent (sharing its usage).

The delegating tool calls the model itself, so it is not wrapped: its model calls are recorded as they happen,
and the tool the inner agent uses is wrapped like any other.
"""

from openai import AsyncOpenAI
from pydantic_ai import Agent, RunContext
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import blackbox

CORPUS = {"needs": ["pydantic_ai"]}

bb = blackbox.session()
model = OpenAIChatModel("gpt-5.1", provider=OpenAIProvider(openai_client=AsyncOpenAI(
    http_client=bb.async_http_client())))
joke_selection_agent = Agent(model, instructions="Use the `joke_factory` to generate some jokes, then choose the best.")
joke_generation_agent = Agent(model, output_type=list[str])


@joke_generation_agent.tool_plain
@bb.tool("joke_topics")
def joke_topics(count: int) -> tuple[str, ...]:
    """Topics to joke about."""
    return ("cats", "dogs", "tax returns")[:count]


@joke_selection_agent.tool
async def joke_factory(ctx: RunContext[None], count: int) -> list[str]:
    """Generate jokes."""
    r = await joke_generation_agent.run(f"Please generate {count} jokes.", usage=ctx.usage)
    return r.output


result = joke_selection_agent.run_sync("Tell me a joke.")
print(result.output)
bb.finish(result=result.output)
