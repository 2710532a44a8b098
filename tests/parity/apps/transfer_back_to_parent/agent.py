"""A sub-agent hands the conversation back to its parent."""

from google.adk.agents import LlmAgent

faq = LlmAgent(
    name="faq",
    model="gemini-2.5-flash",
    description="Answers frequently asked questions.",
    instruction="Answer FAQs; for anything else hand back to the front desk.",
)

root_agent = LlmAgent(
    name="front_desk",
    model="gemini-2.5-flash",
    instruction="Send FAQ questions to faq; handle the rest yourself.",
    sub_agents=[faq],
)
