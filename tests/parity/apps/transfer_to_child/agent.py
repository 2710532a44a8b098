"""A coordinator hands the conversation to one of its sub-agents."""

from google.adk.agents import LlmAgent

billing = LlmAgent(
    name="billing",
    model="gemini-2.5-flash",
    description="Handles invoices and payments.",
    instruction="Help with billing questions.",
)
support = LlmAgent(
    name="support",
    model="gemini-2.5-flash",
    description="Handles technical problems.",
    instruction="Help with technical problems.",
)

root_agent = LlmAgent(
    name="coordinator",
    model="gemini-2.5-flash",
    instruction="Route each request to billing or support.",
    sub_agents=[billing, support],
)
