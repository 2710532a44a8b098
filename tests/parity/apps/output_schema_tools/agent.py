"""output_schema together with tools; the structured answer feeds the next agent's {key}."""

from google.adk.agents import LlmAgent, SequentialAgent
from pydantic import BaseModel


class Forecast(BaseModel):
    city: str
    temperature: int


def get_temperature(city: str) -> dict:
    """Returns the temperature in a city, in degrees Celsius."""
    return {"city": city, "temperature": 18}


forecaster = LlmAgent(
    name="forecaster",
    model="gemini-2.5-flash",
    instruction="Look up the temperature and answer in the schema.",
    tools=[get_temperature],
    output_schema=Forecast,
    output_key="forecast",
)
announcer = LlmAgent(
    name="announcer",
    model="gemini-2.5-flash",
    instruction="Announce this forecast in one sentence: {forecast}",
)

root_agent = SequentialAgent(name="forecast_pipeline", sub_agents=[forecaster, announcer])
