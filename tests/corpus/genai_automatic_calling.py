"""google-genai's automatic function calling with typed parameters: the SDK builds each function's declaration
from its signature, turns the model's arguments into the annotated pydantic model before the call, and sends the
returned pydantic model (holding an Enum) back as the function's response."""

from enum import StrEnum

from google import genai
from google.genai import types
from pydantic import BaseModel

import blackbox

CORPUS = {"needs": ["google.genai"]}


class Unit(StrEnum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Location(BaseModel):
    city: str
    country: str


class Reading(BaseModel):
    city: str
    temperature: float
    unit: Unit


bb = blackbox.session()


@bb.tool("get_current_temperature")
def get_current_temperature(location: Location, unit: str) -> Reading:
    """Gets the current temperature for a location.

    Args:
        location: The city and country, e.g. Paris, France.
        unit: The temperature unit, celsius or fahrenheit.
    """
    if unit == "celsius":
        return Reading(city=location.city, temperature=21.5, unit=Unit.CELSIUS)
    return Reading(city=location.city, temperature=70.7, unit=Unit.FAHRENHEIT)


client = genai.Client(http_options=bb.genai_http_options())
config = types.GenerateContentConfig(tools=[get_current_temperature])
response = client.models.generate_content(
    model="gemini-2.5-flash",
    contents="What's the temperature in Paris right now?",
    config=config,
)
print(response.text)
bb.finish(result=response.text)
