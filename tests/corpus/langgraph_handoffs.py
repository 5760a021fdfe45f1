"""LangGraph's multi-agent handoffs: two `create_agent` agents in one graph, each with a `transfer_to_…` tool
that returns a `Command` sending the conversation to the other agent (LangGraph's handoff idiom).

A handoff tool is LangGraph's control flow, not work the agent does: it is left unwrapped (its `Command` runs
again in replay, as the Agents SDK's handoffs do); the agents' own tools are wrapped.
`book_flight` is unannotated and returns a dict holding a whole float, which LangChain sends as `json.dumps`
writes it (`420.0`); replay and the forks hand the tool's float back.
"""

from typing import Annotated

import anthropic
from langchain.agents import create_agent
from langchain.tools import InjectedState, InjectedToolCallId, tool
from langchain_anthropic import ChatAnthropic
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command

import blackbox

CORPUS = {"needs": ["langchain", "langchain_anthropic", "langgraph"]}


def create_handoff_tool(*, agent_name: str, description: str | None = None):
    name = f"transfer_to_{agent_name}"
    description = description or f"Transfer to {agent_name}"

    @tool(name, description=description)
    def handoff_tool(state: Annotated[MessagesState, InjectedState],
                     tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        tool_message = {"role": "tool", "content": f"Successfully transferred to {agent_name}", "name": name,
                        "tool_call_id": tool_call_id}
        return Command(goto=agent_name, update={**state, "messages": [*state["messages"], tool_message]},
                       graph=Command.PARENT)

    return handoff_tool


bb = blackbox.session()


@tool
@bb.tool("book_hotel")
def book_hotel(hotel_name: str) -> str:
    """Book a hotel."""
    return f"Successfully booked a stay at {hotel_name}."


@tool
@bb.tool("book_flight")
def book_flight(from_airport: str, to_airport: str):
    """Book a flight."""
    return {"status": "booked", "from": from_airport, "to": to_airport, "price": 420.0}


# On ChatOpenAI the agents' names would go out as the messages' `name` field, which Blackbox refuses (docs/format.md)
llm = ChatAnthropic(model="claude-sonnet-4-6")
llm._client = anthropic.Anthropic(**llm._client_params, http_client=bb.http_client())
llm._async_client = anthropic.AsyncAnthropic(**llm._client_params, http_client=bb.async_http_client())
flight_assistant = create_agent(llm, tools=[book_flight, create_handoff_tool(agent_name="hotel_assistant")],
                                system_prompt="You are a flight booking assistant.", name="flight_assistant")
hotel_assistant = create_agent(llm, tools=[book_hotel, create_handoff_tool(agent_name="flight_assistant")],
                               system_prompt="You are a hotel booking assistant.", name="hotel_assistant")
multi_agent_graph = (StateGraph(MessagesState)
                     .add_node(flight_assistant)
                     .add_node(hotel_assistant)
                     .add_edge(START, "flight_assistant")
                     .compile())
state = multi_agent_graph.invoke({"messages": [{"role": "user", "content":
                                  "Book a flight from BOS to JFK and a stay at McKittrick Hotel."}]})
answer = state["messages"][-1].content
print(answer)
bb.finish(result=answer)
