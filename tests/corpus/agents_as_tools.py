"""The OpenAI Agents SDK's agents-as-tools pattern with a forced tool choice: an orchestrator that must call a
tool (`tool_choice="required"`) gets a translator agent as a tool (`agent.as_tool`), whose own function tool
returns an Enum; the orchestrator stops on its first tool's output (`tool_use_behavior`)."""

import asyncio
from enum import StrEnum

from agents import (
    Agent,
    ModelSettings,
    Runner,
    function_tool,
)

import blackbox
from tests.corpus._agents_sdk import on_blackbox

CORPUS = {"needs": ["agents"]}


class Language(StrEnum):
    FRENCH = "fr"
    SPANISH = "es"


bb = blackbox.session()
on_blackbox(bb)  # the SDK's default client on the session (tests/corpus/_agents_sdk.py)


@function_tool
@bb.tool("detect_language")
def detect_language(text: str) -> Language:
    """Detect the language a text should be translated into."""
    return Language.FRENCH


translator = Agent(
    name="translator",
    instructions="Translate the user's message, detecting the target language first.",
    model="gpt-5.1",
    tools=[detect_language],
)
orchestrator = Agent(
    name="orchestrator",
    instructions="You use your tools to translate.",
    model="gpt-5.1",
    tools=[translator.as_tool(tool_name="translate", tool_description="Translate the user's message.")],
    model_settings=ModelSettings(tool_choice="required"),
    tool_use_behavior="stop_on_first_tool",
)


async def main() -> None:
    result = await Runner.run(orchestrator, "Say 'good morning' in French.")
    print(result.final_output)
    bb.finish(result=result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
