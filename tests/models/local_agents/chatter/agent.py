"""A plain text agent on the local model server."""

from tests.models.local_agents.local import SETTINGS, local_model

from cairn import Agent

root_agent = Agent(
    name="chatter",
    model=local_model(),
    instruction="You are a friendly assistant. Answer in one short sentence.",
    generate_content_config=SETTINGS,
)
