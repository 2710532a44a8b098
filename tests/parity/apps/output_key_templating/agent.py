"""output_key in one agent, read as {key} by the next one's instruction."""

from google.adk.agents import LlmAgent, SequentialAgent

writer = LlmAgent(
    name="writer",
    model="gemini-2.5-flash",
    instruction="Write a two-line poem about the user's topic.",
    output_key="poem",
)

critic = LlmAgent(
    name="critic",
    model="gemini-2.5-flash",
    instruction="Give one sentence of feedback on this poem:\n{poem}",
    output_key="feedback",
)

root_agent = SequentialAgent(name="poem_pipeline", sub_agents=[writer, critic])
