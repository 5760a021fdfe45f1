"""The openai SDK's Responses API with `responses.parse(text_format=...)` and a function tool, the loop by hand,
on the async client, streamed with `responses.stream(...)` for the final answer; a tool returns a dataclass."""

import asyncio
import json
from dataclasses import asdict, dataclass

from openai import AsyncOpenAI
from pydantic import BaseModel

import blackbox

CORPUS = {"needs": ["openai"]}


@dataclass
class Stock:
    sku: str
    count: int


class Report(BaseModel):
    sku: str
    in_stock: bool
    note: str


TOOLS = [{"type": "function", "name": "check_stock", "description": "How many items of a SKU are in stock.",
          "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"],
                         "additionalProperties": False}, "strict": True}]

bb = blackbox.session()


@bb.tool("check_stock")
async def check_stock(sku: str) -> Stock:
    return Stock(sku=sku, count=3)


async def main() -> None:
    client = AsyncOpenAI(http_client=bb.async_http_client())
    history: list = [{"role": "user", "content": "Is SKU-1 in stock?"}]
    response = await client.responses.parse(model="gpt-5.1", input=history, tools=TOOLS, text_format=Report)
    while any(item.type == "function_call" for item in response.output):
        for item in response.output:
            history.append(item)
            if item.type == "function_call":
                stock = await check_stock(**json.loads(item.arguments))
                history.append({"type": "function_call_output", "call_id": item.call_id,
                                "output": json.dumps(asdict(stock))})
        async with client.responses.stream(model="gpt-5.1", input=history, tools=TOOLS, text_format=Report) as s:
            response = await s.get_final_response()
    report = response.output_parsed
    print(report)
    await client.close()
    bb.finish(result=report.model_dump())


if __name__ == "__main__":
    asyncio.run(main())
