"""A tool agent that sets no function-calling mode: the model may call its tool or answer.

llama-cpp-python's chatml-function-calling format cannot stream such a request (it fails
after answering 200), so this agent works with streaming off only.
"""

from tests.models.local_agents.local import SETTINGS, local_model, ran

from cairn import Agent


def get_time(city: str) -> dict[str, object]:
    """The local time in a city."""
    ran("get_time")
    return {"city": city, "time": "12:00"}


root_agent = Agent(
    name="picker",
    model=local_model(),
    instruction="Answer the user. You may use the get_time tool.",
    tools=[get_time],
    generate_content_config=SETTINGS,
)
