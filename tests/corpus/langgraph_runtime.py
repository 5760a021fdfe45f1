"""LangChain's `create_agent` (LangGraph) on `ChatOpenAI`, with tools that read the graph's state and runtime:
`ToolRuntime` (state, context, tool-call id) and `InjectedState`, which LangChain fills in and the model never
sees; a tool returns a TypedDict."""

from dataclasses import dataclass
from typing import Annotated, TypedDict

from langchain.agents import create_agent
from langchain.tools import InjectedState, ToolRuntime, tool
from langchain_openai import ChatOpenAI

import blackbox

CORPUS = {"needs": ["langchain", "langchain_openai"]}


@dataclass
class Context:
    user_id: str


class Account(TypedDict):
    user_id: str
    plan: str
    seats: int


bb = blackbox.session()


@tool
@bb.tool("get_account")
def get_account(runtime: ToolRuntime[Context]) -> Account:
    """Look up the current user's account."""
    return {"user_id": runtime.context.user_id, "plan": "team", "seats": 5}


@tool
@bb.tool("count_messages")
def count_messages(topic: str, state: Annotated[dict, InjectedState]) -> str:
    """Count the conversation's messages about a topic."""
    return f"{len(state['messages'])} messages so far about {topic}"


llm = ChatOpenAI(model="gpt-5.1", http_client=bb.http_client(), http_async_client=bb.async_http_client())
agent = create_agent(llm, tools=[get_account, count_messages], system_prompt="You help with accounts.",
                     context_schema=Context)
state = agent.invoke({"messages": [{"role": "user", "content": "Which plan am I on?"}]},
                     context=Context(user_id="u-42"))
answer = state["messages"][-1].content
print(answer)
bb.finish(result=answer)
