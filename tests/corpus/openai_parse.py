"""The openai SDK's structured outputs: `chat.completions.parse` with a pydantic `response_format` and strict
function tools from `pydantic_function_tool`, the tool loop written by hand; a tool returns a pydantic model,
sent back as its JSON."""

from openai import OpenAI, pydantic_function_tool
from pydantic import BaseModel

import blackbox

CORPUS = {"needs": ["openai"]}


class GetWeather(BaseModel):
    """Get the current weather in a city."""

    city: str


class Weather(BaseModel):
    city: str
    temp_c: float
    sky: str


class Answer(BaseModel):
    city: str
    advice: str


def get_weather(city: str) -> Weather:
    return Weather(city=city, temp_c=21.5, sky="clear")


bb = blackbox.session()
client = OpenAI(http_client=bb.http_client())
tools = bb.tools({"GetWeather": get_weather})
messages: list = [{"role": "system", "content": "Answer with advice for the day."},
                  {"role": "user", "content": "Should I take an umbrella in Paris?"}]
while True:
    completion = client.chat.completions.parse(model="gpt-5.1", messages=messages, response_format=Answer,
                                               tools=[pydantic_function_tool(GetWeather)])
    message = completion.choices[0].message
    if not message.tool_calls:
        break
    messages.append(message)
    for call in message.tool_calls:
        result = tools[call.function.name](**call.function.parsed_arguments.model_dump())
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result.model_dump_json()})
print(message.parsed)
bb.finish(result=message.parsed.model_dump())
