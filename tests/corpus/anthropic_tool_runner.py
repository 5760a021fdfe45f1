"""The Anthropic SDK's tool runner, as its README shows it: `@beta_tool` functions (the schema read from the
signature and the docstring) and `client.beta.messages.tool_runner(...)`, iterated message by message.

anthropic 2.x runs the loop over a message thread: after the first turn each request sends only the new tool
results with `thread: {"type": "continue", ...}`.  The cassette holds the whole conversation the model had, so
replay and forks see the same history whether or not the SDK threaded it.
"""

import json

from anthropic import Anthropic, beta_tool

import blackbox

CORPUS = {"needs": ["anthropic"]}

bb = blackbox.session()
client = Anthropic(http_client=bb.http_client())


@beta_tool
@bb.tool("get_weather")
def get_weather(location: str, units: str = "celsius") -> str:
    """Lookup the weather for a given city.

    Args:
        location: The city and state, e.g. San Francisco, CA
        units: The unit of temperature, celsius or fahrenheit
    Returns:
        A JSON object with the location, the temperature and the condition.
    """
    return json.dumps({"location": location, "temperature": "21°C" if units == "celsius" else "70°F",
                       "condition": "Sunny"})


@beta_tool
@bb.tool("get_time")
def get_time(location: str) -> str:
    """Get the local time in a city.

    Args:
        location: The city, e.g. Paris
    """
    return f"It is 09:00 in {location}."


runner = client.beta.messages.tool_runner(
    max_tokens=1024,
    model="claude-sonnet-4-6",
    tools=[get_weather, get_time],
    system="Answer in one sentence.",
    messages=[{"role": "user", "content": "What is the weather and the time in Paris?"}],
)
answer = ""
for message in runner:
    answer = "".join(block.text for block in message.content if block.type == "text") or answer
print(answer)
bb.finish(result=answer)
