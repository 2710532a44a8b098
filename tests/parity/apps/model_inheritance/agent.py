"""A sub-agent without its own model uses its parent's."""

from google.adk.agents import LlmAgent

helper = LlmAgent(
    name="helper",
    description="Helps with anything.",
    instruction="Help the user.",
)

root_agent = LlmAgent(
    name="boss",
    model="gemini-2.5-pro",
    instruction="Delegate everything to helper.",
    sub_agents=[helper],
)
