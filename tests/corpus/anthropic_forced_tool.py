"""The Anthropic SDK's JSON-extraction idiom: tools for the work, then a forced `tool_choice` naming a
`record_summary` tool whose input schema is the structured answer; a tool returns a dataclass."""

import json
from dataclasses import asdict, dataclass

import anthropic

import blackbox

CORPUS = {"needs": ["anthropic"]}


@dataclass
class Article:
    title: str
    words: int


def fetch_article(url: str) -> Article:
    return Article(title="Rain in Lisbon", words=812)


TOOLS = [{"name": "fetch_article", "description": "Fetch an article by URL.",
          "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}}]
SUMMARY = {"name": "record_summary", "description": "Record the summary of an article.",
           "input_schema": {"type": "object", "properties": {"title": {"type": "string"},
                                                             "summary": {"type": "string"}},
                            "required": ["title", "summary"]}}

bb = blackbox.session()
client = anthropic.Anthropic(http_client=bb.http_client())
tools = bb.tools({"fetch_article": fetch_article})
messages: list = [{"role": "user", "content": "Summarise https://example.com/rain."}]
reply = client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, tools=TOOLS, messages=messages)
while reply.stop_reason == "tool_use":
    messages.append({"role": "assistant", "content": reply.content})
    results = [{"type": "tool_result", "tool_use_id": block.id,
                "content": json.dumps(asdict(tools[block.name](**block.input)))}
               for block in reply.content if block.type == "tool_use"]
    messages.append({"role": "user", "content": results})
    reply = client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, tools=TOOLS, messages=messages)
messages.append({"role": "assistant", "content": reply.content})
messages.append({"role": "user", "content": "Record the summary."})
summary = client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, tools=[*TOOLS, SUMMARY],
                                 tool_choice={"type": "tool", "name": "record_summary"}, messages=messages)
answer = next(block.input for block in summary.content if block.type == "tool_use")
print(answer)
bb.finish(result=answer)
