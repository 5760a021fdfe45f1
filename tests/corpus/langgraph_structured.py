"""LangChain's `create_agent` on `ChatAnthropic` with a structured response (`ToolStrategy`: the model answers
by calling a tool shaped like the schema), and a tool that takes the run's `RunnableConfig`, returning its
content and an artifact (`response_format="content_and_artifact"`)."""

import anthropic
from langchain.agents import create_agent
from langchain.agents.structured_output import ToolStrategy
from langchain_anthropic import ChatAnthropic
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import BaseModel, Field

import blackbox

CORPUS = {"needs": ["langchain", "langchain_anthropic"]}


class ContactInfo(BaseModel):
    """Contact information for a person."""

    name: str = Field(description="The name of the person")
    email: str = Field(description="The email address of the person")
    phone: str = Field(description="The phone number of the person")


bb = blackbox.session()


@tool(response_format="content_and_artifact")
@bb.tool("lookup_directory")
def lookup_directory(name: str, config: RunnableConfig) -> tuple[str, dict]:
    """Look a person up in the company directory."""
    team = config.get("configurable", {}).get("team", "sales")
    return f"{name} works in {team}", {"name": name, "email": "alice@example.com", "phone": "555-0100"}


llm = ChatAnthropic(model="claude-sonnet-4-6")
llm._client = anthropic.Anthropic(**llm._client_params, http_client=bb.http_client())
llm._async_client = anthropic.AsyncAnthropic(**llm._client_params, http_client=bb.async_http_client())
agent = create_agent(model=llm, tools=[lookup_directory], response_format=ToolStrategy(ContactInfo))
result = agent.invoke({"messages": [{"role": "user", "content": "Find Alice's contact details."}]},
                      config={"configurable": {"team": "support"}})
print(result["structured_response"])
bb.finish(result=result["structured_response"].model_dump())
