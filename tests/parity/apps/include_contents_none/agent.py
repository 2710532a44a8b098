"""include_contents='none': the second agent sees only its instruction and the current turn."""

from google.adk.agents import LlmAgent, SequentialAgent

collector = LlmAgent(
    name="collector",
    model="gemini-2.5-flash",
    instruction="Extract the user's city.",
    output_key="city",
)
stateless = LlmAgent(
    name="stateless_writer",
    model="gemini-2.5-flash",
    instruction="Write a tagline for {city}.",
    include_contents="none",
)

root_agent = SequentialAgent(name="tagline", sub_agents=[collector, stateless])
