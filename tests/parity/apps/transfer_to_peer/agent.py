"""A sub-agent hands the conversation to a sibling."""

from google.adk.agents import LlmAgent

sales = LlmAgent(
    name="sales",
    model="gemini-2.5-flash",
    description="Sells subscriptions.",
    instruction="Sell; send contract questions to legal.",
)
legal = LlmAgent(
    name="legal",
    model="gemini-2.5-flash",
    description="Answers contract questions.",
    instruction="Answer contract questions.",
)

root_agent = LlmAgent(
    name="router",
    model="gemini-2.5-flash",
    instruction="Route to sales or legal.",
    sub_agents=[sales, legal],
)
