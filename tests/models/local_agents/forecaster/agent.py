"""Answers with its weather tool: the call is forced, the follow-up is text."""

from tests.models.local_agents.local import SETTINGS, force, local_model, ran

from cairn import Agent


def get_weather(city: str) -> dict[str, object]:
    """The current weather in a city."""
    ran("get_weather")
    return {"city": city, "sky": "sunny", "celsius": 21}


root_agent = Agent(
    name="forecaster",
    model=local_model(),
    instruction="You report the weather. Use the get_weather tool.",
    tools=[get_weather],
    generate_content_config=SETTINGS,
    before_model_callback=force("get_weather"),
)
